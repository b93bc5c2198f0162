/**
 * The merge marker: a request records the revision it is merging before
 * the merge runs (under an idempotency key derived from that revision),
 * and is marked merged after. A retry after a crash finds the marker and
 * replays the same merge, whose stored result says what landed. A marker
 * whose merge can no longer land is cleared; until then the request takes
 * no other change.
 */
import { BranchgraphError } from '../../model/errors.js';
import { MAX_PUBLICATION_MS } from '../../graph/gc.js';
import { requestRevisionKeyHash } from '../../graph/idempotency.js';
import type { MergeRequestDoc } from '../../model/merge-request.js';
import type { MergeResultDto } from '../dtos.js';
import type { RequestContext } from '../request-context.js';
import { refuseUnlessOpen } from './request-state.js';
import type { ReviewPorts } from './review-ports.js';

/** How long after a request merge starts it may still land: a publication's longest life, twice over for clock drift. */
const MERGING_SETTLES_MS = 2 * MAX_PUBLICATION_MS;

/** Refuse a change to a request whose merge is under way (`settledForChange` decides first). */
export function refuseWhileMerging(doc: MergeRequestDoc): void {
  if (doc.merging === undefined) return;
  throw new BranchgraphError('publish_contention', `merge request ${doc.id} is merging revision ${doc.merging}; retry`, {
    details: { branch: doc.target },
  });
}

/**
 * A request whose merge was started and not recorded, settled so it may change: refused when the merge
 * landed (the request is marked merged) or may still land; given back with the marker cleared when it
 * can no longer land (a publication refuses once its snapshots are MAX_PUBLICATION_MS old).
 */
export async function settledForChange(ports: ReviewPorts, id: string, ctx: RequestContext): Promise<MergeRequestDoc> {
  const doc = await ports.requests.get(id, ctx.signal);
  if (doc.merging === undefined) return doc;
  const landed = await landedRevision(ports, doc, ctx);
  if (landed !== undefined) refuseUnlessOpen(landed.request);
  const since = Date.parse(doc.mergingSince ?? '1970-01-01T00:00:00Z');
  const until = since + MERGING_SETTLES_MS;
  if (Date.parse(ports.now()) < until)
    throw new BranchgraphError(
      'publish_contention',
      `merge request ${id} is merging revision ${doc.merging}: merge it again to finish that merge, or retry after ${new Date(until).toISOString()}`,
      { details: { branch: doc.target } },
    );
  return clearMerging(ports, { id, revision: doc.merging }, ctx);
}

/** The merge of the marked revision if it landed, with the request marked merged. */
export async function landedRevision(
  ports: ReviewPorts,
  doc: MergeRequestDoc,
  ctx: RequestContext,
): Promise<{ request: MergeRequestDoc; result: MergeResultDto } | undefined> {
  const n = doc.merging as number;
  const landed = await ports.landed({ into: doc.target, keyHash: requestRevisionKeyHash(doc.id, n) }, ctx);
  if (landed === undefined || landed.result.status !== 'success' || landed.result.commit === null) return undefined;
  const request = await markMerged(ports, { id: doc.id, rev: n, commit: landed.result.commit.id }, ctx);
  return { request, result: landed.result };
}

/** Forget a started merge that did not land (only if `revision` is still the one merging). */
export function clearMerging(ports: ReviewPorts, a: { id: string; revision: number }, ctx: RequestContext): Promise<MergeRequestDoc> {
  return ports.requests.update(
    a.id,
    async (d) => {
      if (d.merging !== a.revision) return undefined;
      const { merging: _m, mergingSince: _s, ...rest } = d;
      return rest;
    },
    ctx.signal,
  );
}

/**
 * Record that `rev` merged as `commit`: on `read` when the caller holds the newest version (one
 * write), else on whatever version is newest.
 */
export async function markMerged(
  ports: ReviewPorts,
  a: { id: string; rev: number; commit: string; read?: MergeRequestDoc },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  const merged = (d: MergeRequestDoc): MergeRequestDoc => {
    const { merging: _m, mergingSince: _s, ...rest } = d;
    return { ...rest, state: 'merged', merged: { commit: a.commit, by: ports.actor(ctx), time: ports.now(), revision: a.rev } };
  };
  const written = a.read === undefined ? undefined : await ports.requests.replace(a.read, merged(a.read), ctx.signal);
  return written ?? ports.requests.update(a.id, async (d) => (d.state === 'merged' ? undefined : merged(d)), ctx.signal);
}
