import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { closeRequest } from '../../review/close-request.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** Close a merge request without merging it. */
export const closeMergeRequest = defineOperation({
  name: 'closeMergeRequest',
  summary: 'Close a merge request without merging.',
  role: 'write',
  access: ({ id }) => ({ request: { id, as: 'either' } }),
  input: z.object({ id: requestId }).strict(),
  async run(service, { id }, ctx): Promise<MergeRequestDto> {
    return requestDto(service, { doc: await closeRequest(reviewPorts(service), id, ctx) }, ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'POST', path: '/merge-requests/{id}/close' },
  graphql: [{ type: 'Mutation', field: 'closeMergeRequest' }],
});
