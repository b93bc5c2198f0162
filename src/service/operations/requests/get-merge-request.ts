import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** One merge request: its revisions, reviews and whether it may merge now. Reading never revises it. */
export const getMergeRequest = defineOperation({
  name: 'getMergeRequest',
  summary: 'One merge request with its revisions, reviews and mergeability.',
  role: 'read',
  access: ({ id }) => ({ request: { id, as: 'reader' } }),
  input: z.object({ id: requestId }).strict(),
  async run(service, { id }, ctx): Promise<MergeRequestDto> {
    return requestDto(service, { doc: await service.graph.requests.get(id, ctx.signal) }, ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'GET', path: '/merge-requests/{id}' },
  graphql: [{ type: 'Query', field: 'mergeRequest' }],
  mcp: [
    {
      tool: 'merge_request_get',
      description:
        'One merge request by id: its revisions (each a preview of the merge), reviews, checks, and whether it may merge now and if not why.',
      idempotent: true,
    },
  ],
});
