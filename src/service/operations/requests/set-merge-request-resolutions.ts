import { z } from 'zod';
import type { MergeResolutions } from '../../../merge/resolutions.js';
import { defineOperation } from '../../operation.js';
import { MergeResolutionsZ } from '../../inputs.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { setResolutions } from '../../review/resolve-request.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/**
 * Save the conflict resolutions the request's merge will apply (a strategy and per-conflict choices
 * with the values they expect, as a merge takes them; null or absent removes them). The request is revised at
 * once, so a choice that names no conflict is refused now, and approvals of the unresolved result go
 * stale.
 */
export const setMergeRequestResolutions = defineOperation({
  name: 'setMergeRequestResolutions',
  summary: "Save the resolutions a merge request's merge will apply.",
  role: 'write',
  access: ({ id }) => ({ request: { id, as: 'author' } }),
  input: z.object({ id: requestId, resolutions: MergeResolutionsZ.nullable().optional() }).strict(),
  async run(service, { id, resolutions }, ctx): Promise<MergeRequestDto> {
    return requestDto(
      service,
      await setResolutions(reviewPorts(service), { id, resolutions: (resolutions ?? null) as MergeResolutions | null }, ctx),
      ctx,
    );
  },
  output: MergeRequestRecordZ,
  http: { method: 'PUT', path: '/merge-requests/{id}/resolutions' },
  graphql: [{ type: 'Mutation', field: 'setMergeRequestResolutions' }],
});
