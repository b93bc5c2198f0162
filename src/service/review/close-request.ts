/** Close a request without merging; closing a closed request changes nothing. */
import type { MergeRequestDoc } from '../../model/merge-request.js';
import type { RequestContext } from '../request-context.js';
import { refuseWhileMerging, settledForChange } from './request-merging.js';
import { refuseUnlessOpen } from './request-state.js';
import type { ReviewPorts } from './review-ports.js';

export async function closeRequest(ports: ReviewPorts, id: string, ctx: RequestContext): Promise<MergeRequestDoc> {
  await settledForChange(ports, id, ctx);
  return ports.requests.update(
    id,
    async (doc) => {
      if (doc.state === 'closed') return undefined;
      refuseUnlessOpen(doc);
      refuseWhileMerging(doc);
      return { ...doc, state: 'closed', closed: { by: ports.actor(ctx), time: ports.now() } };
    },
    ctx.signal,
  );
}
