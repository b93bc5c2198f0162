import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { text } from '../../inputs.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { mergeRequestNow } from '../../review/merge-request-now.js';
import type { MergeResultDto } from '../../dtos.js';
import { GraphqlMergeResultZ, graphqlMergeResult, receiveMergeResult } from '../merges/merge-result.js';
import { requestId } from './request-id.js';
import { MergeConflictsZ, MergeSuccessZ } from '../../results/merge.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/**
 * Merge a request: revised first, then merged only if mergeable (`request_not_mergeable` with the
 * reasons otherwise), pinned to its revision's heads with its saved resolutions; the commit records
 * the request. The only way a merge lands on a protected branch without an admin's bypass.
 */
export const mergeMergeRequest = defineOperation({
  name: 'mergeMergeRequest',
  summary: 'Merge a merge request that is mergeable.',
  role: 'write',
  access: ({ id, deleteBranch }) => ({ request: { id, as: deleteBranch === true ? 'both' : 'reviewer' } }),
  input: z.object({ id: requestId, message: text(2000).optional(), deleteBranch: z.boolean().optional() }).strict(),
  async run(service, input, ctx): Promise<{ request: MergeRequestDto; result: MergeResultDto }> {
    const { request, result } = await mergeRequestNow(reviewPorts(service), input, ctx);
    return { request: await requestDto(service, { doc: request }, ctx), result };
  },
  output: z.object({
    request: MergeRequestRecordZ,
    result: z.union([MergeSuccessZ, MergeConflictsZ]),
  }),
  http: { method: 'POST', path: '/merge-requests/{id}/merge' },
  graphql: [
    {
      type: 'Mutation',
      field: 'mergeMergeRequest',
      result: (r) => ({ ...r, result: graphqlMergeResult(r.result) }),
      output: z.object({ request: MergeRequestRecordZ, result: GraphqlMergeResultZ }).meta({ title: 'MergeRequestMerge' }),
      receive: (v) => {
        const { request, result } = v as { request: MergeRequestDto; result: unknown };
        return { request, result: receiveMergeResult(result) };
      },
    },
  ],
});
