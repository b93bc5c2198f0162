import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { reviseRequest } from '../../review/revise-request.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** Give the request a new revision if a head moved since its latest (a preview pinned to both heads); else leave it. */
export const reviseMergeRequest = defineOperation({
  name: 'reviseMergeRequest',
  summary: 'Revise a merge request to the branches as they are now.',
  role: 'write',
  access: ({ id }) => ({ request: { id, as: 'author' } }),
  input: z.object({ id: requestId }).strict(),
  async run(service, { id }, ctx): Promise<MergeRequestDto> {
    return requestDto(service, await reviseRequest(reviewPorts(service), id, ctx), ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'POST', path: '/merge-requests/{id}/revise' },
  graphql: [{ type: 'Mutation', field: 'reviseMergeRequest' }],
});
