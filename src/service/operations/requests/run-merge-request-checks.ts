import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { recheckRequest } from '../../review/revise-request.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** Revise the request, then ask every check hook about its latest revision again and wait for the answers. */
export const runMergeRequestChecks = defineOperation({
  name: 'runMergeRequestChecks',
  summary: 'Run the pre-merge checks on a merge request again, and wait for them.',
  role: 'write',
  access: ({ id }) => ({ request: { id, as: 'reader' } }),
  input: z.object({ id: requestId }).strict(),
  async run(service, { id }, ctx): Promise<MergeRequestDto> {
    return requestDto(service, await recheckRequest(reviewPorts(service), id, ctx), ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'POST', path: '/merge-requests/{id}/checks' },
  graphql: [{ type: 'Mutation', field: 'runMergeRequestChecks' }],
});
