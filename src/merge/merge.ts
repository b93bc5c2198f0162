/**
 * Branch merge, the entry point: check the request, resolve both heads, run
 * the merge (merge-run.ts) through the publication loop, and report.
 *
 * Outcomes: `already_up_to_date` when the target contains the source (nothing
 * is written); `fast_forward` when the source contains the target (one commit
 * on the target with the source's state and both parents, so later merges
 * find the right base); otherwise `merged`, a two-parent commit. Tables
 * changed on one side only are adopted by reference; tables changed on both
 * sides go through `prepareTable` under the preparation scheduler.
 *
 * On any conflict, and on a dry run, nothing is published and scratch runs
 * are deleted. The source is pinned when the merge starts; if the target
 * moves before publication, the whole plan is redone against the new head, a
 * bounded number of times, then `publish_contention` (retryable).
 */
import { conflictPage, conflictWindow, type ConflictReport } from '../model/conflict.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { Graph, Snapshot } from '../graph/graph.js';
import type { Commit } from '../graph/manifest.js';
import { CountingStore, type StoreCounts } from '../store/counting-store.js';
import { MERGE_PHASES, PhaseTimer, type MergePhase } from '../model/phase-timer.js';
import { PreparationGauges, type Fallback, type Width } from './preparation-scheduler.js';
import { MergeRun, type MergeDecision, type ResolvedRecord } from './merge-run.js';
import type { MergeResolutions } from './resolutions.js';
import type { ProgressSink } from '../model/progress.js';
import { MAX_CONFLICTS_PER_PAGE } from './merge-recheck.js';
import type { MergeOutcome, TableMergeSummary } from './merge-plan.js';

export type { MergeOutcome, TableMergeSummary } from './merge-plan.js';
export { MAX_CONFLICTS_PER_PAGE } from './merge-recheck.js';

export interface MergeRequest {
  source: string;
  into?: string;
  dryRun?: boolean;
  expectedSourceHead?: string;
  expectedTargetHead?: string;
  deleteBranch?: boolean;
  /** Who merges (recorded as the commit's actor). */
  actor?: string;
  /** Who the merge is for, when the client names someone (recorded beside the actor). */
  author?: string;
  message?: string;
  width?: Width;
  budgetBytes?: number;
  signal?: AbortSignal;
  conflictLimit?: number;
  conflictCursor?: string;
  /** How to resolve the conflicts the merge finds (merge/resolutions.ts). */
  resolutions?: MergeResolutions;
  /** Where the rows walked are reported, for long merges (model/progress.ts). */
  progress?: ProgressSink;
  /** Recorded on the commit, so a retry under the same Idempotency-Key can find it. */
  idempotency?: Commit['idempotency'];
  /**
   * Apply one commit's change to `into` instead of merging a branch: `cherry_pick` replays what the
   * commit changed from its first parent; `revert` undoes it. `source` then names the commit.
   */
  apply?: 'cherry_pick' | 'revert';
}

/** What the merge's owner provides: the gauges it reports (a fresh set when none is given). */
export interface MergeEnvironment {
  gauges?: PreparationGauges;
}

export interface MergeMetrics {
  phasesMs: Record<MergePhase, number>;
  totalMs: number;
  storeCalls: StoreCounts;
  requestedWidth: Width;
  maxWidth: number;
  fallbacks: Fallback[];
  tablesPrepared: number;
  tablesAdopted: number;
  attempts: number;
}

export interface MergeSuccess {
  status: 'success';
  outcome: MergeOutcome;
  dryRun: boolean;
  /** The published commit; null when nothing was published (up to date, dry run). */
  commit: Commit | null;
  sourceHead: string;
  targetHead: string;
  base: string | null;
  tables: TableMergeSummary[];
  /** The resolutions applied (or, in a dry run, that would be); null when none were needed. */
  resolved: ResolvedRecord | null;
  branchDeleted: boolean;
  branchDeleteError: string | null;
  metrics: MergeMetrics;
}

export interface MergeConflicts {
  status: 'conflicts';
  sourceHead: string;
  targetHead: string;
  base: string | null;
  report: ConflictReport;
  metrics: MergeMetrics;
}

export type MergeResult = MergeSuccess | MergeConflicts;

function checkRequest(req: MergeRequest, into: string): void {
  if (req.apply === undefined && req.source === into)
    throw new BranchgraphError('invalid_input', 'a branch cannot be merged into itself', { issues: [{ path: 'into', message: 'same as the source' }] });
  const limit = req.conflictLimit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CONFLICTS_PER_PAGE) {
    throw new BranchgraphError('invalid_input', `conflictLimit must be 1..${MAX_CONFLICTS_PER_PAGE}`, { issues: [{ path: 'conflictLimit', message: `1..${MAX_CONFLICTS_PER_PAGE}` }] });
  }
}

export async function mergeBranches(graph: Graph, req: MergeRequest, env: MergeEnvironment = {}): Promise<MergeResult> {
  const into = req.into ?? 'main';
  checkRequest(req, into);
  // A conflict cursor pages through the report of one merge: this source into this target.
  const cursorScope = JSON.stringify([req.source, into, req.apply ?? 'merge']);
  const started = performance.now();
  const counting = new CountingStore(graph.store);
  const g = graph.withStore(counting);
  const width: Width = req.width ?? 1;
  const { signal } = req;
  const timer = new PhaseTimer<MergePhase>(MERGE_PHASES);
  timer.enter('resolve');
  // Both heads at once: on a remote store each is a chain of round trips.
  const [named, firstTarget] = await Promise.all([req.apply !== undefined ? g.commitSnapshot(req.source, signal) : g.branchHead(req.source, signal), g.branchHead(into, signal)]);
  const applied = req.apply !== undefined ? await appliedSides(g, named, req.apply, signal) : undefined;
  const source = applied?.source ?? named;
  if (req.expectedSourceHead !== undefined && source.manifest.commit.id !== req.expectedSourceHead) {
    throw new BranchgraphError('head_moved', `branch ${req.source} is at ${source.manifest.commit.id}, not ${req.expectedSourceHead}`, {
      details: { branch: req.source, expected: req.expectedSourceHead, actual: source.manifest.commit.id },
    });
  }
  const run = new MergeRun(
    g,
    {
      source: req.source,
      into,
      dryRun: req.dryRun === true,
      actor: req.actor,
      message: req.message,
      width,
      budgetBytes: req.budgetBytes,
      signal,
      gauges: env.gauges ?? new PreparationGauges(),
      conflictWindow: conflictWindow(req.conflictLimit ?? 100, req.conflictCursor, cursorScope),
      ...(req.progress !== undefined ? { progress: req.progress } : {}),
      ...(applied !== undefined ? { apply: applied.apply } : {}),
      ...(req.resolutions !== undefined ? { resolutions: req.resolutions } : {}),
      ...(req.idempotency !== undefined ? { idempotency: req.idempotency } : {}),
      timer,
    },
    source,
  );
  let targetHead = '';
  let published;
  try {
    published = await g.commitChange<MergeDecision>(
      into,
      { signal, actor: req.actor, author: req.author, message: req.message, expectedHead: req.expectedTargetHead, firstHead: firstTarget },
      (target) => {
        targetHead = target.manifest.commit.id;
        return run.attempt(target);
      },
    );
  } catch (e) {
    run.timer.enter('cleanup');
    throw e;
  } finally {
    // Published scratch is referenced now; any other was deleted.
    run.finish();
  }
  const metrics = (): MergeMetrics => ({
    ...run.stats,
    phasesMs: run.timer.stop(),
    totalMs: Math.round((performance.now() - started) * 100) / 100,
    storeCalls: counting.snapshot(),
    requestedWidth: width,
  });
  const decided = published.result;
  const heads = { sourceHead: run.source.manifest.commit.id, targetHead };
  if (decided.kind === 'conflicts') {
    return {
      status: 'conflicts',
      ...heads,
      base: decided.base?.commit.id ?? null,
      report: conflictPage(decided.conflicts, req.conflictLimit ?? 100, req.conflictCursor, cursorScope),
      metrics: metrics(),
    };
  }
  const deletion = req.deleteBranch === true && decided.kind !== 'dry_run' ? await deleteSource(graph, req, run) : { branchDeleted: false, branchDeleteError: null };
  return {
    status: 'success',
    outcome: decided.kind === 'up_to_date' ? 'already_up_to_date' : decided.outcome,
    dryRun: decided.kind === 'dry_run',
    commit: published.status === 'published' ? published.commit : null,
    ...heads,
    base: decided.kind === 'up_to_date' ? null : (decided.base?.commit.id ?? null),
    tables: decided.kind === 'up_to_date' ? [] : decided.tables,
    resolved: decided.kind === 'up_to_date' ? null : decided.resolved,
    ...deletion,
    metrics: metrics(),
  };
}

/**
 * What applying a commit merges: a cherry-pick brings the commit's change over its first parent (a
 * merge commit's change is taken against its first parent, its mainline); a revert brings the
 * parent's state over the commit, which undoes the change.
 */
async function appliedSides(
  g: Graph,
  commit: Snapshot,
  kind: 'cherry_pick' | 'revert',
  signal?: AbortSignal,
): Promise<{ source: Snapshot; apply: { base: Snapshot; kind: 'cherry_pick' | 'revert'; commit: string } }> {
  const parentId = commit.manifest.commit.parentIds[0];
  const id = commit.manifest.commit.id;
  if (parentId === undefined || commit.manifest.commit.kind === 'init') {
    throw new BranchgraphError('invalid_input', `commit ${id} has no parent: there is no change to ${kind === 'revert' ? 'revert' : 'cherry-pick'}`);
  }
  const parent = await g.commitSnapshot(parentId, signal);
  // Replaying or undoing a schema change would silently drop or keep whole tables' data: that is a schema apply's job.
  if (parent.manifest.schema !== commit.manifest.schema) {
    throw new BranchgraphError('invalid_input', `commit ${id} changed the schema; apply the schema you want instead of ${kind === 'revert' ? 'reverting' : 'cherry-picking'} it`);
  }
  return kind === 'revert' ? { source: parent, apply: { base: commit, kind, commit: id } } : { source: commit, apply: { base: parent, kind, commit: id } };
}

/** Delete the merged source on request; a refusal is reported, never a failure of the merge that already landed. */
async function deleteSource(graph: Graph, req: MergeRequest, run: MergeRun): Promise<{ branchDeleted: boolean; branchDeleteError: string | null }> {
  run.timer.enter('cleanup');
  try {
    await graph.deleteBranch(req.source, { signal: req.signal, actor: req.actor });
    return { branchDeleted: true, branchDeleteError: null };
  } catch (e) {
    return { branchDeleted: false, branchDeleteError: isBranchgraphError(e) ? `${e.code}: ${e.message}` : String(e) };
  }
}
