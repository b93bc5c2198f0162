/**
 * Merge requests: the stored document and the rules that decide whether
 * one may merge. Pure: storage is graph/merge-requests.ts, the actions are
 * in service/review/.
 *
 * A request asks to merge a source branch into a target. Each time either
 * head moves (or its resolutions change) it gains a revision that pins the
 * two heads, their merge base and the merge's preview, so reviewers review
 * an exact result. A review is tied to the revision it saw. An approval
 * counts while it is current: under the rule's `result_change` (the
 * default) while the change the merge brings is the one approved (the same
 * source head, merge base and resolutions), under `head_move` only on the
 * latest revision. A reviewer's latest review is the one that counts;
 * approvals by the request's author never count, and a current request for
 * changes blocks the merge.
 *
 * A request is mergeable when it is open, its latest revision pins the
 * heads as they are now, its preview has no conflicts left after the
 * saved resolutions and brings something, it has the current approvals
 * the target's rule asks for (none when the target is unprotected), and
 * every check the rule requires passed on the latest revision.
 */
import { z } from 'zod';
import { canonicalJson, contentHash } from './canonical.js';
import type { ProtectionRule } from './branch-protection.js';
import { CheckResultZ } from './hook.js';

export const REQUEST_STATES = ['open', 'merged', 'closed'] as const;
export const VERDICTS = ['approve', 'request_changes', 'comment'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** Most revisions and reviews one request keeps: each stored version holds the whole request. */
export const MAX_REVISIONS = 500;
export const MAX_REVIEWS = 2000;

const PreviewZ = z.object({
  /** merged, fast_forward, already_up_to_date, or conflicts. */
  outcome: z.enum(['merged', 'fast_forward', 'already_up_to_date', 'conflicts']),
  /** Conflicts left after the saved resolutions. */
  conflicts: z.number().int().min(0),
  /** Conflicts the saved resolutions decide (by a choice or the strategy): an approval covers exactly these. */
  decided: z.number().int().min(0).optional(),
  counts: z.record(z.string(), z.number().int()),
  tables: z.array(z.object({ table: z.string(), action: z.string(), sourceChanges: z.number().int(), targetChanges: z.number().int() })),
});
export type RevisionPreview = z.infer<typeof PreviewZ>;

export const RevisionZ = z.object({
  n: z.number().int().min(1),
  sourceHead: z.string(),
  targetHead: z.string(),
  /** Each head's content state (graph/head-state.ts): compaction and catch-up leave it as it is. */
  sourceState: z.string().optional(),
  targetState: z.string().optional(),
  base: z.string().nullable(),
  /** The resolutions this revision merges with, as saved when it was made: a merge of it applies exactly these. */
  resolutions: z.unknown().optional(),
  /** The set of conflicts the resolutions decide, hashed (merge/resolutions.ts); null when they decide none. */
  decidedDigest: z.string().nullable().optional(),
  /** What the merge brings: the source's content state, the merge base, the resolutions and the conflicts they decide, hashed. */
  fingerprint: z.string(),
  time: z.string(),
  preview: PreviewZ,
  /** Each check hook's result on this revision, by check name (model/hook.ts). */
  checks: z.record(z.string(), CheckResultZ).optional(),
});
export type Revision = z.infer<typeof RevisionZ>;

export const ReviewZ = z.object({
  n: z.number().int().min(1),
  verdict: z.enum(VERDICTS),
  body: z.string(),
  author: z.string(),
  /** The revision the reviewer saw. */
  revision: z.number().int().min(1),
  time: z.string(),
  /** A comment on one place of the diff. */
  on: z.object({ table: z.string(), key: z.string().optional(), property: z.string().optional() }).optional(),
});
export type Review = z.infer<typeof ReviewZ>;

export const MergeRequestDocZ = z.object({
  format: z.literal(1),
  id: z.string(),
  /** The stored version of the request this document is (graph/merge-requests.ts). */
  seq: z.number().int().min(1),
  title: z.string(),
  description: z.string(),
  source: z.string(),
  target: z.string(),
  author: z.string(),
  state: z.enum(REQUEST_STATES),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** The resolutions the merge will apply, as a merge takes them (checked when saved). */
  resolutions: z.unknown().optional(),
  revisions: z.array(RevisionZ).max(MAX_REVISIONS),
  reviews: z.array(ReviewZ).max(MAX_REVIEWS),
  /**
   * The revision a merge was started for and not yet recorded, and when: until that merge settles
   * (lands, or can no longer land) the request takes no new resolutions and cannot be closed.
   */
  merging: z.number().int().min(1).optional(),
  mergingSince: z.string().optional(),
  merged: z.object({ commit: z.string(), by: z.string(), time: z.string(), revision: z.number().int().min(1) }).optional(),
  closed: z.object({ by: z.string(), time: z.string() }).optional(),
});
export type MergeRequestDoc = z.infer<typeof MergeRequestDocZ>;

/**
 * The fingerprint of what a merge brings: what `result_change` approvals are about. `source` is the
 * source's content state, `decided` the hash of the set of conflicts the resolutions decide
 * (merge/resolutions.ts), so a conflict that appears after an approval and that a saved strategy
 * would decide makes the approval stale.
 */
export function changeFingerprint(a: { source: string; base: string | null; resolutions: unknown; decided: string | null }): string {
  return contentHash(canonicalJson({ source: a.source, base: a.base, resolutions: a.resolutions ?? null, decided: a.decided, v: 2 }));
}

/** Whether a review seen at `revision` is about what `latest` would merge, under the rule. */
function current(doc: MergeRequestDoc, review: Review, stale: ProtectionRule['staleApprovals']): boolean {
  const latest = doc.revisions.at(-1);
  const seen = doc.revisions.find((r) => r.n === review.revision);
  if (latest === undefined || seen === undefined) return false;
  return stale === 'head_move' ? seen.n === latest.n : seen.fingerprint === latest.fingerprint;
}

/** The reviewers whose latest verdict is a current approval, and those whose is a current request for changes. */
export function standing(
  doc: MergeRequestDoc,
  stale: ProtectionRule['staleApprovals'],
): { approvedBy: string[]; changesRequestedBy: string[] } {
  const latest = new Map<string, Review>();
  for (const r of doc.reviews) if (r.verdict !== 'comment' && r.author !== doc.author) latest.set(r.author, r);
  const approvedBy: string[] = [];
  const changesRequestedBy: string[] = [];
  for (const [who, r] of [...latest].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!current(doc, r, stale)) continue;
    (r.verdict === 'approve' ? approvedBy : changesRequestedBy).push(who);
  }
  return { approvedBy, changesRequestedBy };
}

export interface Mergeability {
  mergeable: boolean;
  /** Why not, one sentence each; empty when mergeable. */
  reasons: string[];
  approvals: { required: number; current: string[] };
  changesRequestedBy: string[];
  /** The checks the target's rule requires, and those that passed on the latest revision. */
  checks: { required: string[]; passed: string[] };
}

/** The heads of a branch pair as a revision pins them: commit ids, and content states where known. */
export interface PinnedHeads {
  source: string;
  target: string;
  sourceState?: string | undefined;
  targetState?: string | undefined;
}

/** The heads a revision pinned, as `pinsHeads` compares them. */
export function pinnedBy(rev: Pick<Revision, 'sourceHead' | 'targetHead' | 'sourceState' | 'targetState'>): PinnedHeads {
  return { source: rev.sourceHead, target: rev.targetHead, sourceState: rev.sourceState, targetState: rev.targetState };
}

/** Whether `rev` pins `heads`: by content state where the revision has one (maintenance moves no state), else by commit. */
export function pinsHeads(rev: Revision, heads: PinnedHeads): boolean {
  const source = rev.sourceState !== undefined ? rev.sourceState === heads.sourceState : rev.sourceHead === heads.source;
  const target = rev.targetState !== undefined ? rev.targetState === heads.targetState : rev.targetHead === heads.target;
  return source && target;
}

/** Whether the request may merge now: `heads` are the branches' heads as they are, `rule` the target's protection. */
export function mergeability(doc: MergeRequestDoc, at: { heads: PinnedHeads | undefined; rule: ProtectionRule | undefined }): Mergeability {
  const stale = at.rule?.staleApprovals ?? 'result_change';
  const required = at.rule?.requiredApprovals ?? 0;
  const { approvedBy, changesRequestedBy } = standing(doc, stale);
  const approvals = { required, current: approvedBy };
  const latest = doc.revisions.at(-1);
  const requiredChecks = at.rule?.requiredChecks ?? [];
  const results = latest?.checks ?? {};
  const checks = { required: requiredChecks, passed: requiredChecks.filter((c) => results[c]?.status === 'pass') };
  if (doc.state !== 'open') return { mergeable: false, reasons: [`the request is ${doc.state}`], approvals, changesRequestedBy, checks };
  const reasons: string[] = [];
  if (at.heads === undefined) reasons.push(`branch ${doc.source} or ${doc.target} no longer exists`);
  else if (latest === undefined || !pinsHeads(latest, at.heads))
    reasons.push('a branch moved since the latest revision: revise the request');
  if (latest !== undefined && latest.preview.conflicts > 0) reasons.push(`${latest.preview.conflicts} conflicts are unresolved`);
  if (latest?.preview.outcome === 'already_up_to_date') reasons.push(`${doc.target} already holds everything ${doc.source} brings`);
  if (approvedBy.length < required) reasons.push(`${approvedBy.length} of ${required} required approvals`);
  if (changesRequestedBy.length > 0) reasons.push(`changes requested by ${changesRequestedBy.join(', ')}`);
  for (const name of requiredChecks) {
    const r = results[name];
    if (r === undefined || r.status === 'pending') reasons.push(`check ${name} has not reported on revision ${latest?.n ?? 1}`);
    else if (r.status === 'fail') reasons.push(`check ${name} failed${r.message === '' ? '' : `: ${r.message}`}`);
    else if (r.status === 'error') reasons.push(`check ${name} could not run: ${r.message}`);
  }
  return { mergeable: reasons.length === 0, reasons, approvals, changesRequestedBy, checks };
}
