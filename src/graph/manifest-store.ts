/**
 * Manifests and their parts: reading a published manifest with the part
 * trees (tables, ancestry) and run-list parts it names, each immutable and
 * read once per process, and writing the parts a new manifest needs before
 * it is published (head-versions.ts publishes it).
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { PartNode } from '../model/part-tree.js';
import { newId } from '../model/new-id.js';
import type { ObjectStore } from '../store/object-store.js';
import { keys } from './keys.js';
import type { Manifest, ManifestRef, TableEntry } from './manifest.js';
import {
  decodeManifest,
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

  read(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest> {
    return this.load(keys.manifest(ref.lineage, ref.version), signal).catch((e: unknown) => {
      if (isBranchgraphError(e, 'object_not_found')) {
        throw new BranchgraphError('not_found', `version ${ref.version} of lineage ${ref.lineage} does not exist`, {
          details: { ...ref },
        });
      }
      throw e;
    });
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

  /** A manifest through the cache; a missing one fails with the store's `object_not_found`. */
  load(key: string, signal?: AbortSignal): Promise<Manifest> {
    return this.caches.manifests.get(key, () => this.store.get(key, { signal }).then((bytes) => this.decode(bytes, key, signal)));
  }

  async decode(bytes: Uint8Array, key: string, signal?: AbortSignal): Promise<Manifest> {
    const m = await decodeManifest({
      bytes,
      key,
      load: (part) => this.readPart({ ...part, signal }),
      runs: this.runListReader(signal),
      o: this.trees,
    });
    if (m.schemaDoc !== undefined && !this.schemas.adopt(m.schema, m.schemaDoc))
      throw new BranchgraphError('corrupt_object', `${key} carries a schema that does not match its hash`, { details: { key } });
    return m;
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
