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
import { refuseProtected } from '../graph/branches.js';
import { conflictPage, type ConflictReport } from '../model/conflict.js';
import { headState } from '../graph/head-state.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { parseRefText } from '../model/ref-grammar.js';
import type { GraphPorts, HintedHead } from '../graph/ports.js';
import type { ChangeResult } from '../graph/change.js';
import { sameHead, type Snapshot } from '../graph/snapshot.js';
import type { Commit } from '../graph/manifest.js';
import type { StoreCounts } from '../store/counting-store.js';
import { MERGE_PHASES, PhaseTimer, type MergePhase } from '../model/phase-timer.js';
import { PreparationGauges, type Fallback, type Width } from './preparation-scheduler.js';
import { MergeRun, type AppliedChange, type MergeDecision, type ResolvedRecord, type RunEnvironment } from './merge-run.js';
import { mergeCursorScope, type MergeEnvironment, type MergeSpec } from './merge-spec.js';
import type { MergeOutcome, TableMergeSummary } from './merge-plan.js';
import { allowStoreCallListeners } from '../model/signal-listeners.js';

export type { MergeOutcome, TableMergeSummary } from './merge-plan.js';
export { MAX_CONFLICTS_PER_PAGE } from './merge-spec.js';

export { mergeSpec, type MergeAsk, type MergeEnvironment, type MergeSpec } from './merge-spec.js';

export interface MergeMetrics {
  phasesMs: Record<MergePhase, number>;
  totalMs: number;
  storeCalls: StoreCounts;
  /** Store calls made one after another (round-trips.ts): at a fixed latency per call, the merge's time is this many of it. */
  dependentRoundTrips: number;
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

/** The ports a merge runs on, and the branch records it deletes a merged source from. */
export type MergeBranchPorts = Pick<GraphPorts, 'counted' | 'branches'>;

/**
 * The merge: pin both heads (the source and, for a cherry-pick or revert, the commit's sides), run
 * the merge through the publication loop against each target head it meets, and shape the result.
 * It takes the spec `mergeSpec` made (merge-spec.ts), normalised once, by type; store calls are counted per merge.
 */
export async function mergeBranches(ports: MergeBranchPorts, spec: MergeSpec, environment: MergeEnvironment = {}): Promise<MergeResult> {
  allowStoreCallListeners(environment.signal);
  const started = performance.now();
  const { ports: counted, counting } = ports.counted();
  // A merge that may publish reads the event log's end in its first wave, beside the heads.
  if (!spec.dryRun) counted.publication.warm();
  const gauges = environment.gauges ?? new PreparationGauges();
  const env: RunEnvironment = { ...environment, gauges, timer: environment.timer ?? new PhaseTimer(MERGE_PHASES) };
  env.timer.enter('resolve');
  const pinned = await pinHeads(counted, spec, env);
  // A protected target refuses before any preparation; previews (dry runs) are always allowed.
  if (!spec.dryRun) refuseProtected(pinned.target.branch, spec.apply === 'merge' ? 'merge' : spec.apply, spec.protection);
  const run = new MergeRun({ ports: counted, spec, env, source: pinned.source, applied: pinned.applied });
  run.warmDeltas(pinned.target);
  let targetHead = '';
  let published: ChangeResult<MergeDecision>;
  try {
    const { actor, author, message, expectedTargetHead: expectedHead, protection } = spec;
    // Merges into one branch from this process take turns, each planned on the one before it (publication-lanes.ts).
    // Dry runs publish nothing. A keyed merge takes its turn too (or writes behind it would starve it),
    // but plans on stored heads only: on a lost race it reads back the commits between the head it
    // planned on and the new one for a commit made under its key (MergeRun.landedUnderKey), and a lane
    // tip's manifest may not be stored yet.
    const publish = {
      signal: env.signal,
      actor,
      author,
      message,
      expectedHead,
      protection,
      firstHead: pinned.target,
      ...(pinned.targetCheck !== undefined ? { firstHeadCheck: pinned.targetCheck } : {}),
      chained: !spec.dryRun,
      storedHeadsOnly: env.idempotency !== undefined,
    };
    let sourceCheck = pinned.sourceCheck;
    published = await counted.publication.commitChange<MergeDecision>(spec.into, publish, async (target) => {
      targetHead = target.manifest.commit.id;
      const planned = await run.attempt(target);
      // A source planned on as its hint named it counts only once its head read agrees; the read
      // went on beside the plan, so waiting for it here usually costs nothing.
      if (sourceCheck === undefined) return planned;
      const stored = await sourceCheck;
      sourceCheck = undefined;
      if (sameHead(stored, run.source)) return planned;
      if (!('unchanged' in planned)) await counted.runFiles.delete(planned.scratch, env.signal).catch(() => undefined);
      run.source = stored;
      return run.attempt(target);
    });
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
    dependentRoundTrips: counting.dependentRoundTrips(),
    requestedWidth: spec.width,
  });
  const heads = { sourceHead: run.source.manifest.commit.id, targetHead };
  return shapeResult({ ports, spec, env, run, published, heads, metrics });
}

/**
 * A merge's source: a branch's head (or, in a cold process, the head its hint names, with the head
 * read that confirms it), or a remote-tracking ref (`remote:origin/main`, what a pull merges), read
 * exactly as the last fetch left it.
 */
function sourceHead(
  heads: GraphPorts['heads'],
  source: string,
  o: { hinted: boolean; signal: AbortSignal | undefined },
): Promise<HintedHead> {
  const { hinted, signal } = o;
  const path = parseRefText(source);
  if (!('error' in path) && 'remote' in path.base && path.steps.length === 0)
    return heads.resolve({ path }, signal).then((head) => ({ head }));
  return hinted ? heads.hintedHead(source, signal) : heads.branchHead(source, signal).then((head) => ({ head }));
}

/** Both sides, pinned, and the head reads that must confirm any side planned on a branch hint. */
interface PinnedHeads {
  source: Snapshot;
  target: Snapshot;
  applied?: AppliedChange;
  /** The source's head read, when the source is the head its hint named. */
  sourceCheck?: Promise<Snapshot>;
  /** The target's head read, when the target is the head its hint named. */
  targetCheck?: Promise<Snapshot>;
}

/**
 * Both heads at once (on a remote store each is a chain of round trips); for an applied commit, the
 * sides it merges. In a cold process a plain merge plans on the heads the branches' hints name
 * while their head reads go on beside the plan: a cold merge then waits for one round trip before
 * planning, not two. A merge that expects a head, or whose target's hinted record is protected,
 * waits for the heads themselves, so what it checks before planning is never a hint's word.
 */
async function pinHeads(ports: GraphPorts, spec: MergeSpec, env: RunEnvironment): Promise<PinnedHeads> {
  const { heads } = ports;
  const { signal } = env;
  const applying = spec.apply !== 'merge';
  const hinted =
    !applying && env.idempotency === undefined && spec.expectedSourceHead === undefined && spec.expectedSourceState === undefined;
  const [named, into] = await Promise.all([
    applying
      ? heads.commitSnapshot(spec.source, signal).then((head): HintedHead => ({ head }))
      : sourceHead(heads, spec.source, { hinted, signal }),
    hinted && spec.expectedTargetHead === undefined
      ? heads.hintedHead(spec.into, signal)
      : heads.branchHead(spec.into, signal).then((head): HintedHead => ({ head })),
  ]);
  const target: HintedHead = into.check !== undefined && into.head.branch?.protection !== undefined ? { head: await into.check } : into;
  const applied = spec.apply !== 'merge' ? await appliedSides({ ports, commit: named.head, kind: spec.apply, signal }) : undefined;
  const source = applied?.source ?? named.head;
  const expected = spec.expectedSourceHead;
  if (expected !== undefined && source.manifest.commit.id !== expected) {
    throw new BranchgraphError('head_moved', `branch ${spec.source} is at ${source.manifest.commit.id}, not ${expected}`, {
      details: { branch: spec.source, expected, actual: source.manifest.commit.id },
    });
  }
  const state = spec.expectedSourceState;
  if (state !== undefined && headState(source) !== state) {
    throw new BranchgraphError('head_moved', `branch ${spec.source} changed since the state the merge was asked for`, {
      details: { branch: spec.source, expected: state, actual: headState(source) },
    });
  }
  return {
    source,
    target: target.head,
    ...(applied !== undefined ? { applied: applied.apply } : {}),
    ...(named.check !== undefined ? { sourceCheck: named.check } : {}),
    ...(target.check !== undefined ? { targetCheck: target.check } : {}),
  };
}

/** The result a caller sees: the conflict page, or the outcome with its commit (and the source deleted on request). */
async function shapeResult(r: {
  ports: MergeBranchPorts;
  spec: MergeSpec;
  env: RunEnvironment;
  run: MergeRun;
  published: ChangeResult<MergeDecision>;
  heads: { sourceHead: string; targetHead: string };
  metrics: () => MergeMetrics;
}): Promise<MergeResult> {
  const { spec, heads } = r;
  const decided = r.published.result;
  if (decided.kind === 'conflicts') {
    const report = conflictPage({
      conflicts: decided.conflicts,
      limit: spec.conflictLimit,
      cursor: spec.conflictCursor,
      scope: mergeCursorScope(spec),
    });
    return { status: 'conflicts', ...heads, base: decided.base?.commit.id ?? null, report, metrics: r.metrics() };
  }
  const deletion =
    spec.deleteBranch && decided.kind !== 'dry_run' ? await deleteSource(r) : { branchDeleted: false, branchDeleteError: null };
  const upToDate = decided.kind === 'up_to_date';
  return {
    status: 'success',
    outcome: upToDate ? 'already_up_to_date' : decided.outcome,
    dryRun: decided.kind === 'dry_run',
    commit: r.published.status === 'published' ? r.published.commit : null,
    ...heads,
    base: upToDate ? null : (decided.base?.commit.id ?? null),
    tables: upToDate ? [] : decided.tables,
    resolved: upToDate ? null : decided.resolved,
    ...deletion,
    metrics: r.metrics(),
  };
}

/**
 * What applying a commit merges: a cherry-pick brings the commit's change over its first parent (a
 * merge commit's change is taken against its first parent, its mainline); a revert brings the
 * parent's state over the commit, which undoes the change.
 */
async function appliedSides(a: {
  ports: GraphPorts;
  commit: Snapshot;
  kind: 'cherry_pick' | 'revert';
  signal?: AbortSignal | undefined;
}): Promise<{ source: Snapshot; apply: AppliedChange }> {
  const { ports, commit, kind, signal } = a;
  const parentId = commit.manifest.commit.parentIds[0];
  const id = commit.manifest.commit.id;
  if (parentId === undefined || commit.manifest.commit.kind === 'init') {
    throw new BranchgraphError(
      'invalid_input',
      `commit ${id} has no parent: there is no change to ${kind === 'revert' ? 'revert' : 'cherry-pick'}`,
    );
  }
  const parent = await ports.heads.commitSnapshot(parentId, signal);
  // Replaying or undoing a schema change would silently drop or keep whole tables' data: that is a schema apply's job.
  if (parent.manifest.schema !== commit.manifest.schema) {
    throw new BranchgraphError(
      'invalid_input',
      `commit ${id} changed the schema; apply the schema you want instead of ${kind === 'revert' ? 'reverting' : 'cherry-picking'} it`,
    );
  }
  return kind === 'revert'
    ? { source: parent, apply: { base: commit, kind, commit: id } }
    : { source: commit, apply: { base: parent, kind, commit: id } };
}

/** Delete the merged source on request; a refusal is reported, never a failure of the merge that already landed. */
async function deleteSource(r: {
  ports: MergeBranchPorts;
  spec: MergeSpec;
  env: RunEnvironment;
  run: MergeRun;
}): Promise<{ branchDeleted: boolean; branchDeleteError: string | null }> {
  r.run.timer.enter('cleanup');
  try {
    await r.ports.branches.delete(r.spec.source, { signal: r.env.signal, actor: r.spec.actor });
    return { branchDeleted: true, branchDeleteError: null };
  } catch (e) {
    return { branchDeleted: false, branchDeleteError: isBranchgraphError(e) ? `${e.code}: ${e.message}` : String(e) };
  }
}
