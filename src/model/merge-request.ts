/**
 * Merge requests: the stored document and the rules that decide whether
 * one may merge. Pure: storage is graph/merge-requests.ts, the actions are
 * service/merge-request-actions.ts.
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
  counts: z.record(z.string(), z.number().int()),
  tables: z.array(z.object({ table: z.string(), action: z.string(), sourceChanges: z.number().int(), targetChanges: z.number().int() })),
});
export type RevisionPreview = z.infer<typeof PreviewZ>;

export const RevisionZ = z.object({
  n: z.number().int().min(1),
  sourceHead: z.string(),
  targetHead: z.string(),
  base: z.string().nullable(),
  /** What the merge brings: the source head, the merge base and the resolutions, hashed. */
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
  /** The revision a merge was started for and not yet recorded: a retry replays that merge. */
  merging: z.number().int().min(1).optional(),
  merged: z.object({ commit: z.string(), by: z.string(), time: z.string(), revision: z.number().int().min(1) }).optional(),
  closed: z.object({ by: z.string(), time: z.string() }).optional(),
});
export type MergeRequestDoc = z.infer<typeof MergeRequestDocZ>;

/** The fingerprint of what a merge brings: what `result_change` approvals are about. */
export function changeFingerprint(a: { sourceHead: string; base: string | null; resolutions: unknown }): string {
  return contentHash(canonicalJson({ source: a.sourceHead, base: a.base, resolutions: a.resolutions ?? null }));
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

/** Whether the request may merge now: `heads` are the branches' heads as they are, `rule` the target's protection. */
export function mergeability(
  doc: MergeRequestDoc,
  at: { heads: { source: string; target: string } | undefined; rule: ProtectionRule | undefined },
): Mergeability {
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
  else if (latest === undefined || latest.sourceHead !== at.heads.source || latest.targetHead !== at.heads.target)
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
