/**
 * The embedded graph engine: one graph in one object store.
 *
 * `Graph` resolves branches and commits to snapshots and runs every change
 * through one publication loop (`commitChange`): read the head, plan against
 * it, write scratch runs, publish the next manifest create-only, and on a
 * lost race discard the scratch and plan again, a bounded number of times.
 * Writes, schema changes, merges and catch-up are all plans for this loop.
 */
import { ulid } from 'ulid';
import { BranchgraphError, isBranchgraphError, throwIfAborted } from '../model/errors.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import { abortableSleep } from '../store/abortable-sleep.js';
import type { ObjectStore } from '../store/object-store.js';
import type { RunRef } from '../table/run.js';
import { EMPTY_TABLE, type TableVersion } from '../table/table-version.js';
import { refOf, sameRef, type Commit, type Manifest, type ManifestRef, type TableEntry } from './manifest.js';
import { Ancestry } from './ancestry.js';
import { treeOptions } from './manifest-codec.js';
import { withChanges } from '../model/part-tree.js';
import { Repository, validateBranchName, type BranchRecord, type DamagedBranch } from './repository.js';
import { schemaHashOf } from '../model/schema.js';
import { canonicalJson } from '../model/canonical.js';
import { findInputProblem } from '../model/text.js';
import { keys } from './keys.js';
import type { ManifestReader, TableReader, TableView } from './ports.js';
import { maintainIndexes } from './index-maintenance.js';
import { IndexReader, indexType, type IndexedVersion } from '../table/secondary-index.js';
import { RunStore } from './run-store.js';
import { planSchemaApply, type SchemaApplyResult } from './schema-apply.js';
import { collectGarbage, MAX_PUBLICATION_MS, type GcOptions, type GcReport } from './gc.js';
import { MAX_LOAD_ROWS, parseNdjson } from './ndjson.js';
import { planWrite, type WriteOp, type WriteSummary } from './write-batch.js';
import { GroupCommit } from './group-commit.js';
import { Tags, validateTagName, type TagRecord } from './tags.js';
import { compactBranch, type CompactionResult, type CompactOptions } from './compaction.js';
import type { SchemaMigration } from '../model/schema-change.js';
import type { ProgressSink } from '../model/progress.js';
import { NO_PENDING, readPending, viewTables, watermarksFor, type PendingWal } from '../pending/pending-wal.js';
import { foldedEntries, GenerationFoldedError, isPendingRun } from '../pending/generation.js';

export const MAX_PUBLISH_ATTEMPTS = 8;

export interface Snapshot {
  ref: ManifestRef;
  manifest: Manifest;
  schema: Schema;
  /** What readers see: the manifest's tables with pending WAL generations on top. */
  tables: Record<string, TableVersion>;
  /** Pending WAL generations (none for a commit snapshot: commits hold only folded rows). */
  pending: PendingWal;
  /** The branch the snapshot was resolved from, when it was. */
  branch?: BranchRecord;
  /** The graph clock when the snapshot was read: a publication planned on it must land soon after (see MAX_PUBLICATION_MS). */
  readAt?: number;
}

/** What to read at: a branch head, or a fixed commit. */
/** What a read names: a branch (its head, pending WAL rows included), a commit, or a tag (the commit it names). */
export type Ref = { branch: string } | { commit: string } | { tag: string };

export interface ChangeOptions {
  /** Who makes the change: an authenticated identity, or the graph's actor. */
  actor?: string;
  /** Who the change is for, as the client says; recorded beside the actor, as Git keeps author and committer. */
  author?: string;
  message?: string;
  signal?: AbortSignal;
  /** Refuse with `head_moved` unless the branch head is this commit. */
  expectedHead?: string;
}

/** How the publication loop reads heads: engine internals, not what a user asks for. */
export interface PublishOptions extends ChangeOptions {
  /** A head the caller just read, used for the first attempt instead of reading it again. */
  firstHead?: Snapshot;
  /** Plan against the manifest alone, without reading pending WAL generations (catch-up). */
  withoutPending?: boolean;
}

/** What a plan asks the publication loop to publish. */
export interface ChangePlan<T> {
  kind: Commit['kind'];
  /** Tables to replace; `null` removes a table. Others carry over. */
  tables?: Record<string, TableVersion | null>;
  schema?: Schema;
  /**
   * WAL watermarks to record. When absent, the publication folds every
   * pending generation the plan saw: they go into real runs under the
   * plan's own changes, so an older pending row never overrides them.
   */
  wal?: Record<string, number>;
  /** The generations this publication folds, per shard (see Manifest.walFolded). */
  walFolded?: Record<string, string[]>;
  /** Leave pending generations pending (catch-up folds its own prefix). */
  keepPending?: boolean;
  /** The merged source, recorded as the second parent. */
  secondParent?: Manifest;
  /** When the oldest snapshot the plan takes runs from was read, if earlier than the head's (a merge's source). */
  readAt?: number;
  /** Runs written for this attempt, deleted if it does not publish. */
  scratch: RunRef[];
  result: T;
  message?: string;
  /** The writes a group commit publishes together (see group-commit.ts). */
  group?: Commit['group'];
  /** The conflict resolutions a merge applied. */
  resolved?: Commit['resolved'];
  /** The Idempotency-Key a merge ran under. */
  idempotency?: Commit['idempotency'];
}

export interface GraphOptions {
  actor?: string;
  runCacheBytes?: number;
  /**
   * Wall-clock milliseconds, for the times written into ids (run and commit
   * ULIDs, which GC reads as ages) and the publication deadline. Tests and
   * the simulation move it by hand.
   */
  clock?: () => number;
  /**
   * Leaf size of the manifest part trees this graph writes (tables and
   * ancestry; see manifest-codec.ts). Smaller makes deeper trees; tests use
   * it to put small graphs in multi-part manifests. Any size reads back.
   */
  partBytes?: number;
}

/** How a snapshot treats its branch's pending WAL generations (see `snapshotAt`). */
export type PendingMode = 'view' | 'listed' | 'none';

/** What a plan returns: a change to publish, or the plan's result when there is nothing to publish. */
export type PlanResult<T> = ChangePlan<T> | { unchanged: T };

/** A change published as the branch's next version. */
export interface PublishedChange<T> {
  status: 'published';
  commit: Commit;
  manifest: Manifest;
  result: T;
  attempts: number;
}

/** A plan that found nothing to publish; the head it planned against is unchanged. */
export interface UnchangedChange<T> {
  status: 'unchanged';
  result: T;
  head: Snapshot;
}

export type ChangeResult<T> = PublishedChange<T> | UnchangedChange<T>;

/** The largest schema (canonical JSON bytes) a manifest carries inline; larger ones only by hash. */
export const MAX_INLINE_SCHEMA_BYTES = 4096;

function inlineSchema(schema: Schema): { schemaDoc?: Schema } {
  return canonicalJson(schema).length <= MAX_INLINE_SCHEMA_BYTES ? { schemaDoc: schema } : {};
}

export class Graph implements TableReader, ManifestReader {
  readonly repo: Repository;
  readonly runs: RunStore;
  readonly tags: Tags;
  readonly actor: string;
  readonly clock: () => number;

  private constructor(
    readonly store: ObjectStore,
    opts: GraphOptions,
    shared?: { repo: Repository; runs: RunStore; hintWrites: Set<Promise<void>> },
  ) {
    this.clock = opts.clock ?? Date.now;
    this.repo = shared?.repo.withStore(store) ?? new Repository(store, treeOptions({ tables: opts.partBytes, ancestry: opts.partBytes }), this.clock);
    this.tags = new Tags(store);
    this.runs = shared?.runs.withStore(store) ?? new RunStore(store, opts.runCacheBytes, undefined, this.clock);
    this.hintWrites = shared?.hintWrites ?? new Set();
    this.actor = opts.actor ?? 'branchgraph';
    this.opts = opts;
  }

  private readonly opts: GraphOptions;
  private readonly groups = new GroupCommit(this);

  /** This graph, with the same caches, seen through another store wrapper (per-request counting, abort). */
  withStore(store: ObjectStore): Graph {
    return new Graph(store, this.opts, { repo: this.repo, runs: this.runs, hintWrites: this.hintWrites });
  }

  /** Open the graph in `store`, creating `main` when the store is empty. */
  static async open(store: ObjectStore, opts: GraphOptions = {}): Promise<Graph> {
    const g = new Graph(store, opts);
    await g.repo.init(g.actor);
    return g;
  }

  /** Forget every cache, exactly as a fresh process would start. */
  dropCaches(): void {
    this.repo.clearCaches();
    this.runs.clear();
  }

  /** Release the store, once the best-effort writes already started (head hints) have landed or failed. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.hintWrites]);
    await this.store.close?.();
  }

  /** Best-effort writes in flight (by this graph and every view of it), so `close` can wait for them. */
  private readonly hintWrites: Set<Promise<void>>;

  private hintBranch(rec: BranchRecord, head: Manifest): void {
    const w = this.repo.writeBranchHint(rec, refOf(head), head.schemaDoc === undefined ? head.schema : undefined);
    this.hintWrites.add(w);
    void w.finally(() => this.hintWrites.delete(w));
  }

  // ---- snapshots --------------------------------------------------------

  /**
   * The snapshot at `ref`. `pending`: `view` overlays the branch's pending
   * WAL generations, `listed` only lists them (in order, rows not decoded:
   * for catch-up, which decodes each batch as it folds it; such a snapshot
   * is not read through), `none` ignores them.
   */
  async snapshotAt(ref: ManifestRef, signal?: AbortSignal, branch?: BranchRecord, pending: PendingMode = 'none'): Promise<Snapshot> {
    const readAt = this.clock();
    const manifest = await this.repo.readManifest(ref, signal);
    const [schema, pendingWal] = await Promise.all([
      this.repo.readSchema(manifest.schema, signal),
      pending !== 'none' && branch !== undefined ? readPending(this.store, this.runs, manifest, branch.lineage, signal, pending === 'listed') : NO_PENDING,
    ]);
    const tables = Object.fromEntries(Object.entries(viewTables(manifest, pendingWal)).filter(([t]) => findType(schema, t) !== undefined));
    return { ref, manifest, schema, tables, pending: pendingWal, readAt, ...(branch !== undefined ? { branch } : {}) };
  }

  async branchHead(name: string, signal?: AbortSignal, opts: { withoutPending?: boolean; pendingListedOnly?: boolean } = {}): Promise<Snapshot> {
    for (let attempt = 1; ; attempt++) {
      // A branch this process has not seen: read its head hint beside its records, so the head's
      // manifest is on its way by the time the record says which lineage to list.
      const hinted = attempt === 1 && !this.repo.knowsHead(name) ? this.repo.primeFromHint(name, signal) : undefined;
      const rec = await this.repo.liveBranch(name, signal, hinted);
      // The hint was read beside the records; wait for it even when the record was already known,
      // so the head is found from the version it names, not by listing the lineage.
      await hinted;
      try {
        const mode: PendingMode = opts.withoutPending === true ? 'none' : opts.pendingListedOnly === true ? 'listed' : 'view';
        return await this.snapshotAt(await this.repo.headRef(rec, signal), signal, rec, mode);
      } catch (e) {
        // A generation listed as pending was folded and deleted before we read it: the head moved on.
        if (!(e instanceof GenerationFoldedError) || attempt >= 4) throw e;
      }
    }
  }

  async commitSnapshot(commitId: string, signal?: AbortSignal): Promise<Snapshot> {
    const ref = await this.repo.commitRef(commitId, signal);
    const snap = await this.snapshotAt(ref, signal).catch((e: unknown) => {
      if (e instanceof BranchgraphError && e.code === 'not_found') throw new BranchgraphError('not_found', `commit ${commitId} does not exist`);
      throw e;
    });
    // The index is written before publication; a lost race leaves an entry for someone else's version.
    if (snap.manifest.commit.id !== commitId) throw new BranchgraphError('not_found', `commit ${commitId} does not exist`);
    return snap;
  }

  async resolve(ref: Ref, signal?: AbortSignal): Promise<Snapshot> {
    if ('branch' in ref) return this.branchHead(ref.branch, signal);
    if ('tag' in ref) return this.commitSnapshot((await this.tags.get(ref.tag, signal)).commit, signal);
    return this.commitSnapshot(ref.commit, signal);
  }

  /** Name the commit `from` resolves to; tags never move (see tags.ts). */
  async createTag(name: string, from: Ref, opts: ChangeOptions = {}): Promise<TagRecord> {
    validateTagName(name);
    // Tag metadata is stored text, as a commit's is: refused before anything is read or folded.
    const bad = findInputProblem({ actor: opts.actor, message: opts.message }, 'tag');
    if (bad !== undefined) throw new BranchgraphError('invalid_input', `${bad.path}: ${bad.message}`, { issues: [bad] });
    const snap = await this.resolve(from, opts.signal);
    // A tag names a commit, so a branch's pending WAL rows are folded into one first.
    const at = 'branch' in from ? await this.foldExactly(from.branch, snap, `fold pending WAL generations before tagging ${name}`, opts) : snap;
    return this.tags.create(
      { name, commit: at.manifest.commit.id, manifest: at.ref, actor: opts.actor ?? this.actor, time: new Date(this.clock()).toISOString(), message: opts.message ?? '' },
      opts.signal,
    );
  }

  /** A published manifest (the `ManifestReader` port). */
  readManifest(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest> {
    return this.repo.readManifest(ref, signal);
  }

  /** The manifest a branch record's head is at (the `ManifestReader` port). */
  headRef(rec: BranchRecord, signal?: AbortSignal): Promise<ManifestRef> {
    return this.repo.headRef(rec, signal);
  }

  /** A table's type, version, run loader and index lookups in a snapshot. */
  table(snap: Snapshot, name: string, signal?: AbortSignal): TableView {
    const type = findType(snap.schema, name);
    if (type === undefined) throw new BranchgraphError('not_found', `table ${name} does not exist`, { details: { table: name } });
    return { type, version: snap.tables[name] ?? EMPTY_TABLE, load: this.runs.loader(type, signal), indexes: this.indexes(snap, type, signal) };
  }

  /** Index lookups over a snapshot's table, read as `type` (a merge reads the target's tables as the merged schema's). */
  indexes(snap: Snapshot, type: TableType, signal?: AbortSignal): IndexReader {
    const published = snap.manifest.tables[type.name];
    return new IndexReader({
      type,
      version: snap.tables[type.name] ?? EMPTY_TABLE,
      load: this.runs.loader(type, signal),
      ...(published !== undefined ? { published } : {}),
      indexLoad: (spec) => this.runs.loader(indexType(type, spec), signal),
    });
  }

  // ---- branches ----------------------------------------------------------

  /** Live branches with their heads, and the branches whose record or head cannot be read. */
  /** One page of live branches by name, after `after` (see `Repository.branchRecordPage`); `next` names the last one when more follow. */
  async listBranches(
    page: { after?: string; limit?: number; signal?: AbortSignal } = {},
  ): Promise<{ branches: { record: BranchRecord; head: ManifestRef; commit: Commit }[]; damaged: DamagedBranch[]; next: string | undefined }> {
    const { signal } = page;
    const { records, damaged, more } = await this.repo.branchRecordPage(page.after, page.limit ?? Number.MAX_SAFE_INTEGER, signal);
    const branches: { record: BranchRecord; head: ManifestRef; commit: Commit }[] = [];
    await Promise.all(
      records.map(async (record) => {
        try {
          const head = await this.repo.headRef(record, signal);
          branches.push({ record, head, commit: (await this.repo.readManifest(head, signal)).commit });
        } catch (e) {
          if (!isBranchgraphError(e, 'corrupt_object') && !isBranchgraphError(e, 'not_found')) throw e;
          damaged.push({ name: record.name, key: keys.branchRecord(record.name, record.seq), error: (e as Error).message });
        }
      }),
    );
    const order = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
    const last = records[records.length - 1];
    return { branches: branches.sort((a, b) => order(a.record.name, b.record.name)), damaged: damaged.sort((a, b) => order(a.name, b.name)), next: more && last !== undefined ? last.name : undefined };
  }

  async createBranch(name: string, from: Ref, opts: ChangeOptions = {}): Promise<{ record: BranchRecord; head: Snapshot }> {
    validateBranchName(name);
    let base = await this.resolve(from, opts.signal);
    for (let attempt = 0; attempt < MAX_PUBLISH_ATTEMPTS; attempt++) {
      const existing = await this.repo.branchRecord(name, opts.signal);
      if (existing !== undefined && !existing.deleted) throw new BranchgraphError('branch_exists', `branch ${name} already exists`, { details: { branch: name } });
      // Pending generations belong to the source's lineage: fold them there so the new branch starts from what readers of the source saw.
      if ('branch' in from) base = await this.foldExactly(from.branch, base, `fold pending WAL generations before branching ${name}`, opts);
      const res = await this.repo.writeBranchRecord(
        { name, lineage: ulid(this.clock()), deleted: false, from: base.ref, time: new Date(this.clock()).toISOString(), actor: opts.actor ?? this.actor },
        existing?.seq ?? 0,
        opts.signal,
      );
      if (res !== 'lost') {
        this.hintBranch(res, base.manifest);
        return { record: res, head: { ...base, branch: res } };
      }
    }
    throw new BranchgraphError('publish_contention', `branch ${name} is being changed concurrently; retry`);
  }

  async deleteBranch(name: string, opts: ChangeOptions = {}): Promise<BranchRecord> {
    validateBranchName(name);
    if (name === 'main') throw new BranchgraphError('branch_protected', 'main cannot be deleted', { details: { branch: name } });
    for (let attempt = 0; attempt < MAX_PUBLISH_ATTEMPTS; attempt++) {
      // A branch whose newest record is unreadable is deleted above it; its lineage is unknown, so the
      // deletion names none, and GC treats that lineage's objects like any no live branch uses.
      const damaged = await this.repo.damagedRecord(name, opts.signal);
      const rec = damaged === undefined ? await this.repo.liveBranch(name, opts.signal) : { lineage: '', from: null, seq: damaged.seq };
      const res = await this.repo.writeBranchRecord(
        { name, lineage: rec.lineage, deleted: true, from: rec.from, time: new Date(this.clock()).toISOString(), actor: opts.actor ?? this.actor },
        rec.seq,
        opts.signal,
      );
      if (res !== 'lost') return res;
    }
    throw new BranchgraphError('publish_contention', `branch ${name} is being changed concurrently; retry`);
  }

  /**
   * Publish exactly `head`'s pending generations on its branch and return
   * the snapshot that holds them (no pending part), or `head` itself when
   * nothing is pending. Used when a merge or a new branch takes a branch's
   * rows elsewhere: the manifest recorded as the merged parent or fork point
   * must hold every row taken and no other, or a later merge base would be
   * wrong. If the branch moved since `head`, the caller's plan is stale:
   * `publish_contention`, which callers retry.
   */
  async foldExactly(branch: string, head: Snapshot, message: string, opts: ChangeOptions = {}): Promise<Snapshot> {
    if (head.pending.generations.length === 0) return head;
    const folded = await this.commitChange<null>(branch, { ...opts, firstHead: head, expectedHead: undefined }, async (h) => {
      if (!sameRef(h.ref, head.ref) || h.pending.generations.length !== head.pending.generations.length) {
        throw new BranchgraphError('publish_contention', `branch ${branch} changed while its rows were being taken; retry`, { details: { branch } });
      }
      return { kind: 'catchup', scratch: [], result: null, message };
    });
    if (folded.status === 'unchanged') return folded.head;
    return this.snapshotAt(refOf(folded.manifest), opts.signal, head.branch);
  }

  // ---- the publication loop ---------------------------------------------

  /**
   * Plan a change against the branch head and publish it as the next
   * version. On a lost race the scratch runs are deleted and the plan runs
   * again against the new head. A plan returning `undefined` publishes
   * nothing (the change is empty), and the head is returned as is.
   */
  async commitChange<T>(branch: string, opts: PublishOptions, plan: (head: Snapshot, attempt: number) => Promise<PlanResult<T>>): Promise<ChangeResult<T>> {
    // Commit metadata is stored text too: embedded callers get the same refusal transports give.
    const bad = findInputProblem({ actor: opts.actor, author: opts.author, message: opts.message }, 'commit');
    if (bad !== undefined) throw new BranchgraphError('invalid_input', `${bad.path}: ${bad.message}`, { issues: [bad] });
    for (let attempt = 1; attempt <= MAX_PUBLISH_ATTEMPTS; attempt++) {
      throwIfAborted(opts.signal);
      // Jittered backoff after a lost race, so racing publishers spread out instead of colliding again.
      if (attempt > 1) await abortableSleep(Math.random() * 2 ** attempt * 2, opts.signal);
      const head = attempt === 1 && opts.firstHead !== undefined ? opts.firstHead : await this.branchHead(branch, opts.signal, { withoutPending: opts.withoutPending === true });
      const rec = head.branch as BranchRecord;
      if (opts.expectedHead !== undefined && head.manifest.commit.id !== opts.expectedHead) {
        throw new BranchgraphError('head_moved', `branch ${branch} is at ${head.manifest.commit.id}, not ${opts.expectedHead}`, {
          details: { branch, expected: opts.expectedHead, actual: head.manifest.commit.id },
        });
      }
      const proposed = await plan(head, attempt);
      if ('unchanged' in proposed) return { status: 'unchanged', result: proposed.unchanged, head };
      // What is written grows as pending generations are folded; the plan given stays as it was.
      let planned: ChangePlan<T> = { ...proposed, wal: proposed.wal ?? watermarksFor(head.manifest, rec.lineage), scratch: [...proposed.scratch] };
      // Scratch may be deleted only when the manifest certainly did not land.
      let maybePublished = false;
      try {
        throwIfAborted(opts.signal);
        const fold = await this.foldPending(head, planned, opts.signal);
        planned = await maintainIndexes(this.runs, head, fold.plan, opts.signal);
        const folded = fold.deletable;
        const manifest = await this.buildManifest(head, rec, planned, opts);
        this.checkDeadline(branch, Math.min(head.readAt ?? Infinity, planned.readAt ?? Infinity));
        // Both must land before the manifest names them; neither depends on the other.
        await Promise.all([this.repo.writeCommitIndex(manifest.commit.id, refOf(manifest), opts.signal), this.repo.writeParts(manifest, opts.signal)]);
        let outcome: 'published' | 'lost';
        try {
          maybePublished = true;
          outcome = await this.repo.publish(manifest, opts.signal);
        } catch (e) {
          // A lost response: the manifest may have landed. Look before deciding anything. A store that
          // answers not_found to a publication says the graph itself is gone: whatever landed is nobody's.
          if (!isBranchgraphError(e, 'not_found') && (await this.repo.isPublished(manifest))) return this.published(manifest, rec, planned, attempt, folded);
          throw e;
        }
        if (outcome === 'published') return this.published(manifest, rec, planned, attempt, folded);
        maybePublished = false;
        await this.store.deleteMany([keys.commit(manifest.commit.id)]).catch(() => undefined);
      } finally {
        if (!maybePublished) await this.runs.delete(planned.scratch).catch(() => undefined);
      }
    }
    throw new BranchgraphError('publish_contention', `branch ${branch} moved ${MAX_PUBLISH_ATTEMPTS} times while publishing; retry`, {
      details: { branch, attempts: MAX_PUBLISH_ATTEMPTS },
    });
  }

  /**
   * GC deletes unreferenced objects older than its grace, which is never
   * below MIN_GC_GRACE_MS. A publication whose snapshots were read longer
   * than MAX_PUBLICATION_MS ago could name runs GC has since judged
   * garbage (its own scratch, or runs of a branch deleted meanwhile), so it
   * does not publish: the attempt's scratch is deleted and the caller gets
   * a retryable error. The margin between the two covers clock skew
   * between replicas.
   */
  private checkDeadline(branch: string, readAt: number): void {
    const age = this.clock() - readAt;
    if (age <= MAX_PUBLICATION_MS) return;
    throw new BranchgraphError(
      'publish_contention',
      `the change to ${branch} was planned ${Math.round(age / 1000)} s ago, longer than a publication may take (${MAX_PUBLICATION_MS / 1000} s); retry`,
      {
        details: { branch, ageMs: age },
      },
    );
  }

  private async published<T>(manifest: Manifest, rec: BranchRecord, plan: ChangePlan<T>, attempts: number, folded: string[]): Promise<PublishedChange<T>> {
    // Started now and left to finish: the hint is for other processes' next cold read, not for this change.
    // Background folds and compactions leave it be: they come in bursts, and a hint one version behind
    // costs a cold reader one round trip, where a write per batch costs the fold an fsync'd file each.
    if (manifest.commit.kind !== 'catchup' && manifest.commit.kind !== 'compact') this.hintBranch(rec, manifest);
    // Folded generations sit below the new watermarks; removing them is tidying (GC catches what this
    // misses). Their cached copies stay until evicted: a request in flight may still read them.
    if (folded.length > 0) await this.store.deleteMany(folded).catch(() => undefined);
    return { status: 'published', commit: manifest.commit, manifest, result: plan.result, attempts };
  }

  /**
   * Make the plan's tables hold every pending generation the plan saw, as
   * real runs beneath the plan's own runs, and advance the watermarks past
   * them. Each stretch of consecutive pending runs becomes one run.
   */
  private async foldPending<T>(head: Snapshot, plan: ChangePlan<T>, signal?: AbortSignal): Promise<{ plan: ChangePlan<T>; deletable: string[] }> {
    const foldHead = head.pending.generations.length > 0 && plan.keepPending !== true;
    // A merge may adopt a source's pending runs even when the target has none.
    const adopts = Object.values(plan.tables ?? {}).some((t) => t?.runs.some(isPendingRun));
    if (!foldHead && !adopts) return { plan, deletable: [] };
    const scratch = [...plan.scratch];
    const tables: Record<string, TableVersion | null> = { ...(foldHead ? head.tables : {}), ...plan.tables };
    await Promise.all(
      Object.entries(tables).map(async ([name, t]) => {
        if (t === null || !t.runs.some(isPendingRun)) return;
        const type = findType(plan.schema ?? head.schema, name);
        if (type === undefined) {
          tables[name] = null;
          return;
        }
        const runs: RunRef[] = [];
        let stretch: RunRef[] = [];
        const flush = async (): Promise<void> => {
          if (stretch.length === 0) return;
          const folded = await this.runs.writeNewest(type, stretch, signal);
          stretch = [];
          if (folded === undefined) return;
          scratch.push(folded.ref);
          runs.push(folded.ref);
        };
        for (const r of t.runs) {
          if (isPendingRun(r)) stretch.push(r);
          else {
            await flush();
            runs.push(r);
          }
        }
        await flush();
        tables[name] = { runs };
      }),
    );
    if (!foldHead) return { plan: { ...plan, tables, scratch }, deletable: [] };
    return {
      plan: { ...plan, tables, scratch, wal: { ...plan.wal, ...head.pending.seen }, walFolded: foldedEntries(head.pending.generations) },
      deletable: head.pending.generations.map((g) => g.key),
    };
  }

  private async buildManifest(head: Snapshot, rec: BranchRecord, plan: ChangePlan<unknown>, opts: ChangeOptions): Promise<Manifest> {
    const prev = head.manifest;
    const version = prev.lineage === rec.lineage ? prev.version + 1 : 1;
    const tables: Record<string, TableEntry> = { ...prev.tables };
    const changes = new Map<string, TableEntry | undefined>();
    for (const [name, t] of Object.entries(plan.tables ?? {})) {
      if (t?.runs.some((r) => r.source !== undefined)) throw new BranchgraphError('internal', `table ${name} would be published with rows that are not stored runs`);
      const indexes = (t as IndexedVersion | null)?.indexes;
      const entry = t === null ? undefined : { runs: t.runs, ...(indexes !== undefined ? { indexes } : {}) };
      changes.set(name, entry);
      if (entry === undefined) delete tables[name];
      else tables[name] = entry;
    }
    // Schemas are content-addressed: an unchanged schema needs no write.
    const schemaHash = plan.schema === undefined || schemaHashOf(plan.schema) === prev.schema ? prev.schema : await this.repo.writeSchema(plan.schema, opts.signal);
    const second = plan.secondParent;
    const parents = [refOf(prev), ...(second !== undefined ? [refOf(second)] : [])];
    if (second !== undefined && sameRef(parents[0] as ManifestRef, refOf(second))) parents.pop();
    return {
      lineage: rec.lineage,
      version,
      schema: schemaHash,
      // Small schemas ride along, saving a cold reader one round trip; large ones are read once by hash.
      ...inlineSchema(plan.schema ?? head.schema),
      tables: Object.fromEntries(Object.entries(tables).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
      tableTree: withChanges(prev.tableTree, changes, this.repo.trees.tables),
      wal: plan.wal ?? watermarksFor(prev, rec.lineage),
      ...(plan.walFolded !== undefined ? { walFolded: plan.walFolded } : {}),
      commit: {
        id: ulid(this.clock()),
        parents,
        parentIds: [prev.commit.id, ...(second !== undefined && parents.length > 1 ? [second.commit.id] : [])],
        branch: rec.name,
        actor: opts.actor ?? this.actor,
        ...(opts.author !== undefined && opts.author !== (opts.actor ?? this.actor) ? { author: opts.author } : {}),
        message: plan.message ?? opts.message ?? plan.kind,
        time: new Date(this.clock()).toISOString(),
        kind: plan.kind,
        ...(plan.group !== undefined ? { group: plan.group } : {}),
        ...(plan.resolved !== undefined ? { resolved: plan.resolved } : {}),
        ...(plan.idempotency !== undefined ? { idempotency: plan.idempotency } : {}),
      },
      ancestry: Ancestry.next({ lineage: rec.lineage, version }, prev.ancestry, second?.ancestry),
      generation: Math.max(prev.generation, second?.generation ?? 0) + 1,
    };
  }

  // ---- embedded conveniences ------------------------------------------------

  /**
   * Apply a write batch to a branch, all or nothing. Batches arriving while
   * another publishes on the branch are grouped into one commit (see
   * group-commit.ts); each is still validated as if it ran alone.
   */
  write(branch: string, ops: readonly WriteOp[], opts: ChangeOptions = {}): Promise<ChangeResult<WriteSummary>> {
    return this.groups.write(branch, ops, opts);
  }

  /** Apply schema text (or IR) to a branch as one commit. */
  applySchema(branch: string, schema: string | Schema, opts: ChangeOptions & { migration?: SchemaMigration } = {}): Promise<ChangeResult<SchemaApplyResult>> {
    return this.commitChange(branch, opts, (head) => planSchemaApply(this.runs, head, schema, opts.migration, opts.signal));
  }

  /**
   * Load NDJSON operations as one all-or-nothing commit. Progress counts the operations through
   * three phases: `parse` (lines), `validate` and `write`, each of all of them.
   */
  load(branch: string, ndjson: string, opts: ChangeOptions & { progress?: ProgressSink } = {}): Promise<ChangeResult<WriteSummary>> {
    // Lines, counted without splitting, so a watcher sees the size of the load before parsing ends.
    let lines = 0;
    for (let at = ndjson.indexOf('\n'); at >= 0; at = ndjson.indexOf('\n', at + 1)) lines++;
    opts.progress?.restart(lines + (ndjson.endsWith('\n') ? 0 : 1), 'parse');
    const ops = parseNdjson(ndjson);
    return this.commitChange(branch, opts, async (head) => {
      opts.progress?.restart(ops.length, 'validate');
      const plan = await planWrite(this, this.runs, head, ops, opts.signal, MAX_LOAD_ROWS, () => {
        opts.progress?.advance(ops.length);
        opts.progress?.restart(ops.length, 'write');
      });
      opts.progress?.advance(ops.length);
      return plan;
    });
  }

  /**
   * Compact tables as one commit (see compaction.ts): `tiered` merges only
   * the newest runs the size-tiered policy says are due, `full` rewrites
   * each table as one run. Pending WAL rows are left pending; writers are
   * never blocked (a compaction that loses a race is planned again).
   */
  compact(branch: string, opts: ChangeOptions & CompactOptions = {}): Promise<ChangeResult<CompactionResult>> {
    return compactBranch(this, branch, opts);
  }

  gc(opts: GcOptions = {}): Promise<GcReport> {
    return collectGarbage(this, opts);
  }
}
