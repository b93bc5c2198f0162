/**
 * Request-owned operations shared by every transport. REST routes, GraphQL
 * resolvers and the CLI call these and only shape what comes back, so the
 * same request gives the same outcome whichever way it arrives.
 *
 * The merge handler lives here, once. Every merge entering over HTTP (REST
 * or GraphQL) is capped at width one whatever the request or configuration
 * asks; embedded callers, the CLI and GQT may choose 1, 2 or 4. The caller's
 * abort signal (a disconnected client) is the merge's abort signal.
 */
import type { Logger } from 'pino';
import type { Graph, Ref, Snapshot } from '../graph/graph.js';
import type { Commit } from '../graph/manifest.js';
import type { DamagedBranch } from '../graph/repository.js';

// Types the transports show, so edges need no import from the layers below.
export type { DamagedBranch } from '../graph/repository.js';
export type { CatchUpReport } from '../wal/catch-up.js';
import { commitLog, diffSnapshots, edgesOf, getRow, liveRows, scanRows, type Filter, type TableDiff } from '../graph/reads.js';
import { checkExportSize, exportTable, type ExportFormat } from '../graph/table-export.js';
import { pageDiff, type DiffPage } from '../graph/diff-page.js';
import { mergeBaseSnapshot } from '../merge/merge-base-snapshot.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { formatSchema } from '../model/schema-parser.js';
import type { Schema } from '../model/schema.js';
import type { Row } from '../model/values.js';
import { Operations, type OperationDto, type OperationKind } from './operations.js';
import { mergeBranches, type MergeConflicts, type MergeMetrics, type MergeSuccess } from '../merge/merge.js';
import { IdempotencyRecords, idempotencyKeyHash, type IdempotencyRecord } from '../graph/idempotency.js';
import type { TagRecord } from '../graph/tags.js';
import { canonicalJson, contentHash } from '../model/canonical.js';
import { MERGE_PHASES } from '../model/phase-timer.js';
import { effectiveWidth, type Width } from '../merge/preparation-scheduler.js';
import type { GcReport } from '../graph/gc.js';
import type { WriteOp } from '../graph/write-batch.js';
import { ndjsonStream } from '../graph/ndjson.js';
import type { z } from 'zod';
import {
  ApplyCommitZ,
  BranchPageInputZ,
  CatchUpInputZ,
  CompactInputZ,
  DiffInputZ,
  GcInputZ,
  MergeInputZ,
  parseInput,
  ScanInputZ,
  SchemaApplyZ,
  WriteInputZ,
  type ApplyCommitInput,
  type CatchUpInput,
  type CompactInput,
  type MergeInput,
  type SchemaApplyInput,
  type WriteInput,
  type WriteOpInput,
} from './inputs.js';
import { decodePageCursor, encodePageCursor } from '../model/page-cursor.js';
import { WalWriter, type IngestReport } from '../wal/wal-writer.js';
import { CatchUpManager, DEFAULT_CATCHUP_SETTINGS, type CatchUpSettings, type LastCatchUp } from '../wal/catch-up-manager.js';
import type { CatchUpReport } from '../wal/catch-up.js';
import { walStatus, type WalStatus } from '../wal/wal-status.js';
import { ServiceMetrics } from './metrics.js';
import { Compactor, DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from './compactor.js';
import type { CompactionResult } from '../graph/compaction.js';

/** What carries a request; HTTP merges are capped at width one. */
export type Transport = 'http' | 'embedded' | 'cli' | 'gqt';

/** Who asks and over what: the transport (HTTP caps merges at width one), the actor, the abort signal, the request's logger. */
export interface RequestContext {
  transport: Transport;
  signal?: AbortSignal;
  log?: Logger;
  /** Who is calling: the token's identity over HTTP, the configured actor elsewhere. Recorded as each commit's actor. */
  actor?: string;
  /** The transport's request id, quoted in errors whose detail only the log holds. */
  requestId?: string;
  /** The id the client chose for this request's long operation (`Operation-Id`), to follow its progress. */
  operationId?: string;
}

/** A commit as clients see it; `parents` are commit ids, the first the branch's previous head. */
export interface CommitDto {
  id: string;
  parents: string[];
  branch: string;
  /** Who made the commit (the token's identity over HTTP). */
  actor: string;
  /** Who it was made for, as the client said; the actor when it said nothing. */
  author: string;
  message: string;
  time: string;
  kind: Commit['kind'];
  /** A merge's conflict resolutions, when it applied any. */
  resolved?: Commit['resolved'];
}

/** A branch as clients see it: its head commit, when it was created and the commit it was forked from. */
export interface BranchDto {
  name: string;
  head: CommitDto;
  createdAt: string;
  forkedFrom: string | null;
}

/** What a write batch did: its commit (null when it changed nothing) and counts per kind of change. */
export interface WriteResultDto {
  commit: CommitDto | null;
  inserted: number;
  updated: number;
  deleted: number;
  cascaded: number;
}

/** Which diff to compute (two-dot by default) and which page of it. */
export interface DiffOptions {
  mode?: 'two-dot' | 'three-dot';
  limit?: number;
  cursor?: string;
}

/** A diff page with the commits it compared: `from` and `to` as resolved, and for three-dot the merge base the changes start from. */
export type DiffResultDto = DiffPage & { mode: 'two-dot' | 'three-dot'; from: string; to: string; base: string | null };

/** The same Idempotency-Key with a different request is refused: the key names one request. */
function refuseOtherRequest(stored: string, fingerprint: string): void {
  if (stored === fingerprint) return;
  throw new BranchgraphError('invalid_input', 'this Idempotency-Key was used for a different merge request; use a new key for a new request', {
    issues: [{ path: 'idempotencyKey', message: 'already used for another request' }],
  });
}

function replayedRecord(record: IdempotencyRecord, key: { fingerprint: string }): MergeResultDto {
  refuseOtherRequest(record.fingerprint, key.fingerprint);
  return { ...(record.result as Extract<MergeResultDto, { status: 'success' }>), replayed: true };
}

/**
 * Input no edge validated (the embedded API, the CLI, GQT) goes through the same contract the HTTP
 * edge applies before anything else reads it, so a bad input gets the same code on every
 * transport; HTTP input was parsed with these very schemas already.
 */
function validated<T>(schema: z.ZodType<T>, input: unknown, ctx: RequestContext): T {
  return ctx.transport === 'http' ? (input as T) : parseInput(schema, input, 'input');
}

/** Branches listed by default on one page. */
export const DEFAULT_BRANCH_PAGE = 100;

/** Which page of branches to list. */
export interface BranchPageInput {
  limit?: number;
  cursor?: string | null;
}

/** One page of branches: the live ones, the damaged ones in its range, and the cursor of the next page. */
export interface BranchPageDto {
  branches: BranchDto[];
  damaged: DamagedBranch[];
  nextCursor: string | null;
}

/** A merge result as transports return it: commits in their public shape; `replayed` on an idempotent retry's stored result. */
export type MergeResultDto = (Omit<MergeSuccess, 'commit'> & { commit: CommitDto | null; replayed?: true }) | MergeConflicts;

/** How far back a retry looks for the merge commit of an attempt whose record was lost. */
const IDEMPOTENT_COMMIT_SEARCH = 200;

/** What makes two keyed requests the same merge (width and conflict paging do not change what lands). */
function mergeFingerprint(source: string, input: MergeInput): string {
  const { width: _w, conflictLimit: _l, conflictCursor: _c, ...rest } = input;
  return contentHash(canonicalJson({ source, ...rest, into: input.into ?? 'main' } as never));
}

/** The first result, rebuilt from its commit when its record was lost (tables and metrics are not kept there). */
function replayedFromCommit(c: Commit): MergeResultDto {
  const zero = { calls: 0, bytesRead: 0, bytesWritten: 0 };
  return {
    status: 'success',
    outcome: c.kind === 'fast_forward' ? 'fast_forward' : 'merged',
    dryRun: false,
    commit: commitDto(c),
    sourceHead: c.parentIds[1] ?? '',
    targetHead: c.parentIds[0] ?? '',
    base: null,
    tables: [],
    resolved: c.resolved ?? null,
    branchDeleted: false,
    branchDeleteError: null,
    metrics: {
      phasesMs: Object.fromEntries(MERGE_PHASES.map((p) => [p, 0])) as MergeMetrics['phasesMs'],
      totalMs: 0,
      storeCalls: { total: zero } as MergeMetrics['storeCalls'],
      requestedWidth: 1,
      maxWidth: 0,
      fallbacks: [],
      tablesPrepared: 0,
      tablesAdopted: 0,
      attempts: 0,
    },
    replayed: true,
  };
}

/** Service settings: merge width and budget, WAL shard and sealing, catch-up triggers, logger. */
export interface ServiceOptions {
  /** Width for merges that do not ask, on transports that may choose. */
  defaultWidth?: Width;
  budgetBytes?: number;
  /** This process's WAL writer identity and sealing thresholds. */
  wal?: { shard: string; sealAfterMs?: number; generationRows?: number };
  catchUp?: CatchUpSettings;
  compaction?: CompactionSettings;
  log?: Logger;
  /** How often a long merge or load logs its progress (default 5 s). */
  progressLogMs?: number;
  /** The most bytes one NDJSON ingest body may stream (default 1 GiB). */
  maxIngestBytes?: number;
}

/** What a compaction did: its commit (null when nothing was due) and runs per table before and after. */
export interface CompactResultDto {
  commit: CommitDto | null;
  tables: CompactionResult['tables'];
}

/** What an ingest made durable: its sealed generations, each acknowledged when its PUT returned. */
export interface IngestResultDto {
  branch: string;
  shard: string;
  operations: number;
  generations: { seq: number; rows: number; sealedAt: string }[];
  inserted: number;
  updated: number;
  deleted: number;
  cascaded: number;
}

/** A branch's WAL: watermarks and pending generations per shard, and this process's last catch-up. */
export type WalStatusDto = WalStatus & { catchUp: { running: boolean; last: LastCatchUp | null } };

/** The commit a schema change published (null when the schema was already in place) and what it did to each table. */
export interface SchemaApplyDto {
  commit: CommitDto | null;
  /** What the change did to each table: keep, check, rewrite or drop. */
  tables: Record<string, string>;
}

/** What a GC request asks: the grace period (raised to at least 15 minutes) and whether to only report. */
export interface GcInput {
  graceSeconds?: number;
  dryRun?: boolean;
}

/** What GC deleted, or would delete on a dry run, per kind of object. */
export type GcReportDto = Omit<GcReport, 'keys' | 'graceMs'> & { graceSeconds: number; keys: string[] };

/** A tag as clients see it: its name, the commit it names, who made it and when. */
export interface TagDto {
  name: string;
  commit: string;
  actor: string;
  time: string;
  message: string;
}

function tagDto(t: TagRecord): TagDto {
  return { name: t.name, commit: t.commit, actor: t.actor, time: t.time, message: t.message };
}

export function commitDto(c: Commit): CommitDto {
  return {
    id: c.id,
    parents: c.parentIds,
    branch: c.branch,
    actor: c.actor,
    author: c.author ?? c.actor,
    message: c.message,
    time: c.time,
    kind: c.kind,
    ...(c.resolved !== undefined ? { resolved: c.resolved } : {}),
  };
}

/** The request-owned operations every transport calls: branches, the one merge handler, writes, ingest and catch-up, reads, schema and GC, each under a `RequestContext`. */
export class BranchgraphService {
  readonly catchUps: CatchUpManager;
  readonly compactor: Compactor;
  /** This service's counters and gauges (every merge it runs reports into them). */
  /** Long operations running here (and recently finished), with their progress. */
  readonly operations = new Operations();
  readonly metrics = new ServiceMetrics(this.operations);
  private readonly idempotency: IdempotencyRecords;
  /** Keyed merges running in this process, so retries with one key wait for each other. */
  private readonly idempotent = new Map<string, Promise<MergeResultDto>>();
  private readonly writer: WalWriter;

  constructor(
    readonly graph: Graph,
    private readonly opts: ServiceOptions = {},
  ) {
    this.writer = new WalWriter(graph, {
      shard: opts.wal?.shard ?? 'default',
      sealAfterMs: opts.wal?.sealAfterMs,
      maxGenerationRows: opts.wal?.generationRows,
    });
    this.catchUps = new CatchUpManager(graph, opts.catchUp ?? DEFAULT_CATCHUP_SETTINGS, opts.log, this.metrics);
    this.idempotency = new IdempotencyRecords(graph.store, () => graph.clock());
    this.compactor = new Compactor(graph, opts.compaction ?? DEFAULT_COMPACTION_SETTINGS, opts.log);
  }

  /** Start background work (the catch-up trigger, background compaction). */
  start(): void {
    this.catchUps.start();
    this.compactor.start();
  }

  async stop(): Promise<void> {
    await Promise.all([this.catchUps.stop(), this.compactor.stop()]);
  }

  /** Compact a branch's tables now (tiered by default; `full` rewrites each table as one run). */
  async compact(branch: string, raw: CompactInput, ctx: RequestContext): Promise<CompactResultDto> {
    const input = validated(CompactInputZ, raw, ctx);
    const r = await this.compactor.run(branch, input, ctx.signal, ctx.actor);
    return { commit: r.status === 'published' ? commitDto(r.commit) : null, tables: r.result.tables };
  }

  /** Stop background work and release the store. */
  async close(): Promise<void> {
    await this.stop();
    await this.graph.close();
  }

  private snapshot(ref: Ref, ctx: RequestContext): Promise<Snapshot> {
    return this.graph.resolve(ref, ctx.signal);
  }

  // ---- branches ----------------------------------------------------------

  /**
   * One page of live branches by name (default 100, at most 1,000), and those in its range whose
   * record or head cannot be read (listed, never fatal to the listing). A page costs its own
   * branches, whatever the graph holds; `nextCursor` continues after its last name.
   */
  async listBranches(page: BranchPageInput, ctx: RequestContext): Promise<BranchPageDto> {
    const { limit = DEFAULT_BRANCH_PAGE, cursor } = validated(BranchPageInputZ, { ...page, cursor: page.cursor ?? undefined }, ctx);
    const after = cursor === undefined ? undefined : decodePageCursor('branches', '', cursor);
    const { branches, damaged, next } = await this.graph.listBranches({ ...(after !== undefined ? { after } : {}), limit, signal: ctx.signal });
    return {
      branches: await Promise.all(branches.map(async (b) => this.branchDto(b.record.name, b.commit, b.record, ctx))),
      damaged,
      nextCursor: next === undefined ? null : encodePageCursor('branches', '', next),
    };
  }

  private async branchDto(name: string, head: Commit, rec: { time: string; from: { lineage: string; version: number } | null }, ctx: RequestContext): Promise<BranchDto> {
    const forkedFrom = rec.from === null ? null : (await this.graph.readManifest(rec.from, ctx.signal)).commit.id;
    return { name, head: commitDto(head), createdAt: rec.time, forkedFrom };
  }

  async getBranch(name: string, ctx: RequestContext): Promise<BranchDto> {
    const head = await this.graph.branchHead(name, ctx.signal);
    return this.branchDto(name, head.manifest.commit, head.branch as NonNullable<Snapshot['branch']>, ctx);
  }

  async createBranch(name: string, from: Ref | undefined, ctx: RequestContext): Promise<BranchDto> {
    const r = await this.graph.createBranch(name, from ?? { branch: 'main' }, { signal: ctx.signal, actor: ctx.actor });
    return this.branchDto(name, r.head.manifest.commit, r.record, ctx);
  }

  // ---- tags ----------------------------------------------------------------

  async listTags(ctx: RequestContext): Promise<TagDto[]> {
    const { tags, damaged } = await this.graph.tags.all(ctx.signal);
    for (const d of damaged) ctx.log?.warn({ key: d.key, error: d.error }, 'a tag cannot be read');
    return tags.map(tagDto);
  }

  async getTag(name: string, ctx: RequestContext): Promise<TagDto> {
    return tagDto(await this.graph.tags.get(name, ctx.signal));
  }

  /** Name the commit `from` resolves to (main's head by default); a tag never moves. */
  async createTag(name: string, from: Ref | undefined, message: string | undefined, ctx: RequestContext): Promise<TagDto> {
    return tagDto(await this.graph.createTag(name, from ?? { branch: 'main' }, { signal: ctx.signal, actor: ctx.actor, ...(message !== undefined ? { message } : {}) }));
  }

  async deleteTag(name: string, ctx: RequestContext): Promise<{ deleted: string }> {
    await this.graph.tags.delete(name, ctx.signal);
    return { deleted: name };
  }

  /** Delete a branch; one whose record is damaged can be deleted too (admins only over HTTP). */
  async deleteBranch(name: string, ctx: RequestContext): Promise<{ deleted: string }> {
    await this.graph.deleteBranch(name, { signal: ctx.signal, actor: ctx.actor });
    this.catchUps.forget(name);
    return { deleted: name };
  }

  // ---- the merge handler -------------------------------------------------

  /**
   * The merge handler. With an idempotency key, a retry of the same request returns the first
   * result (marked `replayed`) instead of merging again; the same key with a different request is
   * refused. Requests with one key run one at a time in this process (graph/idempotency.ts).
   */
  async mergeBranch(source: string, raw: MergeInput, ctx: RequestContext): Promise<MergeResultDto> {
    const { idempotencyKey, ...request } = validated(MergeInputZ, raw, ctx);
    if (idempotencyKey === undefined || request.dryRun === true) return this.runMerge(source, request, ctx);
    const keyHash = idempotencyKeyHash(idempotencyKey);
    const fingerprint = mergeFingerprint(source, request);
    const job = (this.idempotent.get(keyHash) ?? Promise.resolve()).catch(() => undefined).then(() => this.idempotentMerge(source, request, { keyHash, fingerprint }, ctx));
    this.idempotent.set(keyHash, job);
    try {
      return await job;
    } finally {
      if (this.idempotent.get(keyHash) === job) this.idempotent.delete(keyHash);
    }
  }

  private async idempotentMerge(source: string, input: MergeInput, key: { keyHash: string; fingerprint: string }, ctx: RequestContext): Promise<MergeResultDto> {
    const found = await this.idempotency.find(key.keyHash, ctx.signal);
    if (found.record !== undefined) return replayedRecord(found.record, key);
    if (found.started) {
      // An earlier attempt may have published and lost its record: its commit carries the key.
      const landed = await this.landedWithKey(key, input, ctx);
      if (landed !== undefined) return landed;
    } else await this.idempotency.start(key.keyHash, ctx.signal);
    let result: MergeResultDto;
    try {
      result = await this.runMerge(source, input, ctx, key);
    } catch (e) {
      // A concurrent attempt (another process) that published first moves the target under this one.
      const landed = isBranchgraphError(e, 'aborted') ? undefined : await this.landedWithKey(key, input, ctx);
      if (landed !== undefined) return landed;
      throw e;
    }
    if (result.status === 'success' && result.commit !== null) {
      await this.idempotency.save({ ...key, result }, ctx.signal).catch((e: unknown) => ctx.log?.warn({ err: e }, 'idempotency record not written; a retry finds the merge by its commit'));
      return result;
    }
    // Not a commit of ours ("already up to date", most often): an attempt with this key running at
    // the same time in another process may have landed the merge first. Then that is the result.
    return (await this.landedWithKey(key, input, ctx)) ?? result;
  }

  /** The replay of a merge with this key that already landed: its record, else its commit among the target's recent ones. */
  private async landedWithKey(key: { keyHash: string; fingerprint: string }, input: MergeInput, ctx: RequestContext): Promise<MergeResultDto | undefined> {
    const found = await this.idempotency.find(key.keyHash, ctx.signal);
    if (found.record !== undefined) return replayedRecord(found.record, key);
    const recent = await commitLog(this.graph, await this.snapshot({ branch: input.into ?? 'main' }, ctx), { limit: IDEMPOTENT_COMMIT_SEARCH, signal: ctx.signal });
    const landed = recent.find((c) => c.idempotency?.keyHash === key.keyHash);
    if (landed === undefined) return undefined;
    refuseOtherRequest(landed.idempotency?.fingerprint ?? '', key.fingerprint);
    return replayedFromCommit(landed);
  }

  /**
   * Cherry-pick (replay) or revert (undo) one commit's change on a branch: a three-way merge against
   * the commit's parent, with the same conflicts, resolutions and validation as any merge, landing
   * as a one-parent commit of that kind.
   */
  async applyCommit(kind: 'cherry_pick' | 'revert', branch: string, raw: ApplyCommitInput, ctx: RequestContext): Promise<MergeResultDto> {
    const { commit, ...rest } = validated(ApplyCommitZ, raw, ctx);
    return this.runMerge(commit, { ...rest, into: branch }, ctx, undefined, kind);
  }

  private async runMerge(source: string, input: MergeInput, ctx: RequestContext, idempotency?: Commit['idempotency'], apply?: 'cherry_pick' | 'revert'): Promise<MergeResultDto> {
    const requested = input.width ?? this.opts.defaultWidth ?? 1;
    const width = effectiveWidth(requested, ctx.transport === 'http' ? 1 : undefined);
    const log = ctx.log?.child({ merge: { source, into: input.into ?? 'main' } });
    const started = performance.now();
    const seconds = (): number => (performance.now() - started) / 1000;
    this.metrics.mergesInFlight++;
    const op = this.startOperation('merge', input.into ?? 'main', source, ctx, log);
    let ok = false;
    try {
      const result = await mergeBranches(
        this.graph,
        {
          ...input,
          source,
          dryRun: input.dryRun ?? false,
          deleteBranch: input.deleteBranch ?? false,
          actor: ctx.actor,
          width,
          budgetBytes: this.opts.budgetBytes,
          signal: ctx.signal,
          ...(idempotency !== undefined ? { idempotency } : {}),
          ...(apply !== undefined ? { apply } : {}),
          progress: op.progress,
        },
        { gauges: this.metrics.gauges },
      );
      ok = true;
      this.metrics.recordMerge(result.status === 'success' ? result.outcome : 'conflicts', seconds(), result.metrics);
      if (result.status === 'success' && result.commit !== null) this.compactor.touched(input.into ?? 'main');
      if (result.status === 'success' && result.branchDeleted) this.catchUps.forget(source);
      log?.info(
        {
          outcome: result.status === 'success' ? result.outcome : 'conflicts',
          commit: result.status === 'success' && result.commit !== null ? result.commit.id : null,
          sourceHead: result.sourceHead,
          targetHead: result.targetHead,
          dryRun: input.dryRun ?? false,
          conflicts: result.status === 'conflicts' ? result.report.total : 0,
          width: { requested, effective: width, max: result.metrics.maxWidth, fallbacks: result.metrics.fallbacks.length },
          phasesMs: result.metrics.phasesMs,
          storeCalls: result.metrics.storeCalls.total.calls,
          attempts: result.metrics.attempts,
        },
        'merge finished',
      );
      return result.status === 'success' ? { ...result, commit: result.commit === null ? null : commitDto(result.commit) } : result;
    } catch (e) {
      const code = e instanceof BranchgraphError ? e.code : 'internal';
      this.metrics.recordMerge(code === 'aborted' ? 'aborted' : 'error', seconds(), undefined);
      if (code === 'aborted') log?.warn({ outcome: 'aborted' }, 'merge aborted by the client; preparation drained, nothing published');
      else log?.warn({ outcome: 'error', code }, 'merge failed');
      throw e;
    } finally {
      this.metrics.mergesInFlight--;
      this.operations.finish(op.id, ok);
    }
  }

  /** Register a long operation under the client's id (or a new one), logging its progress as it goes. */
  private startOperation(kind: OperationKind, branch: string, source: string | null, ctx: RequestContext, log: Logger | undefined) {
    return this.operations.start(kind, branch, source, {
      ...(ctx.operationId !== undefined ? { id: Operations.checkId(ctx.operationId) } : {}),
      onReport: (p) => log?.info({ progress: { rowsDone: p.done, rowsPlanned: p.planned } }, `${kind} progress`),
      everyMs: this.opts.progressLogMs ?? 5000,
    });
  }

  /** Long operations running in this process, then those finished in the last minutes. */
  listOperations(_ctx: RequestContext): OperationDto[] {
    return this.operations.list();
  }

  getOperation(id: string, _ctx: RequestContext): OperationDto {
    return this.operations.get(id);
  }

  // ---- writes -------------------------------------------------------------

  private writeDto(r: Awaited<ReturnType<Graph['write']>>): WriteResultDto {
    const s = r.result;
    return { commit: r.status === 'published' ? commitDto(r.commit) : null, inserted: s.inserted, updated: s.updated, deleted: s.deleted, cascaded: s.cascaded };
  }

  async write(branch: string, raw: WriteInput, ctx: RequestContext): Promise<WriteResultDto> {
    const input = validated(WriteInputZ, raw, ctx);
    const r = await this.graph.write(branch, input.ops as WriteOp[], {
      signal: ctx.signal,
      actor: ctx.actor,
      author: input.author,
      message: input.message ?? `write ${input.ops.length} ${input.ops.length === 1 ? 'operation' : 'operations'}`,
      expectedHead: input.expectedHead,
    });
    if (r.status === 'published') this.compactor.touched(branch);
    return this.writeDto(r);
  }

  async load(branch: string, ndjson: string, ctx: RequestContext): Promise<WriteResultDto> {
    const op = this.startOperation('load', branch, null, ctx, ctx.log);
    let ok = false;
    try {
      const r = await this.graph.load(branch, ndjson, { signal: ctx.signal, actor: ctx.actor, message: 'bulk load', progress: op.progress });
      ok = true;
      if (r.status === 'published') this.compactor.touched(branch);
      return this.writeDto(r);
    } finally {
      this.operations.finish(op.id, ok);
    }
  }

  // ---- WAL ingest and catch-up -------------------------------------------

  /** Ingest an NDJSON byte stream (a request body, a file), parsed as it arrives and never buffered whole. */
  ingestNdjson(branch: string, body: AsyncIterable<Uint8Array>, ctx: RequestContext): Promise<IngestResultDto> {
    return this.ingest(branch, ndjsonStream(body, { maxBytes: this.opts.maxIngestBytes }), ctx);
  }

  async ingest(branch: string, ops: Iterable<WriteOpInput> | AsyncIterable<WriteOpInput>, ctx: RequestContext): Promise<IngestResultDto> {
    let r: IngestReport;
    try {
      r = await this.writer.ingest(branch, ops as Iterable<WriteOp> | AsyncIterable<WriteOp>, { signal: ctx.signal, actor: ctx.actor });
    } catch (e) {
      // Generations sealed before a failure part-way are pending too.
      const acknowledged = (e as { details?: { acknowledged?: { generations?: number } } }).details?.acknowledged?.generations ?? 0;
      this.catchUps.sealed(branch, acknowledged);
      this.metrics.recordIngest(branch, acknowledged);
      throw e;
    }
    this.catchUps.sealed(branch, r.generations.length);
    this.metrics.recordIngest(branch, r.generations.length);
    return {
      branch,
      shard: r.shard,
      operations: r.operations,
      generations: r.generations.map((g) => ({ seq: g.seq, rows: g.rows, sealedAt: new Date(g.stamp).toISOString() })),
      ...r.summary,
    };
  }

  async catchUp(branch: string, raw: CatchUpInput, ctx: RequestContext): Promise<CatchUpReport> {
    const input = validated(CatchUpInputZ, raw, ctx);
    const report = await this.catchUps.run(branch, input, ctx.signal);
    if (report.batches > 0) this.compactor.touched(branch);
    return report;
  }

  async walStatus(branch: string, ctx: RequestContext): Promise<WalStatusDto> {
    const status = await walStatus(this.graph, branch, ctx.signal);
    return { ...status, catchUp: { running: this.catchUps.isRunning(branch), last: this.catchUps.lastRun(branch) } };
  }

  // ---- reads --------------------------------------------------------------

  async getRow(ref: Ref, table: string, key: string, ctx: RequestContext): Promise<Row> {
    return this.existingRow(await this.snapshot(ref, ctx), table, key, ctx);
  }

  private async existingRow(snap: Snapshot, table: string, key: string, ctx: RequestContext): Promise<Row> {
    const row = await getRow(this.graph, snap, table, key, ctx.signal);
    if (row === null) throw new BranchgraphError('not_found', `${table} ${key} does not exist`, { details: { table, key } });
    return row;
  }

  async scan(ref: Ref, table: string, raw: { where?: Filter; limit?: number; cursor?: string }, ctx: RequestContext) {
    const opts = validated(ScanInputZ, raw, ctx) as typeof raw;
    return scanRows(this.graph, await this.snapshot(ref, ctx), table, { ...opts, signal: ctx.signal });
  }

  /**
   * A table at a ref, encoded for analytical tools (see graph/table-export.ts). The snapshot is
   * resolved, and the table found, before the first byte, so a bad ref or table is an error
   * rather than a broken stream.
   */
  /**
   * A table at a ref, as a file. A branch with rows pending in the WAL has them folded into a
   * commit first (as a merge does before it takes a branch's rows): the commit the export names then
   * holds exactly the rows exported, so exporting at it again, or another table, reads the same state.
   */
  async exportTable(ref: Ref, table: string, format: ExportFormat, ctx: RequestContext): Promise<{ commit: string; body: AsyncIterable<Uint8Array> }> {
    const head = await this.snapshot(ref, ctx);
    const snap = 'branch' in ref ? await this.graph.foldExactly(ref.branch, head, `fold pending WAL generations for an export of ${table}`, { signal: ctx.signal, actor: ctx.actor }) : head;
    const { type, version } = this.graph.table(snap, table, ctx.signal);
    checkExportSize(
      format,
      version.runs.reduce((n, r) => n + r.rows, 0),
    );
    const commit = snap.manifest.commit.id;
    return { commit, body: exportTable({ type, commit, rows: liveRows(this.graph, snap, table, ctx.signal) }, format) };
  }

  async edges(ref: Ref, table: string, key: string, opts: { direction?: 'out' | 'in' | 'both'; edgeTable?: string }, ctx: RequestContext) {
    // One snapshot for both the existence check and the edges: resolving the ref twice costs a second head lookup.
    const snap = await this.snapshot(ref, ctx);
    await this.existingRow(snap, table, key, ctx);
    return edgesOf(this.graph, snap, table, key, { ...opts, signal: ctx.signal });
  }

  async log(ref: Ref, limit: number | undefined, ctx: RequestContext): Promise<CommitDto[]> {
    return (await commitLog(this.graph, await this.snapshot(ref, ctx), { limit, signal: ctx.signal })).map(commitDto);
  }

  async commit(id: string, ctx: RequestContext): Promise<CommitDto & { tables: { name: string; rows: number; runs: number }[] }> {
    const snap = await this.graph.commitSnapshot(id, ctx.signal);
    const tables = Object.entries(snap.manifest.tables).map(([name, t]) => ({
      name,
      rows: t.runs.reduce((n, r) => n + r.rows - r.tombstones, 0),
      runs: t.runs.length,
    }));
    return { ...commitDto(snap.manifest.commit), tables };
  }

  async diff(from: Ref, to: Ref, ctx: RequestContext): Promise<TableDiff[]> {
    const [a, b] = await Promise.all([this.snapshot(from, ctx), this.snapshot(to, ctx)]);
    return diffSnapshots(this.graph.runs, a, b, ctx.signal);
  }

  /**
   * A diff with counts and paging. `two-dot` is what changed from `from` to `to`; `three-dot` is
   * what changed on `to` since it and `from` diverged (the diff from their merge base to `to`),
   * which is what merging `to` into `from` would bring.
   */
  async diffPage(from: Ref, to: Ref, raw: DiffOptions, ctx: RequestContext): Promise<DiffResultDto> {
    const opts = validated(DiffInputZ, raw, ctx);
    const [a, b] = await Promise.all([this.snapshot(from, ctx), this.snapshot(to, ctx)]);
    const mode = opts.mode ?? 'two-dot';
    const base = mode === 'three-dot' ? await mergeBaseSnapshot(this.graph, a, b, ctx.signal) : a;
    // A cursor pages through one diff: these two commits, this mode (graph/diff-page.ts).
    const scope = canonicalJson({ mode, from: a.manifest.commit.id, to: b.manifest.commit.id });
    const page = pageDiff(await diffSnapshots(this.graph.runs, base, b, ctx.signal), { ...opts, scope });
    return { mode, from: a.manifest.commit.id, to: b.manifest.commit.id, base: mode === 'three-dot' ? base.manifest.commit.id : null, ...page };
  }

  // ---- schema and maintenance --------------------------------------------

  async getSchema(ref: Ref, ctx: RequestContext): Promise<{ commit: string; text: string; schema: Schema }> {
    const snap = await this.snapshot(ref, ctx);
    return { commit: snap.manifest.commit.id, text: formatSchema(snap.schema), schema: snap.schema };
  }

  async applySchema(branch: string, raw: SchemaApplyInput, ctx: RequestContext): Promise<SchemaApplyDto> {
    const input = validated(SchemaApplyZ, raw, ctx);
    const r = await this.graph.applySchema(branch, input.schema, {
      signal: ctx.signal,
      actor: ctx.actor,
      author: input.author,
      message: input.message ?? 'apply schema',
      migration: input.migration as NonNullable<Parameters<Graph['applySchema']>[2]>['migration'],
    });
    const res = r.result;
    return { commit: r.status === 'published' ? commitDto(r.commit) : null, tables: res.tables };
  }

  async gc(raw: GcInput, ctx: RequestContext): Promise<GcReportDto> {
    const input = validated(GcInputZ, raw, ctx);
    const r = await this.graph.gc({ graceMs: input.graceSeconds === undefined ? undefined : input.graceSeconds * 1000, dryRun: input.dryRun ?? false, signal: ctx.signal });
    const { graceMs, ...rest } = r;
    return { ...rest, graceSeconds: graceMs / 1000, keys: r.keys.slice(0, 1000) };
  }
}
