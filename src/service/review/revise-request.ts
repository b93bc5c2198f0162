/** Revise a request to the branches as they are now; or revise it and run its checks again, waiting for the answers. */
import type { MergeRequestDoc } from '../../model/merge-request.js';
import type { RequestContext } from '../request-context.js';
import type { RequestHeads } from './request-heads.js';
import { refuseUnlessOpen } from './request-state.js';
import type { ReviewPorts } from './review-ports.js';
import { updateRevised } from './revising.js';

export async function reviseRequest(
  ports: ReviewPorts,
  id: string,
  ctx: RequestContext,
): Promise<{ doc: MergeRequestDoc; heads: RequestHeads | undefined }> {
  const revised = await updateRevised(ports, { id }, ctx);
  ports.checks.start(revised.doc, ctx);
  return revised;
}

/** Revise the request, then run every check on its latest revision again and wait for the answers. */
export async function recheckRequest(
  ports: ReviewPorts,
  id: string,
  ctx: RequestContext,
): Promise<{ doc: MergeRequestDoc; heads: RequestHeads | undefined }> {
  const { doc, heads } = await updateRevised(ports, { id }, ctx);
  refuseUnlessOpen(doc);
  return { doc: await ports.checks.run({ doc, again: true }, ctx), heads };
}
