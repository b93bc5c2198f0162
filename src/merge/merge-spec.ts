/**
 * One merge, normalised once: its spec. A caller (the service, a test, a
 * benchmark) says what it wants (`MergeAsk`, most of it optional); every
 * default is applied here and nowhere else (`mergeSpec`), and the spec is
 * then passed down unchanged. Only `mergeSpec` makes a `MergeSpec`, so a
 * function that takes one cannot be handed an ask that skipped it. (A
 * "merge request" is the reviewable object of model/merge-request.ts.) What is not part of the request, but of where it runs
 * (the abort signal, gauges, the progress sink, the phase timer, the
 * idempotency key the commit records), travels beside it as the
 * environment.
 */
import type { ProtectionPass } from '../model/branch-protection.js';
import { BranchgraphError } from '../model/errors.js';
import type { ProgressSink } from '../model/progress.js';
import type { MergePhase, PhaseTimer } from '../model/phase-timer.js';
import type { Commit } from '../graph/manifest.js';
import { effectiveWidth, type PreparationGauges, type Width } from './preparation-scheduler.js';
import type { MergeResolutions } from './resolutions.js';

/** Conflicts reported on one page unless the request asks otherwise. */
export const DEFAULT_CONFLICT_LIMIT = 100;

/** What applying a request does: merge a branch, or cherry-pick or revert one commit (then `source` names the commit). */
export type ApplyKind = 'merge' | 'cherry_pick' | 'revert';

/** A merge as a caller asks for it. */
export interface MergeAsk {
  source: string;
  into?: string | undefined;
  apply?: ApplyKind | undefined;
  dryRun?: boolean | undefined;
  expectedSourceHead?: string | undefined;
  /**
   * The source's content state the merge must take (graph/head-state.ts): a merge request pins
   * the state its reviewers approved, so a row ingested since, folded or not, refuses the merge.
   * Set by the service only; no transport reaches it.
   */
  expectedSourceState?: string | undefined;
  expectedTargetHead?: string | undefined;
  /**
   * The set of conflicts the resolutions must decide against whatever target head the merge lands
   * on (merge/resolutions.ts `digest`, null for none): an approval covers exactly that set. Set by
   * the service only.
   */
  expectedDecided?: string | null | undefined;
  deleteBranch?: boolean | undefined;
  /** Who merges (recorded as the commit's actor). */
  actor?: string | undefined;
  /** Who the merge is for, when the client names someone (recorded beside the actor). */
  author?: string | undefined;
  message?: string | undefined;
  width?: Width | undefined;
  budgetBytes?: number | undefined;
  conflictLimit?: number | undefined;
  conflictCursor?: string | undefined;
  /** How to resolve the conflicts the merge finds (merge/resolutions.ts). */
  resolutions?: MergeResolutions | undefined;
  /** What the merge presents to a protected target (model/branch-protection.ts). */
  protection?: ProtectionPass | undefined;
}

declare const normalised: unique symbol;

/** A merge with every default applied: what runs, whatever asked for it. Made by `mergeSpec` only. */
export interface MergeSpec extends MergeAsk {
  into: string;
  apply: ApplyKind;
  dryRun: boolean;
  deleteBranch: boolean;
  width: Width;
  conflictLimit: number;
  readonly [normalised]: true;
}

/** Where one merge runs: its abort signal, the gauges it reports to, its progress sink and timer, and the key it runs under. */
export interface MergeEnvironment {
  signal?: AbortSignal | undefined;
  gauges?: PreparationGauges | undefined;
  /** Where the rows walked are reported, for long merges (model/progress.ts). */
  progress?: ProgressSink | undefined;
  /** Started by the caller when it wants phases timed from before the merge (a fresh one otherwise). */
  timer?: PhaseTimer<MergePhase> | undefined;
  /** Recorded on the commit, so a retry under the same Idempotency-Key can find it. */
  idempotency?: Commit['idempotency'] | undefined;
}

/** The defaults a request's owner sets: the width when none is asked and the most it allows, the memory budget. */
export interface MergeDefaults {
  width?: Width | undefined;
  /** A hard cap whatever the request asks (HTTP merges run at width one). */
  maxWidth?: Width | undefined;
  budgetBytes?: number | undefined;
}

/** Conflicts reported per page at most; also the most a recheck collects per table. */
export const MAX_CONFLICTS_PER_PAGE = 1000;

/** The ask with its defaults; refuses a merge of a branch into itself and a conflict page out of range. A spec normalises to itself. */
export function mergeSpec(ask: MergeAsk, defaults: MergeDefaults = {}): MergeSpec {
  const into = ask.into ?? 'main';
  const apply = ask.apply ?? 'merge';
  if (apply === 'merge' && ask.source === into) {
    throw new BranchgraphError('invalid_input', 'a branch cannot be merged into itself', {
      issues: [{ path: 'into', message: 'same as the source' }],
    });
  }
  const conflictLimit = ask.conflictLimit ?? DEFAULT_CONFLICT_LIMIT;
  if (!Number.isInteger(conflictLimit) || conflictLimit < 1 || conflictLimit > MAX_CONFLICTS_PER_PAGE) {
    const range = `1..${MAX_CONFLICTS_PER_PAGE}`;
    throw new BranchgraphError('invalid_input', `conflictLimit must be ${range}`, { issues: [{ path: 'conflictLimit', message: range }] });
  }
  const budgetBytes = ask.budgetBytes ?? defaults.budgetBytes;
  return {
    ...ask,
    into,
    apply,
    dryRun: ask.dryRun ?? false,
    deleteBranch: ask.deleteBranch ?? false,
    width: effectiveWidth(ask.width ?? defaults.width ?? 1, defaults.maxWidth),
    conflictLimit,
    ...(budgetBytes !== undefined ? { budgetBytes } : {}),
  } as MergeSpec;
}

/** What a conflict cursor is bound to: one merge's report, this source into this target, this kind. */
export function mergeCursorScope(spec: Pick<MergeSpec, 'source' | 'into' | 'apply'>): string {
  return JSON.stringify([spec.source, spec.into, spec.apply]);
}
