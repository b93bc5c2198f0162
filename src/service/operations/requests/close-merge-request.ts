import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { closeRequest, requestDto, type MergeRequestDto } from '../../merge-request-actions.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** Close a merge request without merging it. */
export const closeMergeRequest = defineOperation({
  name: 'closeMergeRequest',
  summary: 'Close a merge request without merging.',
  role: 'write',
  input: z.object({ id: requestId }).strict(),
  async run(service, { id }, ctx): Promise<MergeRequestDto> {
    return requestDto(service, await closeRequest(service, id, ctx), ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'POST', path: '/merge-requests/{id}/close' },
  graphql: [{ type: 'Mutation', field: 'closeMergeRequest' }],
});
