/** Save the resolutions a request's merge will apply (absent or null removes them), checked by a preview now, and revise. */
import type { MergeRequestDoc } from '../../model/merge-request.js';
import type { MergeResolutions } from '../../merge/resolutions.js';
import type { RequestContext } from '../request-context.js';
import type { RequestHeads } from './request-heads.js';
import { refuseWhileMerging, settledForChange } from './request-merging.js';
import { refuseUnlessOpen } from './request-state.js';
import type { ReviewPorts } from './review-ports.js';
import { updateRevised } from './revising.js';

export async function setResolutions(
  ports: ReviewPorts,
  a: { id: string; resolutions: MergeResolutions | null },
  ctx: RequestContext,
): Promise<{ doc: MergeRequestDoc; heads: RequestHeads | undefined }> {
  const read = await settledForChange(ports, a.id, ctx);
  const saved = await updateRevised(
    ports,
    {
      id: a.id,
      read,
      before: (stored) => {
        refuseUnlessOpen(stored);
        refuseWhileMerging(stored);
        const { resolutions: _old, ...rest } = stored;
        return a.resolutions === null ? rest : { ...rest, resolutions: a.resolutions };
      },
    },
    ctx,
  );
  ports.checks.start(saved.doc, ctx);
  return saved;
}
