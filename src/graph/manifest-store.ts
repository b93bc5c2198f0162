/**
 * Manifests and their parts: reading a published manifest with the part
 * trees (tables, ancestry) and run-list parts it names, each immutable and
 * read once per process, and writing the parts a new manifest needs before
 * it is published (head-versions.ts publishes it).
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import type { PartNode } from '../model/part-tree.js';
import { newId } from '../model/new-id.js';
import type { ObjectStore } from '../store/object-store.js';
import { keys } from './keys.js';
import { MAX_BATCH_VERSIONS, type Manifest, type ManifestRef, type TableEntry } from './manifest.js';
import {
  decodeManifest,
  encodeBatch,
  decodePart,
  encodeManifest,
  decodeRunListPart,
  nodeFromBody,
  partsToWrite,
  type PartKind,
  type RunListReader,
  type TreeOptions,
} from './manifest-codec.js';
import type { RepositoryCaches } from './repository-caches.js';
import type { SchemaStore } from './schema-store.js';

/** A batch's first version's object, read only for the later versions' bodies as stored. */
const BatchLaterZ = z.object({ later: z.array(z.record(z.string(), z.unknown())) });

export class ManifestStore {
  /** Each manifest's stored bytes once encoded (see `encode`); dropped with the manifest. */
  private readonly encoded = new WeakMap<Manifest, Uint8Array>();

  constructor(
    private readonly store: ObjectStore,
    private readonly o: { caches: RepositoryCaches; trees: TreeOptions; clock: () => number; schemas: SchemaStore },
  ) {}

  private get caches(): RepositoryCaches {
    return this.o.caches;
  }

  private get trees(): TreeOptions {
    return this.o.trees;
  }

  private get schemas(): SchemaStore {
    return this.o.schemas;
  }

  /**
   * A published version. One published in a batch may not be at its own key yet (it is written
   * there after the batch landed): it is then read from the batch's first version's object.
   */
  read(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest> {
    return this.load(keys.manifest(ref.lineage, ref.version), signal).catch(async (e: unknown) => {
      if (!isBranchgraphError(e, 'object_not_found')) throw e;
      const batched = await this.fromBatch(ref, signal);
      if (batched !== undefined) return batched;
      throw new BranchgraphError('not_found', `version ${ref.version} of lineage ${ref.lineage} does not exist`, {
        details: { ...ref },
      });
    });
  }

  /**
   * The stored bytes of version `ref` (for a copy to another store): its object, or, for a version
   * of a batch not at its own key yet, its body in the batch's first version's object, which is the
   * object it is written as (manifest-codec.ts `encodeBatch`).
   */
  async storedBytes(ref: ManifestRef, signal?: AbortSignal): Promise<Uint8Array> {
    const key = keys.manifest(ref.lineage, ref.version);
    try {
      return await this.store.get(key, { signal });
    } catch (e) {
      if (!isBranchgraphError(e, 'object_not_found')) throw e;
    }
    const found = await this.batchHolding(ref, signal);
    const body = found === undefined ? undefined : decodeJson(BatchLaterZ, found.bytes, found.key).later[ref.version - found.first - 1];
    if (body === undefined)
      throw new BranchgraphError('not_found', `version ${ref.version} of lineage ${ref.lineage} does not exist`, { details: { ...ref } });
    return encodeJson(body);
  }

  /** `ref` read from the object of the batch that published it, if a batch did (see `batchHolding`). */
  private async fromBatch(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest | undefined> {
    const found = await this.batchHolding(ref, signal);
    if (found === undefined) return undefined;
    return (await this.decodeAll(found.bytes, found.key, signal)).find((v) => v.version === ref.version);
  }

  /**
   * The stored object of the batch that published `ref`, if a batch did: the nearest version below
   * it that is stored names its batch, whose first version's object holds every version of it. Read
   * from the store itself, not through the cache: a lookup of `ref`'s own key may be failing there.
   */
  private async batchHolding(
    ref: ManifestRef,
    signal?: AbortSignal,
  ): Promise<{ key: string; first: number; bytes: Uint8Array } | undefined> {
    const key = keys.manifest(ref.lineage, ref.version);
    const from = Math.max(0, ref.version - MAX_BATCH_VERSIONS);
    let below: string | undefined;
    const startAfter = from > 0 ? keys.manifest(ref.lineage, from) : undefined;
    for await (const o of this.store.list(keys.manifestPrefix(ref.lineage), {
      signal,
      ...(startAfter !== undefined ? { startAfter } : {}),
    })) {
      if (o.key >= key) break;
      below = o.key;
    }
    if (below === undefined) return undefined;
    const batch = (await this.load(below, signal)).batch;
    if (batch === undefined || batch.last < ref.version) return undefined;
    const first = keys.manifest(ref.lineage, batch.first);
    return { key: first, first: batch.first, bytes: await this.store.get(first, { signal }) };
  }

  /**
   * A published manifest whose stored bytes came from elsewhere (a branch hint carries its head's):
   * decoded and cached as if read at its key, unless it is not the version it says it is.
   */
  async adopt(ref: ManifestRef, bytes: Uint8Array, signal?: AbortSignal): Promise<Manifest> {
    const key = keys.manifest(ref.lineage, ref.version);
    const cached = this.caches.manifests.peek(key);
    if (cached !== undefined) return cached;
    // Checked before it is cached: a manifest given for the wrong key must not answer for that key.
    const m = await this.decode(bytes, key, signal);
    if (m.lineage !== ref.lineage || m.version !== ref.version)
      throw new BranchgraphError('corrupt_object', `${key} was given the manifest of another version`, { details: { key } });
    if (!this.caches.manifests.has(key)) this.caches.manifests.set(key, m);
    return m;
  }

  /**
   * A manifest's stored bytes, as publication writes them; encoded once per manifest, so the head
   * hint written after a publication carries the bytes published without encoding them again.
   */
  encode(m: Manifest): Uint8Array {
    let bytes = this.encoded.get(m);
    if (bytes === undefined) {
      bytes = encodeManifest(m, this.caches.runLists);
      this.encoded.set(m, bytes);
    }
    return bytes;
  }

  /** The stored bytes that publish a batch of consecutive versions at once: its first version's object. */
  encodeBatch(ms: readonly Manifest[]): Uint8Array {
    const { first, later } = encodeBatch(ms, this.caches.runLists);
    // Each later version's own bytes are the body the batch holds: written at its key, they read the same.
    for (const [i, bytes] of later.entries()) this.encoded.set(ms[i + 1] as Manifest, bytes);
    return first;
  }

  /** A manifest through the cache; a missing one fails with the store's `object_not_found`. */
  load(key: string, signal?: AbortSignal): Promise<Manifest> {
    return this.caches.manifests.get(key, () => this.store.get(key, { signal }).then((bytes) => this.decode(bytes, key, signal)));
  }

  /**
   * The manifest stored as `bytes` at `key`. The object of a batch's first version holds the batch's
   * later versions too: each is cached under its own key, as if read there.
   */
  async decode(bytes: Uint8Array, key: string, signal?: AbortSignal): Promise<Manifest> {
    return (await this.decodeAll(bytes, key, signal))[0] as Manifest;
  }

  /** Every version an object holds: the one at its key, then a batch's later ones (each cached under its own key). */
  private async decodeAll(bytes: Uint8Array, key: string, signal?: AbortSignal): Promise<Manifest[]> {
    const [m, ...later] = await decodeManifest({
      bytes,
      key,
      load: (part) => this.readPart({ ...part, signal }),
      runs: this.runListReader(signal),
      o: this.trees,
    });
    for (const v of [m as Manifest, ...later])
      if (v.schemaDoc !== undefined && !this.schemas.adopt(v.schema, v.schemaDoc))
        throw new BranchgraphError('corrupt_object', `${key} carries a schema that does not match its hash`, { details: { key } });
    for (const v of later) {
      const own = keys.manifest(v.lineage, v.version);
      if (!this.caches.manifests.has(own)) this.caches.manifests.set(own, v);
    }
    return [m as Manifest, ...later];
  }

  /** A part tree node with everything below it, read once per process (parts are immutable). */
  private async readPart(a: {
    kind: PartKind;
    id: string;
    depth: number;
    path: string;
    signal?: AbortSignal | undefined;
  }): Promise<PartNode<unknown>> {
    const { kind, id, depth, path, signal } = a;
    const key = keys.part(id);
    const node = await this.caches.parts.get(id, async () => {
      const bytes = await this.partBytes(key, signal);
      const o = kind === 'tables' ? this.trees.tables : this.trees.ancestry;
      const n = await nodeFromBody({
        kind,
        body: await decodePart({ kind, bytes, key, runs: this.runListReader(signal) }),
        depth,
        path,
        load: (part) => this.readPart({ ...part, signal }),
        o: o as never,
        where: key,
      });
      n.id = id;
      return n;
    });
    if (node.depth !== depth)
      throw new BranchgraphError('corrupt_object', `${key} is named at depth ${depth} but is a part at depth ${node.depth}`, {
        details: { key },
      });
    return node;
  }

  /** A part's bytes; a manifest naming a part that is not there is damaged, like one naming a missing run. */
  private async partBytes(key: string, signal?: AbortSignal): Promise<Uint8Array> {
    try {
      return await this.store.get(key, { signal });
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found'))
        throw new BranchgraphError('corrupt_object', `${key} is missing`, { details: { key } });
      throw e;
    }
  }

  /** Run-list parts, each read once per process (parts are immutable): every manifest naming one shares its run refs. */
  private runListReader(signal?: AbortSignal): RunListReader {
    return {
      load: (id) => {
        const key = keys.part(id);
        return this.caches.runParts.get(id, async () => decodeRunListPart(await this.partBytes(key, signal), key, id));
      },
      known: this.caches.runLists,
    };
  }

  /** The run-list part a read or published table entry names, if any (GC keeps it). */
  runListPartOf(entry: TableEntry): string | undefined {
    return this.caches.runLists.namedBy(entry);
  }

  /**
   * Write the part tree nodes and run-list parts `m` names that are not
   * stored yet (they must land before the manifest). Publication does this
   * itself; a publisher may call it first, beside its other writes, to save a
   * round trip. `parent`, the manifest `m` builds on, lends its run-list
   * parts to the lists that still start with their runs.
   */
  async writeParts(m: Manifest, signal?: AbortSignal, parent?: Manifest): Promise<void> {
    const o = { inlineRuns: this.trees.inlineRuns, runLists: this.caches.runLists, parent };
    await Promise.all(
      partsToWrite(m, () => newId(this.o.clock()), o).map(async (p) => {
        try {
          await this.store.putIfAbsent(p.key, p.bytes, { signal });
        } catch (e) {
          // Part ids are never reused: an existing part is this one, written by an attempt whose response was lost.
          if (!isBranchgraphError(e, 'object_exists')) throw e;
        }
        if ('node' in p) {
          p.node.stored = true;
          this.caches.parts.set(p.node.id as string, p.node);
        } else {
          p.runs.stored = true;
          this.caches.runParts.set(p.runs.id, p.runs);
        }
      }),
    );
  }
}
