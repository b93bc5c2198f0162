/**
 * The embedded graph engine: one graph in one object store, as a facade.
 *
 * `Graph` composes the parts (graph-parts.ts: the repository, the runs,
 * the tags, the snapshot reader, the publisher, the branches, the group
 * commit queue) and hands the orchestrators above it the ports they use
 * (`ports`, see ports.ts). Every change runs through the one publication
 * loop (publisher.ts). Nothing outside this folder reaches into the parts.
 */
import type { ProtectionRule } from '../model/branch-protection.js';
import { isBranchgraphError } from '../model/errors.js';
import type { Schema, StoredQuery } from '../model/schema.js';
import type { SchemaMigration } from '../model/schema-change.js';
import type { ProgressSink } from '../model/progress.js';
import type { ObjectStore } from '../store/object-store.js';
import type { BranchRecord, BranchTraits, DamagedBranch } from './branch-record.js';
import type { TagRecord } from './tags.js';
import { MergeRequests } from './merge-requests.js';
import { HookStore } from './hooks.js';
import { sourceHash, type EventPage, type GraphEvent } from './event-log.js';
import { WriterLease, type EventWriter } from './writer-lease.js';
import type { BranchPageQuery, ListedBranch } from './branches.js';
import { graphParts, type GraphOptions, type GraphParts } from './graph-parts.js';
import { IdempotencyRecords } from './idempotency.js';
import { planSchemaApply, type SchemaApplyResult } from './schema-apply.js';
import { planStoredQuery, type StoredQueryChange } from './stored-query.js';
import { collectGarbage, MAX_PUBLICATION_MS, type GcOptions, type GcReport } from './gc.js';
import type { WriteOp, WriteSummary } from './write-batch.js';
import { compactBranch, type CompactionResult, type CompactOptions } from './compaction.js';
import { planLoad } from './bulk-load.js';
import { firstNdjsonOp, GENERAL_PATH, readLoad, refuseNdjsonTableOrOp, type LoadSource } from './load-source.js';
import { ReplayableBody } from './replayable-body.js';
import { bulkTable, streamLoad } from './streaming-load.js';
import { DEFAULT_MAX_INGEST_BYTES } from './ndjson.js';
import { tagAt } from './tag-at.js';
import type { FoldRequest, GraphPorts, HeadOptions } from './ports.js';
import type { Ref, Snapshot } from './snapshot.js';
import type { ChangeOptions, ChangeResult } from './change.js';
import type { Manifest, ManifestRef } from './manifest.js';
import { objectsOf } from './manifest-objects.js';
import type { Remotes } from './remotes.js';
import { objectsInOrder, planTransfer, receiveObjects, sendTransfer, type TransferPlan, type TransferReport } from './transfer.js';

export type { GraphOptions } from './graph-parts.js';

export class Graph {
  /** The ports orchestrators (merges, the WAL, catch-up, compaction) are given instead of the graph. */
  readonly ports: GraphPorts;
  readonly actor: string;
  readonly clock: () => number;
  /** Idempotency records of keyed merges (see idempotency.ts). */
  readonly idempotency: IdempotencyRecords;
  /** Stored merge requests (see merge-requests.ts). */
  readonly requests: MergeRequests;
  /** Registered webhooks and checks, and their dead letters (see hooks.ts). */
  readonly hooks: HookStore;
  /** The store the graph lives in (a hosted graph's is under its prefix). */
  readonly store: ObjectStore;
  readonly #parts: GraphParts;
  readonly #opts: GraphOptions;

  #lease: WriterLease | undefined;

  private constructor(store: ObjectStore, opts: GraphOptions, shared?: { parts: GraphParts; hooks: HookStore }) {
    this.#parts = graphParts(store, opts, shared?.parts);
    this.store = store;
    this.#opts = opts;
    this.ports = this.#parts.ports;
    this.actor = this.ports.actor;
    this.clock = this.ports.clock;
    this.idempotency = new IdempotencyRecords(store, this.clock);
    this.requests = new MergeRequests(store, this.clock, this.#parts.repo.events);
    this.hooks = shared?.hooks.withStore(store) ?? new HookStore(store, { clock: this.clock, refreshMs: opts.hookRefreshMs });
  }

  /** Open the graph in `store`, creating `main` when the store is empty. */
  static async open(store: ObjectStore, opts: GraphOptions = {}): Promise<Graph> {
    const g = new Graph(store, opts);
    await g.#parts.repo.init(g.actor);
    return g;
  }

  /**
   * The graph in `store` as it is, creating nothing: a store with no graph stays empty until a
   * branch is made in it (the destination of a clone or a first push).
   */
  static attach(store: ObjectStore, opts: GraphOptions = {}): Graph {
    return new Graph(store, opts);
  }

  /** Where other copies of this graph are, and what their branches held when last fetched. */
  get remotes(): Remotes {
    return this.#parts.remotes;
  }

  /** What `destination` lacks of the manifests `wants` (graph/transfer.ts). */
  planTransfer(a: {
    wants: readonly ManifestRef[];
    haves: readonly ManifestRef[];
    holds: (ref: ManifestRef) => Promise<boolean>;
    signal?: AbortSignal | undefined;
  }): Promise<TransferPlan> {
    return planTransfer(this.#parts, a);
  }

  /** Send a plan's objects from this graph's store to `destination`, content first and manifests last. */
  sendTransfer(a: Parameters<typeof sendTransfer>[1]): Promise<TransferReport> {
    return sendTransfer(this.#parts, a);
  }

  /** A plan's objects read from this graph's store in write order, each with its level (a server's pack). */
  objectsInOrder(plan: TransferPlan, signal?: AbortSignal): AsyncGenerator<{ key: string; level: number; bytes: Uint8Array }> {
    return objectsInOrder(this.#parts, plan, { signal });
  }

  /** Write objects arriving in write order (a pack from a server) into this graph's store (transfer.ts). */
  receiveObjects(a: Parameters<typeof receiveObjects>[1]): Promise<TransferReport> {
    return receiveObjects(this.store, a);
  }

  /** Every object key `manifests` name: their parts, runs, schemas and commit index entries. */
  objectsNamedBy(manifests: readonly Manifest[], signal?: AbortSignal): Promise<Set<string>> {
    return objectsOf(this.#parts, manifests, signal);
  }

  /** Whether this graph's store holds the manifest `ref` (and so, by the transfer order, the content it names). */
  async holds(ref: ManifestRef, signal?: AbortSignal): Promise<boolean> {
    return this.#parts.repo.versions.holds(ref, signal);
  }

  /** This graph, with the same caches, seen through another store wrapper (per-request counting, abort). */
  withStore(store: ObjectStore): Graph {
    return new Graph(store, this.#opts, { parts: this.#parts, hooks: this.hooks });
  }

  /** Forget every cache, exactly as a fresh process would start. */
  dropCaches(): void {
    this.#parts.repo.clearCaches();
    this.#parts.runs.clear();
    this.#parts.search.clear();
  }

  /**
   * Once the best-effort writes already started (head hints, event confirmations and voids, batched
   * versions written at their own keys) have landed or failed.
   */
  async idle(): Promise<void> {
    await Promise.all([this.#parts.hints.settle(), this.#parts.repo.events.settle(), this.#parts.repo.versions.settle()]);
  }

  /**
   * Append events as the writer `id` under a lease this process renews (writer-lease.ts): a crash
   * then stalls feed readers for at most the lease's TTL, and a restart with the same id ends the
   * stall at once. Servers take one at start, named by their WAL shard.
   */
  async takeWriterLease(id: string): Promise<void> {
    if (this.#lease !== undefined) return;
    const lease = new WriterLease(this.#parts.store, id);
    await lease.start();
    this.#lease = lease;
    this.#parts.repo.events.useLease(lease);
  }

  /** This process's writer, once it took a lease (`takeWriterLease`). */
  get writer(): EventWriter | undefined {
    return this.#lease?.writer;
  }

  /** Release the store, once the graph is idle and its writer lease (if any) ended. */
  async close(): Promise<void> {
    await this.idle();
    if (this.#lease !== undefined) {
      this.#parts.repo.events.useLease(undefined);
      await this.#lease.end();
      this.#lease = undefined;
    }
    await this.#parts.store.close?.();
  }

  resolve(ref: Ref, signal?: AbortSignal): Promise<Snapshot> {
    return this.ports.heads.resolve(ref, signal);
  }

  branchHead(name: string, signal?: AbortSignal, opts: HeadOptions = {}): Promise<Snapshot> {
    return this.ports.heads.branchHead(name, signal, opts);
  }

  /** The snapshot of one manifest, exactly (a fetched head, a re-laid one too). */
  snapshotAt(ref: ManifestRef, signal?: AbortSignal): Promise<Snapshot> {
    return this.ports.heads.snapshotAt(ref, { signal });
  }

  commitSnapshot(commitId: string, signal?: AbortSignal): Promise<Snapshot> {
    return this.ports.heads.commitSnapshot(commitId, signal);
  }

  /** One page of live branches by name, after `after`; `next` names the last one when more follow. */
  listBranches(page: BranchPageQuery = {}): Promise<{ branches: ListedBranch[]; damaged: DamagedBranch[]; next: string | undefined }> {
    return this.#parts.branches.list(page);
  }

  /** Every live branch record `keep` accepts, in name order, read a page at a time; no head is read. */
  async branchRecords(keep: (rec: BranchRecord) => boolean, signal?: AbortSignal): Promise<BranchRecord[]> {
    const out: BranchRecord[] = [];
    let after: string | undefined;
    do {
      const page = await this.#parts.repo.records.page({ after, limit: 1000, keep, signal });
      out.push(...page.records);
      after = page.next;
    } while (after !== undefined);
    return out;
  }

  createBranch(
    name: string,
    from: Ref,
    opts: ChangeOptions & { traits?: BranchTraits } = {},
  ): Promise<{ record: BranchRecord; head: Snapshot }> {
    return this.#parts.branches.create(name, from, opts);
  }

  deleteBranch(name: string, opts: ChangeOptions = {}): Promise<BranchRecord> {
    return this.#parts.branches.delete(name, opts);
  }

  /** Delete an expired branch, if its record is still the one found expired (`changed` when it moved on). */
  expireBranch(expired: BranchRecord, opts: ChangeOptions = {}): Promise<BranchRecord | 'changed'> {
    return this.#parts.branches.expire(expired, opts);
  }

  /** Call `listener` with each event this process appends once its change has landed; returns the unsubscribe. */
  onEvent(listener: (event: GraphEvent) => void): () => void {
    return this.#parts.repo.events.onLanded(listener);
  }

  /** Whether an event cursor is past the log's end: it names no event the log holds. */
  eventCursorPastEnd(after: number, signal?: AbortSignal): Promise<boolean> {
    return this.#parts.repo.events.isPastEnd(after, signal);
  }

  /** One page of the event log after sequence `after`, in order, each change once (event-log.ts). */
  events(page: { after: number; limit: number; signal?: AbortSignal | undefined }): Promise<EventPage> {
    const { repo, store } = this.#parts;
    return repo.events.page({
      ...page,
      undecidedMs: MAX_PUBLICATION_MS,
      sourceSays: (e) => sourceSays({ repo, store, signal: page.signal }, e),
    });
  }

  /** Set (or, with null, remove) a branch's protection rule (model/branch-protection.ts). */
  protectBranch(name: string, rule: ProtectionRule | null, opts: ChangeOptions = {}): Promise<BranchRecord> {
    return this.#parts.branches.protect(name, rule, opts);
  }

  /** Move a branch to the commit `to` names, if its head is still `expectedHead`. */
  resetBranch(name: string, to: Ref, opts: ChangeOptions & { expectedHead: string }): Promise<{ record: BranchRecord; head: Snapshot }> {
    return this.#parts.branches.reset(name, to, opts);
  }

  /** Name the commit `from` resolves to (pending WAL rows folded first); tags never move. */
  createTag(name: string, from: Ref, opts: ChangeOptions = {}): Promise<TagRecord> {
    return tagAt({ ...this.#parts, ...this.ports }, { ...opts, name, from });
  }

  /** Every tag, and the tag objects that cannot be read. */
  listTags(signal?: AbortSignal): Promise<{ tags: TagRecord[]; damaged: { key: string; error: string }[] }> {
    return this.#parts.tags.all(signal);
  }

  tag(name: string, signal?: AbortSignal): Promise<TagRecord> {
    return this.#parts.tags.get(name, signal);
  }

  /** Take a tag as another copy of the graph holds it (a fetch), once its commit is here; tags never move. */
  async adoptTag(tag: TagRecord, signal?: AbortSignal): Promise<TagRecord> {
    const { format: _format, ...record } = tag;
    return this.#parts.tags.create(record, signal);
  }

  deleteTag(name: string, signal?: AbortSignal): Promise<void> {
    return this.#parts.tags.delete(name, signal);
  }

  /** Publish exactly a head's pending WAL rows on its branch (see Publisher.foldExactly). */
  foldExactly(request: FoldRequest): Promise<Snapshot> {
    return this.ports.publication.foldExactly(request);
  }

  /**
   * Apply a write batch to a branch, all or nothing. Batches arriving while
   * another publishes on the branch are grouped into one commit (see
   * group-commit.ts); each is still validated as if it ran alone.
   */
  /** Run `work` with this process's other publications on `branch` held until it ends (publication-lanes.ts `hold`). */
  holdingWriters<T>(branch: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.#parts.lanes.hold(branch, work, signal);
  }

  write(branch: string, ops: readonly WriteOp[], opts: ChangeOptions = {}): Promise<ChangeResult<WriteSummary>> {
    return this.#parts.groups.write(branch, ops, opts);
  }

  /** Apply schema text (or IR) to a branch as one commit. */
  applySchema(
    branch: string,
    schema: string | Schema,
    opts: ChangeOptions & { migration?: SchemaMigration } = {},
  ): Promise<ChangeResult<SchemaApplyResult>> {
    const { runs } = this.#parts;
    return this.ports.publication.commitChange(branch, opts, (head) =>
      planSchemaApply({ runs, head, schema, migration: opts.migration, signal: opts.signal }),
    );
  }

  /** Put (or, with null, delete) a stored query on a branch, as one commit (see stored-query.ts). */
  setStoredQuery(
    branch: string,
    change: { name: string; query: StoredQuery | null },
    opts: ChangeOptions = {},
  ): Promise<ChangeResult<StoredQueryChange>> {
    return this.ports.publication.commitChange(branch, opts, async (head) => planStoredQuery(head, change));
  }

  /**
   * Load NDJSON operations, or one table's rows as CSV or Parquet, as one all-or-nothing commit
   * (see load-source.ts and bulk-load.ts). A string is NDJSON. Rows of one table into a table
   * that holds none stream through the bulk path (streaming-load.ts), `chunkRows` at a time
   * (CHUNK_ROWS when absent), merged `fanIn` chunks at a time (MAX_FAN_IN): CSV and Parquet
   * whenever their table is empty, NDJSON while its lines insert (or upsert) into the empty table
   * its first line names, all with the first line's operation. An NDJSON line that does not
   * sends the load to the general path, which reads the body again from its start (a streamed
   * body is copied to local scratch as it is read: replayable-body.ts). A body that streams is
   * bounded by `maxBytes` (1 GiB by default) where it streams through, and by `maxHeldBytes`
   * (`maxBytes` by default) where it is read whole: the general path, and Parquet.
   */
  async load(
    branch: string,
    source: string | LoadSource,
    opts: ChangeOptions & { progress?: ProgressSink; maxBytes?: number; maxHeldBytes?: number; chunkRows?: number; fanIn?: number } = {},
  ): Promise<ChangeResult<WriteSummary>> {
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_INGEST_BYTES;
    const maxHeldBytes = Math.min(maxBytes, opts.maxHeldBytes ?? maxBytes);
    const given: LoadSource = typeof source === 'string' ? { format: 'ndjson', body: source } : source;
    const limits = { ...opts, maxBytes, maxHeldBytes };
    if (given.format !== 'ndjson') {
      const bulk = await this.#bulkLoad(branch, given, limits);
      return bulk === GENERAL_PATH ? this.#generalLoad(branch, given, limits) : bulk;
    }
    refuseNdjsonTableOrOp(given);
    const body = await ReplayableBody.of(given.body);
    try {
      const first = await firstNdjsonOp(body.replay(), maxBytes);
      if (first !== undefined && (first.op === 'insert' || first.op === 'upsert')) {
        const bulk = await this.#bulkLoad(branch, { format: 'ndjson', body: body.replay(), table: first.table, op: first.op }, limits);
        if (bulk !== GENERAL_PATH) return bulk;
      }
      return await this.#generalLoad(branch, { format: 'ndjson', body: body.replay() }, limits);
    } finally {
      await body.close();
    }
  }

  /** A load by the bulk path (streaming-load.ts), or GENERAL_PATH, having read nothing, when its table is not empty or not one the path takes, or, having published nothing, when an NDJSON line is not for it. */
  async #bulkLoad(
    branch: string,
    source: LoadSource,
    opts: ChangeOptions & { progress?: ProgressSink; maxBytes: number; maxHeldBytes: number; chunkRows?: number; fanIn?: number },
  ): Promise<ChangeResult<WriteSummary> | typeof GENERAL_PATH> {
    const head = await this.ports.heads.branchHead(branch, opts.signal);
    const type = bulkTable(head, source);
    if (type === undefined) return GENERAL_PATH;
    const { tables, publication, embedder } = this.ports;
    return streamLoad({
      ...{ tables, runs: this.#parts.runs, publication, clock: this.clock, embedder },
      ...{ head, type, branch, source, opts, chunkRows: opts.chunkRows, fanIn: opts.fanIn },
    });
  }

  /** A load by the general path (bulk-load.ts): the body read whole, planned as one write batch. */
  async #generalLoad(
    branch: string,
    source: LoadSource,
    opts: ChangeOptions & { progress?: ProgressSink; maxHeldBytes: number },
  ): Promise<ChangeResult<WriteSummary>> {
    const input = await readLoad(source, opts.maxHeldBytes);
    const plan = planLoad({
      tables: this.ports.tables,
      runs: this.#parts.runs,
      input,
      progress: opts.progress,
      signal: opts.signal,
      embedder: this.ports.embedder,
    });
    return this.ports.publication.commitChange(branch, opts, plan);
  }

  /**
   * Compact tables as one commit (see compaction.ts): `tiered` merges only
   * the newest runs the size-tiered policy says are due, `full` rewrites
   * each table as one run. Pending WAL rows are left pending; writers are
   * never blocked (a compaction that loses a race is planned again).
   */
  compact(branch: string, opts: ChangeOptions & CompactOptions = {}): Promise<ChangeResult<CompactionResult>> {
    return compactBranch(this.ports, branch, opts);
  }

  gc(opts: GcOptions = {}): Promise<GcReport> {
    return collectGarbage(this.#parts, opts);
  }
}

/** Whether an event's source landed, is not there (yet), or says another change (graph/event-log.ts). */
async function sourceSays(
  at: { repo: GraphParts['repo']; store: ObjectStore; signal?: AbortSignal | undefined },
  e: GraphEvent,
): Promise<'landed' | 'absent' | 'other'> {
  try {
    if (e.kind === 'commit') {
      const m = /^manifests\/(.+)\/(\d{12})\.json$/.exec(e.source.key);
      if (m === null) return 'other';
      const manifest = await at.repo.manifests.read({ lineage: m[1] as string, version: Number(m[2]) }, at.signal);
      return manifest.commit.id === e.source.commit ? 'landed' : 'other';
    }
    return sourceHash(await at.store.get(e.source.key, { signal: at.signal })) === e.source.hash ? 'landed' : 'other';
  } catch (x) {
    if (isBranchgraphError(x, 'not_found') || isBranchgraphError(x, 'object_not_found')) return 'absent';
    throw x;
  }
}
