/** Record a review on the request's current revision (revised first). The author may comment, not approve or request changes. */
import { BranchgraphError } from '../../model/errors.js';
import { MAX_REVIEWS, type MergeRequestDoc, type Verdict } from '../../model/merge-request.js';
import type { RequestContext } from '../request-context.js';
import type { RequestHeads } from './request-heads.js';
import { refuseUnlessOpen } from './request-state.js';
import type { ReviewPorts } from './review-ports.js';
import { updateRevised } from './revising.js';

export async function reviewRequest(
  ports: ReviewPorts,
  a: { id: string; verdict: Verdict; body: string; on?: { table: string; key?: string; property?: string } },
  ctx: RequestContext,
): Promise<{ doc: MergeRequestDoc; heads: RequestHeads | undefined }> {
  const author = ports.actor(ctx);
  const reviewed = await updateRevised(
    ports,
    {
      id: a.id,
      before: (stored) => {
        refuseUnlessOpen(stored);
        if (a.verdict !== 'comment' && author === stored.author)
          throw new BranchgraphError('forbidden', 'the author of a request cannot approve it or request changes on it');
        if (stored.reviews.length >= MAX_REVIEWS)
          throw new BranchgraphError('payload_too_large', `merge request ${a.id} has ${MAX_REVIEWS} reviews`);
        return stored;
      },
      // The review is tied to the revision the reviewer was given: the latest, just revised.
      after: (doc) => {
        const review = {
          n: doc.reviews.length + 1,
          verdict: a.verdict,
          body: a.body,
          author,
          revision: doc.revisions.at(-1)?.n ?? 1,
          time: ports.now(),
          ...(a.on ? { on: a.on } : {}),
        };
        return { ...doc, reviews: [...doc.reviews, review] };
      },
    },
    ctx,
  );
  ports.checks.start(reviewed.doc, ctx);
  return reviewed;
}
