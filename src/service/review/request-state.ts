/** Which state a request must be in for a change: a merged or closed request takes no reviews, resolutions or merges. */
import { BranchgraphError } from '../../model/errors.js';
import type { MergeRequestDoc } from '../../model/merge-request.js';

export function refuseUnlessOpen(doc: MergeRequestDoc): void {
  if (doc.state === 'open') return;
  const how = doc.merged !== undefined ? ` as ${doc.merged.commit}` : '';
  throw new BranchgraphError('request_not_mergeable', `merge request ${doc.id} is ${doc.state}${how}`, {
    details: { reasons: [`the request is ${doc.state}`] },
  });
}
