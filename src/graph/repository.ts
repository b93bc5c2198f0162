/**
 * The repository: branches, heads, manifests, schemas and the publication
 * protocol, over the object store.
 *
 * Publication. Version N+1 of a lineage is a manifest written create-only at
 * `manifests/<lineage>/<N+1>`. Exactly one of several racing publishers wins;
 * the others learn `lost` and re-plan against the new head. A crash before
 * the PUT leaves only unreferenced objects (runs, commit index entries) for
 * garbage collection; nothing is half-published, so opening needs no repair.
 *
 * Heads. A lineage's head is found by listing its manifests forward from a
 * hint: the highest version this process has seen, or else the hint object
 * (rewritten every HINT_EVERY versions). The listing is one call whatever the
 * history depth, so head lookup stays O(1) store calls. A process that
 * knows a published version (it saw it, or a branch head hint names it)
 * asks for the next one by name instead (usually absent: the head is what
 * it knew) and lists only when it is there, because on a local directory a
 * listing reads every version's entry. A cold process first reads the
 * branch's head hint beside its records (see `primeFromHint`): it names
 * the head, the record and a schema too large to ride inline in manifests,
 * so the head is found in two sequential round trips.
 *
 * Branches. A branch name maps to a lineage through create-only branch
 * records `branches/<name>/<seq>`; the newest record wins. Deleting writes a
 * tombstone record; creating the name again starts a new lineage, so a
 * re-created branch never sees an old branch's versions.
 */
import { PromiseCache } from '../model/promise-cache.js';
import { z } from 'zod';
import { canonicalJson } from '../model/canonical.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { ProtectionRuleZ } from '../model/branch-protection.js';
import { EMPTY_SCHEMA, SchemaIR, schemaHashOf, type Schema } from '../model/schema.js';
import type { ObjectStore } from '../store/object-store.js';
import { BRANCH_NAME_RE, decodeBranchSegment, keys, seqOfBranchKey, versionOfManifestKey } from './keys.js';
import { ManifestRefZ, type Manifest, type ManifestRef, type TableEntry } from './manifest.js';
import {
  decodeManifest,
  decodePart,
  decodeRunListPart,
  encodeManifest,
  nodeFromBody,
  partsToWrite,
  treeOptions,
  type PartKind,
  type RunListReader,
  type TreeOptions,
} from './manifest-codec.js';
import { Ancestry } from './ancestry.js';
import { emptyTree, type PartNode } from '../model/part-tree.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { EventLog, type EventKind } from './event-log.js';
import { RunListParts, type RunListPart } from './run-list-parts.js';
import { newId } from '../model/new-id.js';

export const HINT_EVERY = 32;
/** How many versions past a known one are asked for by name before the lineage is listed. */
const MAX_NEXT_PROBES = 3;

export const BranchRecordZ = z.object({
  format: z.literal(1),
  name: z.string(),
  seq: z.number().int().min(1),
  lineage: z.string(),
  deleted: z.boolean(),
  /** Where the branch forked from; null for the root branch. */
  from: ManifestRefZ.nullable(),
  time: z.string(),
  actor: z.string(),
  /** The branch's protection rule, when it has one (model/branch-protection.ts); carried by every later record but a deletion's. */
  protection: ProtectionRuleZ.extend({ setBy: z.string(), time: z.string() }).optional(),
});
export type BranchRecord = z.infer<typeof BranchRecordZ>;

/** A branch whose newest record cannot be read (corrupt or of an unknown format). */
export interface DamagedBranch {
  name: string;
  key: string;
  error: string;
}

const HintZ = z.object({ version: z.number().int().min(0) });
/** Where a branch's head was last published, with a copy of its record; see `primeFromHint`. */
const BranchHintZ = z.object({ record: BranchRecordZ, head: ManifestRefZ, schema: z.string().optional() });
const CommitIndexZ = z.object({ lineage: z.string(), version: z.number().int().min(1) });

export function validateBranchName(name: string): void {
  const ok = BRANCH_NAME_RE.test(name) && !name.includes('//') && !name.includes('..') && !name.endsWith('/') && !name.endsWith('.');
  if (!ok) {
    throw new BranchgraphError(
      'invalid_input',
      `invalid branch name ${JSON.stringify(name)}: use letters, digits, '.', '_', '-' and '/' separators (no '..' or '//'), up to 200 characters`,
      {
        issues: [{ path: 'branch', message: 'invalid branch name' }],
      },
    );
  }
}

/** Caches a repository keeps; shared by repositories that view one graph through different store wrappers. */
const MANIFEST_CACHE_ENTRIES = 20_000;
const SCHEMA_CACHE_ENTRIES = 1_000;
const PART_CACHE_ENTRIES = 100_000;
/** Run refs held by cached run-list parts (a ref is a few hundred bytes). */
const RUN_PART_CACHE_REFS = 200_000;

class RepositoryCaches {
  // Immutable objects, bounded by count: a long history or many lineages must not grow a process without end.
  readonly manifests = new PromiseCache<string, Manifest>({ maxWeight: MANIFEST_CACHE_ENTRIES });
  readonly schemas = new PromiseCache<string, Schema>({ maxWeight: SCHEMA_CACHE_ENTRIES });
  readonly parts = new PromiseCache<string, PartNode<unknown>>({ maxWeight: PART_CACHE_ENTRIES });
  readonly runParts = new PromiseCache<string, RunListPart>({ maxWeight: RUN_PART_CACHE_REFS, weigh: (p) => p.refs.length });
  /** The layout of every run list this graph read or wrote (per graph, as the entries are: see run-list-parts.ts). */
  readonly runLists = new RunListParts();
  readonly knownVersion = new Map<string, number>();
  readonly branchRecords = new Map<string, BranchRecord>();
}

/** A branch record, which must name the branch and sequence number its key says. */
/** The branch a record key belongs to (`branches/<name>/<seq>.json`), or undefined for any other key. */
function recordName(key: string): string | undefined {
  const m = /^branches\/([^/]+)\/\d{8}\.json$/.exec(key);
  return m === null ? undefined : decodeBranchSegment(m[1] as string);
}

function readRecord(bytes: Uint8Array, key: string): BranchRecord {
  const rec = decodeJson(BranchRecordZ, bytes, key);
  if (key !== keys.branchRecord(rec.name, rec.seq)) {
    throw new BranchgraphError('corrupt_object', `${key} holds the record of ${JSON.stringify(rec.name)} #${rec.seq}`, {
      details: { key },
    });
  }
  return rec;
}

export class Repository {
  private readonly manifests: PromiseCache<string, Manifest>;
  private readonly schemas: PromiseCache<string, Schema>;
  private readonly parts: PromiseCache<string, PartNode<unknown>>;
  private readonly runParts: PromiseCache<string, RunListPart>;
  private readonly knownVersion: Map<string, number>;
  private readonly branchRecords: Map<string, BranchRecord>;
  /** Where every change to the graph is appended (event-log.ts). */
  readonly events: EventLog;
  /** Per lineage, a version a branch hint named, to be confirmed by the next listing. */
  private readonly hintedVersion = new Map<string, number>();

  readonly trees: TreeOptions;
  private readonly clock: () => number;
  private readonly caches: RepositoryCaches;

  constructor(
    readonly store: ObjectStore,
    opts: {
      /** How the trees this repository writes are shaped. */
      trees?: TreeOptions;
      /** Ids of new parts come from this clock: GC reads them as ages. */
      clock?: () => number;
      caches?: RepositoryCaches;
      events?: EventLog;
    } = {},
  ) {
    this.trees = opts.trees ?? treeOptions();
    this.clock = opts.clock ?? Date.now;
    this.events = opts.events ?? new EventLog(store, this.clock);
    const caches = opts.caches ?? new RepositoryCaches();
    this.caches = caches;
    this.manifests = caches.manifests;
    this.schemas = caches.schemas;
    this.parts = caches.parts;
    this.runParts = caches.runParts;
    this.knownVersion = caches.knownVersion;
    this.branchRecords = caches.branchRecords;
  }

  /** The same repository seen through another store (for example a per-request counting wrapper). */
  withStore(store: ObjectStore): Repository {
    return new Repository(store, { trees: this.trees, clock: this.clock, caches: this.caches, events: this.events.withStore(store) });
  }

  /** Drop every in-memory cache, as a restarted process would have none. */
  clearCaches(): void {
    this.events.forget();
    this.manifests.clear();
    this.schemas.clear();
    this.parts.clear();
    this.knownVersion.clear();
    this.branchRecords.clear();
  }

  // ---- branches -------------------------------------------------------

  /**
   * The newest record of a branch name (possibly a deletion), or undefined.
   * A known record is checked by asking for the next one; otherwise the
   * records after it are listed. `hinted` is a copy of some record of the
   * name (from the branch's head hint): records are create-only, so when
   * the listing shows its sequence number is the newest, it is that record
   * and needs no read.
   */
  async branchRecord(name: string, signal?: AbortSignal, hinted?: Promise<BranchRecord | undefined>): Promise<BranchRecord | undefined> {
    const cached = this.branchRecords.get(name);
    // Records are create-only, numbered without gaps and never deleted: a record newer than the one
    // this process knows exists exactly when the next number does. Asking for it by name costs one
    // small request, where a listing costs a directory read (and on S3 the same round trip).
    if (cached !== undefined && (await this.store.head(keys.branchRecord(name, cached.seq + 1), { signal })) === undefined) return cached;
    let latest = cached;
    const startAfter = cached === undefined ? undefined : keys.branchRecord(name, cached.seq);
    let newestKey: string | undefined;
    for await (const o of this.store.list(keys.branchPrefix(name), { signal, startAfter })) {
      if (seqOfBranchKey(o.key) !== undefined) newestKey = o.key;
    }
    if (newestKey !== undefined) {
      const copy = await hinted;
      latest =
        copy !== undefined && keys.branchRecord(copy.name, copy.seq) === newestKey
          ? copy
          : readRecord(await this.store.get(newestKey, { signal }), newestKey);
      this.branchRecords.set(name, latest);
    }
    return latest;
  }

  /** The branch record stored at `key` (checked to be the record its key names). */
  async readBranchRecord(key: string, signal?: AbortSignal): Promise<BranchRecord> {
    return readRecord(await this.store.get(key, { signal }), key);
  }

  /**
   * The branch's record as this process last saw it, when it also knows that lineage's latest
   * version (then a head hint would only cost a read).
   */
  knownRecord(name: string): BranchRecord | undefined {
    const rec = this.branchRecords.get(name);
    return rec !== undefined && this.knownVersion.has(rec.lineage) ? rec : undefined;
  }

  /**
   * The branch's head hint, read and put to use at once: the head it names
   * is published, so its lineage's listing can start from it and its
   * manifest (and schema) can be read while the branch record is listed.
   * Resolves to the hinted record copy (undefined when there is no usable
   * hint); everything it prefetches goes through the ordinary caches, so a
   * stale hint costs reads, never a wrong head.
   */
  primeFromHint(name: string, signal?: AbortSignal): Promise<BranchRecord | undefined> {
    const key = keys.branchHint(name);
    return this.store.get(key, { signal }).then(
      (bytes) => {
        let hint: z.infer<typeof BranchHintZ>;
        try {
          hint = decodeJson(BranchHintZ, bytes, key);
        } catch {
          // A damaged hint is no hint.
          return undefined;
        }
        if (key !== keys.branchHint(hint.record.name)) return undefined;
        if (hint.head.lineage === hint.record.lineage) this.hintedVersion.set(hint.head.lineage, hint.head.version);
        void this.readManifest(hint.head, signal).catch(() => undefined);
        if (hint.schema !== undefined && !this.schemas.has(hint.schema)) void this.readSchema(hint.schema, signal).catch(() => undefined);
        return hint.record;
      },
      () => undefined,
    );
  }

  /** Record where a branch's head is now, and its schema when manifests name it only by hash (best effort: a lost or stale hint only costs round trips). */
  writeBranchHint(record: BranchRecord, head: ManifestRef, schema: string | undefined): Promise<void> {
    return this.store.putOverwrite(keys.branchHint(record.name), encodeJson({ record, head, schema })).catch(() => undefined);
  }

  async liveBranch(name: string, signal?: AbortSignal, hinted?: Promise<BranchRecord | undefined>): Promise<BranchRecord> {
    validateBranchName(name);
    const rec = await this.branchRecord(name, signal, hinted);
    if (rec === undefined || rec.deleted)
      throw new BranchgraphError('not_found', `branch ${name} does not exist`, { details: { branch: name } });
    return rec;
  }

  /**
   * Every branch's newest record, deletions included, sorted by name, and
   * the branches whose newest record cannot be read. Damage stays local:
   * one corrupt record never hides the other branches. Keys under
   * `branches/` that no branch name encodes are not branches and are
   * passed over.
   */
  async allBranchRecords(signal?: AbortSignal): Promise<{
    records: BranchRecord[];
    damaged: DamagedBranch[];
    writtenAt: Map<string, number | undefined>;
    /** Each branch's records oldest first, with when the store wrote each (GC keeps what a recent reset replaced). */
    history: Map<string, { key: string; writtenAt: number | undefined }[]>;
  }> {
    const newest = new Map<string, string>();
    // When each newest record was written, by the store's clock (GC judges a deletion's age by it).
    const writtenAt = new Map<string, number | undefined>();
    const history = new Map<string, { key: string; writtenAt: number | undefined }[]>();
    for await (const o of this.store.list(keys.allBranches(), { signal })) {
      const name = recordName(o.key);
      if (name !== undefined) {
        newest.set(name, o.key);
        writtenAt.set(name, o.lastModified);
        const h = history.get(name) ?? [];
        h.push({ key: o.key, writtenAt: o.lastModified });
        history.set(name, h);
      }
    }
    const damaged: DamagedBranch[] = [];
    const records = (await this.readNewest([...newest], damaged, signal)).filter((r): r is BranchRecord => r !== undefined);
    const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    return { records: records.sort(byName), damaged: damaged.sort(byName), writtenAt, history };
  }

  /**
   * One page of live branch records in key order, after the branch named `after`: the listing
   * starts right after that name's records and stops once the page is full and one more live name
   * was seen, so a page costs its own names (and any deleted names between them), never the rest
   * of the graph. Deleted names are skipped; unreadable records are reported as damaged.
   */
  async branchRecordPage(
    after: string | undefined,
    limit: number,
    signal?: AbortSignal,
  ): Promise<{ records: BranchRecord[]; damaged: DamagedBranch[]; more: boolean }> {
    const records: BranchRecord[] = [];
    const damaged: DamagedBranch[] = [];
    // Names whose newest record is known, waiting to be read in one parallel batch.
    let batch: [string, string][] = [];
    let current: [string, string] | undefined;
    let more = false;
    const flush = async (): Promise<void> => {
      for (const r of await this.readNewest(batch, damaged, signal)) {
        if (r === undefined || r.deleted) continue;
        if (records.length < limit) records.push(r);
        else more = true;
      }
      batch = [];
    };
    const startAfter = after === undefined ? undefined : keys.branchRecord(after, 99_999_999);
    for await (const o of this.store.list(keys.allBranches(), { signal, startAfter, pageSize: Math.min(1000, 2 * limit + 2) })) {
      const name = recordName(o.key);
      if (name === undefined) continue;
      if (current !== undefined && current[0] !== name) {
        batch.push(current);
        if (batch.length >= limit + 1 - records.length) await flush();
        if (more) break;
      }
      current = [name, o.key];
    }
    // The listing ended (no break): the last name is still waiting.
    if (!more) {
      if (current !== undefined) batch.push(current);
      await flush();
    }
    return { records, damaged, more };
  }

  /**
   * The records at `[name, key]` pairs, read in parallel and cached; one that cannot be read is
   * undefined in its place and reported in `damaged`.
   */
  private async readNewest(
    pairs: readonly [string, string][],
    damaged: DamagedBranch[],
    signal?: AbortSignal,
  ): Promise<(BranchRecord | undefined)[]> {
    const read = await Promise.all(
      pairs.map(async ([name, key]) => {
        try {
          return readRecord(await this.store.get(key, { signal }), key);
        } catch (e) {
          if (!isBranchgraphError(e, 'corrupt_object')) throw e;
          damaged.push({ name, key, error: e.message });
          return undefined;
        }
      }),
    );
    for (const r of read) if (r !== undefined) this.branchRecords.set(r.name, r);
    return read;
  }

  /**
   * The newest record key of `name` and its sequence number when that
   * record cannot be read: an admin may still delete the branch (a new
   * deletion record above it), after which the name can be used again.
   */
  async damagedRecord(name: string, signal?: AbortSignal): Promise<{ key: string; seq: number } | undefined> {
    let newestKey: string | undefined;
    for await (const o of this.store.list(keys.branchPrefix(name), { signal })) if (seqOfBranchKey(o.key) !== undefined) newestKey = o.key;
    if (newestKey === undefined) return undefined;
    try {
      readRecord(await this.store.get(newestKey, { signal }), newestKey);
      return undefined;
    } catch (e) {
      if (!isBranchgraphError(e, 'corrupt_object')) throw e;
      return { key: newestKey, seq: seqOfBranchKey(newestKey) as number };
    }
  }

  /**
   * Write the next record for `name`, create-only. `expectSeq` is the seq of
   * the record the caller decided on (0 for none); a lost race is reported as
   * `lost` so the caller can re-read and decide again.
   */
  async writeBranchRecord(
    rec: Omit<BranchRecord, 'format' | 'seq'>,
    expectSeq: number,
    at: { event: EventKind; signal?: AbortSignal | undefined },
  ): Promise<BranchRecord | 'lost'> {
    const { signal } = at;
    const full: BranchRecord = { format: 1, seq: expectSeq + 1, ...rec };
    const key = keys.branchRecord(rec.name, full.seq);
    const bytes = encodeJson(full);
    try {
      const draft = { kind: at.event, actor: rec.actor, branch: rec.name };
      await this.events.around({ draft, key, bytes, signal }, () => this.store.putIfAbsent(key, bytes, { signal }));
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) return 'lost';
      throw e;
    }
    this.branchRecords.set(rec.name, full);
    return full;
  }

  // ---- heads and manifests -------------------------------------------

  /** Highest published version of a lineage (0 when it has none). */
  async latestVersion(lineage: string, signal?: AbortSignal): Promise<number> {
    const hinted = this.knownVersion.has(lineage) ? undefined : this.hintedVersion.get(lineage);
    this.hintedVersion.delete(lineage);
    // A version known to be published (this process saw it, or a branch hint names it and its
    // manifest, prefetched, proves it) is checked by asking for the next one by name: one GET whose
    // cost never grows with the lineage, where a directory listing reads every version's entry.
    const known = this.knownVersion.get(lineage) ?? hinted;
    if (known !== undefined && known > 0) {
      const [exists, moved] = await Promise.all([
        known === this.knownVersion.get(lineage) ? true : this.hasVersion(lineage, known, signal),
        this.hasVersion(lineage, known + 1, signal),
      ]);
      if (exists) {
        // A head a few versions on (a hint left one behind by a compaction or catch-up) is found by
        // name too; only a longer way is listed.
        let latest = known;
        let next = moved;
        for (let probes = 0; next && probes < MAX_NEXT_PROBES; probes++) {
          latest++;
          next = await this.hasVersion(lineage, latest + 1, signal);
        }
        if (next) latest = Math.max(latest + 1, await this.listFrom(lineage, keys.manifest(lineage, latest + 1), signal));
        this.knownVersion.set(lineage, latest);
        return latest;
      }
    }
    let start: number;
    try {
      start = decodeJson(HintZ, await this.store.get(keys.hint(lineage), { signal }), keys.hint(lineage)).version;
    } catch (e) {
      if (!isBranchgraphError(e, 'object_not_found') && !isBranchgraphError(e, 'corrupt_object')) throw e;
      start = 0;
    }
    const latest = Math.max(start, await this.listFrom(lineage, start > 0 ? keys.manifest(lineage, start) : undefined, signal));
    this.knownVersion.set(lineage, latest);
    return latest;
  }

  /** Whether version `version` of `lineage` is published; a present manifest is read and cached. */
  private hasVersion(lineage: string, version: number, signal?: AbortSignal): Promise<boolean> {
    // Asked on every read of a head and almost always answered no: the store's absence is taken as
    // it comes, with no error of our own made for it.
    return this.loadManifest(keys.manifest(lineage, version), signal).then(
      () => true,
      (e: unknown) => {
        if (isBranchgraphError(e, 'object_not_found')) return false;
        throw e;
      },
    );
  }

  /** The highest version listed after `startAfter` (0 when none). */
  private async listFrom(lineage: string, startAfter: string | undefined, signal?: AbortSignal): Promise<number> {
    let latest = 0;
    for await (const o of this.store.list(keys.manifestPrefix(lineage), { signal, startAfter })) {
      const v = versionOfManifestKey(o.key);
      if (v !== undefined && v > latest) latest = v;
    }
    return latest;
  }

  /** The manifest a branch currently shows: its lineage's latest, or its fork point. */
  async headRef(rec: BranchRecord, signal?: AbortSignal): Promise<ManifestRef> {
    const v = await this.latestVersion(rec.lineage, signal);
    if (v > 0) return { lineage: rec.lineage, version: v };
    if (rec.from === null) throw new BranchgraphError('corrupt_object', `branch ${rec.name} has no versions and no fork point`);
    return rec.from;
  }

  readManifest(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest> {
    return this.loadManifest(keys.manifest(ref.lineage, ref.version), signal).catch((e: unknown) => {
      if (isBranchgraphError(e, 'object_not_found')) {
        throw new BranchgraphError('not_found', `version ${ref.version} of lineage ${ref.lineage} does not exist`, {
          details: { ...ref },
        });
      }
      throw e;
    });
  }

  /** A manifest through the cache; a missing one fails with the store's `object_not_found`. */
  private loadManifest(key: string, signal?: AbortSignal): Promise<Manifest> {
    return this.manifests.get(key, () => this.store.get(key, { signal }).then((bytes) => this.decodeManifest(bytes, key, signal)));
  }

  private async decodeManifest(bytes: Uint8Array, key: string, signal?: AbortSignal): Promise<Manifest> {
    const m = await decodeManifest({
      bytes,
      key,
      load: (part) => this.readPart({ ...part, signal }),
      runs: this.runListReader(signal),
      o: this.trees,
    });
    if (m.schemaDoc !== undefined && !this.schemas.has(m.schema)) {
      const parsed = SchemaIR.safeParse(m.schemaDoc);
      if (!parsed.success || schemaHashOf(parsed.data) !== m.schema)
        throw new BranchgraphError('corrupt_object', `${key} carries a schema that does not match its hash`, { details: { key } });
      this.schemas.set(m.schema, parsed.data);
    }
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
    const node = await this.parts.get(id, async () => {
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
        return this.runParts.get(id, async () => decodeRunListPart(await this.partBytes(key, signal), key, id));
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
      partsToWrite(m, () => newId(this.clock()), o).map(async (p) => {
        try {
          await this.store.putIfAbsent(p.key, p.bytes, { signal });
        } catch (e) {
          // Part ids are never reused: an existing part is this one, written by an attempt whose response was lost.
          if (!isBranchgraphError(e, 'object_exists')) throw e;
        }
        if ('node' in p) {
          p.node.stored = true;
          this.parts.set(p.node.id as string, p.node);
        } else {
          p.runs.stored = true;
          this.runParts.set(p.runs.id, p.runs);
        }
      }),
    );
  }

  /**
   * Publish `m` as version `m.version` of `m.lineage`, create-only.
   * Returns `lost` when another publisher took that version first.
   */
  async publish(m: Manifest, signal?: AbortSignal, parent?: Manifest): Promise<'published' | 'lost'> {
    const key = keys.manifest(m.lineage, m.version);
    await this.writeParts(m, signal, parent);
    try {
      await this.store.putIfAbsent(key, encodeManifest(m, this.caches.runLists), { signal });
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) {
        this.knownVersion.set(m.lineage, Math.max(this.knownVersion.get(m.lineage) ?? 0, m.version));
        return 'lost';
      }
      throw e;
    }
    this.manifests.set(key, m);
    this.knownVersion.set(m.lineage, Math.max(this.knownVersion.get(m.lineage) ?? 0, m.version));
    if (m.version % HINT_EVERY === 0) {
      // Best effort: a stale or missing hint only makes the next cold lookup list more keys.
      await this.store.putOverwrite(keys.hint(m.lineage), encodeJson({ version: m.version })).catch(() => undefined);
    }
    return 'published';
  }

  /**
   * Whether `m` itself landed, read from the store (not the cache), for a
   * publish whose response was lost. False when unknown as well as when not.
   */
  async isPublished(m: Manifest, signal?: AbortSignal): Promise<boolean> {
    const key = keys.manifest(m.lineage, m.version);
    try {
      const stored = await this.decodeManifest(await this.store.get(key, { signal }), key, signal);
      // A re-laid version carries its commit's id: its layout id tells two re-layings apart.
      if (stored.commit.id !== m.commit.id || stored.layout?.id !== m.layout?.id) return false;
      this.manifests.set(key, stored);
      this.knownVersion.set(m.lineage, Math.max(this.knownVersion.get(m.lineage) ?? 0, m.version));
      return true;
    } catch {
      return false;
    }
  }

  // ---- commits and schemas -------------------------------------------

  async writeCommitIndex(commitId: string, ref: ManifestRef, signal?: AbortSignal): Promise<void> {
    await this.store.putIfAbsent(keys.commit(commitId), encodeJson(ref), { signal });
  }

  async commitRef(commitId: string, signal?: AbortSignal): Promise<ManifestRef> {
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(commitId)) {
      throw new BranchgraphError('invalid_input', `${JSON.stringify(commitId)} is not a commit id`, {
        issues: [{ path: 'commit', message: 'expected a 26-character ULID' }],
      });
    }
    try {
      return decodeJson(CommitIndexZ, await this.store.get(keys.commit(commitId), { signal }), keys.commit(commitId));
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found'))
        throw new BranchgraphError('not_found', `commit ${commitId} does not exist`, { details: { commit: commitId } });
      throw e;
    }
  }

  async writeSchema(schema: Schema, signal?: AbortSignal): Promise<string> {
    const text = canonicalJson(schema);
    const hash = schemaHashOf(schema);
    try {
      await this.store.putIfAbsent(keys.schema(hash), new TextEncoder().encode(text), { signal });
    } catch (e) {
      if (!isBranchgraphError(e, 'object_exists')) throw e;
    }
    this.schemas.set(hash, schema);
    return hash;
  }

  readSchema(hash: string, signal?: AbortSignal): Promise<Schema> {
    return this.schemas.get(hash, () =>
      this.store.get(keys.schema(hash), { signal }).then((bytes) => {
        const schema = decodeJson(SchemaIR, bytes, keys.schema(hash));
        // A schema's address is the hash of its content: that is its checksum.
        if (schemaHashOf(schema) !== hash)
          throw new BranchgraphError('corrupt_object', `${keys.schema(hash)} does not match its content address`, {
            details: { key: keys.schema(hash) },
          });
        return schema;
      }),
    );
  }

  // ---- bootstrap -------------------------------------------------------

  /** Create `main` with an empty initial commit, unless the graph exists. */
  async init(actor: string, signal?: AbortSignal): Promise<void> {
    for (;;) {
      const rec = await this.branchRecord('main', signal);
      if (rec !== undefined) return;
      const lineage = newId();
      const schema = await this.writeSchema(EMPTY_SCHEMA, signal);
      const commitId = newId();
      const time = new Date().toISOString();
      const m: Manifest = {
        lineage,
        version: 1,
        schema,
        schemaDoc: EMPTY_SCHEMA,
        tables: {},
        tableTree: emptyTree(),
        wal: {},
        commit: { id: commitId, parents: [], parentIds: [], branch: 'main', actor, message: 'initial commit', time, kind: 'init' },
        ancestry: Ancestry.fromTree(emptyTree(), { lineage, version: 1 }, this.trees.ancestry),
        generation: 1,
      };
      await this.writeCommitIndex(commitId, { lineage, version: 1 }, signal);
      await this.publish(m, signal);
      const res = await this.writeBranchRecord({ name: 'main', lineage, deleted: false, from: null, time, actor }, 0, {
        event: 'branch_created',
        signal,
      });
      if (res !== 'lost') return;
      // Another process initialised the graph first; its main wins.
    }
  }
}
