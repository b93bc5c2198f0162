/**
 * Merging a request: its current revision, if it is mergeable
 * (`request_not_mergeable` with the reasons otherwise), as a merge commit
 * that records the request, then the request marked merged.
 *
 * Safe to retry across a crash (request-merging.ts): the revision being
 * merged is recorded first, the merge runs under a key derived from it,
 * and a merge started earlier and not recorded is settled first. If it
 * landed, that is the answer; if not, the request is revised and checked
 * again like any other, so nothing unreviewed lands through a retry. A
 * target that moves under the merge makes it revise, re-check and merge
 * again, and from then on the round holds this process's writers to the
 * target (a steady writer would otherwise move it under every round).
 *
 * One round reads the request once and both heads once (revising), writes
 * the marker on the version it read, merges, and writes the outcome on the
 * version it wrote.
 */
import { BranchgraphError, isBranchgraphError } from '../../model/errors.js';
import { requestRevisionKeyHash } from '../../graph/idempotency.js';
import { mergeability, pinnedBy, type MergeRequestDoc, type Revision } from '../../model/merge-request.js';
import type { MergeResolutions } from '../../merge/resolutions.js';
import type { ProtectionRule } from '../../model/branch-protection.js';
import type { MergeResultDto } from '../dtos.js';
import type { RequestContext } from '../request-context.js';
import { clearMerging, landedRevision, markMerged, refuseWhileMerging } from './request-merging.js';
import { refuseUnlessOpen } from './request-state.js';
import type { ReviewPorts } from './review-ports.js';
import { updateRevised } from './revising.js';

/** Target moves a request's merge re-plans through before giving up (each re-checks mergeability). */
const MERGE_ROUNDS = 20;

interface MergeAsk {
  id: string;
  message?: string | undefined;
  deleteBranch?: boolean | undefined;
}

export async function mergeRequestNow(
  ports: ReviewPorts,
  a: MergeAsk,
  ctx: RequestContext,
): Promise<{ request: MergeRequestDoc; result: MergeResultDto }> {
  let read = await ports.requests.get(a.id, ctx.signal);
  refuseUnlessOpen(read);
  if (read.merging !== undefined) {
    const landed = await landedRevision(ports, read, ctx);
    if (landed !== undefined) return landed;
    read = await clearMerging(ports, { id: a.id, revision: read.merging }, ctx);
  }
  for (let round = 1; ; round++) {
    // A round after the target moved under the last one holds this process's writers to the target,
    // so the head it reads is the head it merges into (publication-lanes.ts `hold`).
    const go = () => mergeRound(ports, { ask: a, read, round }, ctx);
    const outcome = round === 1 ? await go() : await ports.holdingWriters(read.target, go, ctx.signal);
    if ('merged' in outcome) return outcome.merged;
    read = outcome.again;
  }
}

/** One round: the request revised, marked and merged; or the request to go round on again. */
async function mergeRound(
  ports: ReviewPorts,
  a: { ask: MergeAsk; read: MergeRequestDoc; round: number },
  ctx: RequestContext,
): Promise<{ merged: { request: MergeRequestDoc; result: MergeResultDto } } | { again: MergeRequestDoc }> {
  const { ask, round } = a;
  let marked: Awaited<ReturnType<typeof markedMergeable>>;
  try {
    marked = await markedMergeable(ports, { id: ask.id, read: a.read }, ctx);
  } catch (e) {
    // The target moved under every preview the revision tried (nothing is marked yet): go round, held.
    if (isBranchgraphError(e, 'head_moved') && round < MERGE_ROUNDS) return { again: await ports.requests.get(ask.id, ctx.signal) };
    throw e;
  }
  if (marked === undefined) {
    // Another writer (a check's answer, a review) got in before the marker: go round on the request as it is now.
    if (round >= MERGE_ROUNDS)
      throw new BranchgraphError('publish_contention', `merge request ${ask.id} is being changed concurrently; retry`);
    return { again: await ports.requests.get(ask.id, ctx.signal) };
  }
  let result: MergeResultDto;
  try {
    result = await revisionMerge(ports, { ...ask, ...marked }, ctx);
  } catch (e) {
    // Refused before publishing: nothing landed, so the request is free again; a moved head is revised and re-checked.
    if (isBranchgraphError(e, 'head_moved') || isBranchgraphError(e, 'resolution_stale')) {
      const read = await clearMerging(ports, { id: ask.id, revision: marked.rev.n }, ctx);
      if (round < MERGE_ROUNDS && isBranchgraphError(e, 'head_moved')) return { again: read };
    }
    throw e;
  }
  const { doc, rev } = marked;
  if (result.status === 'success' && result.commit !== null) {
    // Written on the version that holds the marker, without reading it again.
    return { merged: { request: await markMerged(ports, { id: ask.id, rev: rev.n, commit: result.commit.id, read: doc }, ctx), result } };
  }
  // Conflicts the target brought since, or nothing left to merge: nothing landed.
  return { merged: { request: await clearMerging(ports, { id: ask.id, revision: rev.n }, ctx), result } };
}

/**
 * The request revised now and marked as merging its latest revision, refused unless it may merge:
 * the request as stored with the marker, that revision, and the target's rule (from the heads revising
 * read); undefined when another writer got in before the marker.
 */
async function markedMergeable(ports: ReviewPorts, a: { id: string; read: MergeRequestDoc }, ctx: RequestContext) {
  const revised = await updateRevised(
    ports,
    {
      id: a.id,
      read: a.read,
      before: (d) => {
        refuseUnlessOpen(d);
        return d;
      },
    },
    ctx,
  );
  let { doc } = revised;
  const latest = doc.revisions.at(-1) as Revision;
  const rule = revised.heads?.rule;
  // A required check without an answer yet is asked now: the merge is decided on answers.
  if (rule?.requiredChecks.some((c) => latest.checks?.[c] === undefined) === true) doc = await ports.checks.run({ doc }, ctx);
  // Revising just read both heads: they are the latest revision's.
  const m = mergeability(doc, { heads: pinnedBy(latest), rule });
  if (!m.mergeable)
    throw new BranchgraphError('request_not_mergeable', `merge request ${a.id} cannot merge: ${m.reasons.join('; ')}`, {
      details: { reasons: m.reasons },
    });
  refuseWhileMerging(doc);
  const rev = doc.revisions.at(-1) as Revision;
  const marked = await ports.requests.replace(doc, { ...doc, merging: rev.n, mergingSince: ports.now() }, ctx.signal);
  return marked === undefined ? undefined : { doc: marked, rev, rule };
}

/**
 * The merge of one revision, exactly as it was reviewed: the source's content state it pinned, the
 * resolutions stored in it, and the set of conflicts they decided. The target may move meanwhile
 * (the merge plans again on it, as any merge does) unless the rule makes every head move stale.
 */
function revisionMerge(
  ports: ReviewPorts,
  a: MergeAsk & { doc: MergeRequestDoc; rev: Revision; rule: ProtectionRule | undefined },
  ctx: RequestContext,
): Promise<MergeResultDto> {
  const { doc, rev } = a;
  const pinTarget = a.rule?.staleApprovals === 'head_move' || rev.targetState === undefined;
  const ask = {
    source: doc.source,
    into: doc.target,
    ...(rev.sourceState !== undefined ? { expectedSourceState: rev.sourceState } : { expectedSourceHead: rev.sourceHead }),
    ...(pinTarget ? { expectedTargetHead: rev.targetHead } : {}),
    // A revision from before decided sets were recorded decides at most what it decided then: none new.
    ...(rev.decidedDigest !== undefined ? { expectedDecided: rev.decidedDigest } : {}),
    message: a.message ?? `merge request ${doc.id}: ${doc.title}`,
    deleteBranch: a.deleteBranch === true,
    protection: { request: doc.id },
    ...(rev.resolutions !== undefined ? { resolutions: rev.resolutions as MergeResolutions } : {}),
  };
  return ports.keyedMerge(ports.spec(ask, ctx), requestRevisionKeyHash(doc.id, rev.n), ctx);
}
