import { z } from 'zod';
import { VERDICTS } from '../../../model/merge-request.js';
import { defineOperation } from '../../operation.js';
import { text } from '../../inputs.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { reviewRequest } from '../../review/review-request.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/**
 * Review a merge request as the caller: approve, request changes or comment (on the request, or on
 * a table, key or property of its diff), tied to its current revision (revised first).
 */
export const reviewMergeRequest = defineOperation({
  name: 'reviewMergeRequest',
  summary: 'Approve, request changes on or comment on a merge request.',
  role: 'write',
  access: ({ id }) => ({ request: { id, as: 'reviewer' } }),
  input: z
    .object({
      id: requestId,
      verdict: z.enum(VERDICTS),
      body: text(20_000).optional(),
      on: z
        .object({ table: text(200), key: text(4096).optional(), property: text(200).optional() })
        .strict()
        .meta({ title: 'ReviewPlace' })
        .optional(),
    })
    .strict(),
  async run(service, { id, verdict, body, on }, ctx): Promise<MergeRequestDto> {
    const reviewed = await reviewRequest(reviewPorts(service), { id, verdict, body: body ?? '', ...(on !== undefined ? { on } : {}) }, ctx);
    return requestDto(service, reviewed, ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'POST', path: '/merge-requests/{id}/reviews' },
  graphql: [{ type: 'Mutation', field: 'reviewMergeRequest' }],
});
