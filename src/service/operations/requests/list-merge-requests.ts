import { z } from 'zod';
import { REQUEST_STATES } from '../../../model/merge-request.js';
import { defineOperation } from '../../operation.js';
import { visibleRequest } from '../../access.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { requestId } from './request-id.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** Merge requests, newest first, one page at a time; `state` keeps one state (open by default, or all). */
export const listMergeRequests = defineOperation({
  name: 'listMergeRequests',
  summary: 'Merge requests, newest first, by state.',
  role: 'read',
  access: () => 'filtered',
  input: z
    .object({
      state: z.enum([...REQUEST_STATES, 'all']).optional(),
      limit: z.number().int().min(1).max(100).optional(),
      cursor: requestId.optional(),
    })
    .strict(),
  async run(service, { state = 'open', limit = 50, cursor }, ctx): Promise<{ requests: MergeRequestDto[]; nextCursor: string | null }> {
    const keep = (doc: { state: string; source: string; target: string }) =>
      (state === 'all' || doc.state === state) && visibleRequest(ctx, doc);
    const page = await service.graph.requests.list({ after: cursor, limit, keep, signal: ctx.signal });
    const requests = await Promise.all(page.requests.map((doc) => requestDto(service, { doc }, ctx)));
    return { requests, nextCursor: page.next ?? null };
  },
  output: z.object({
    requests: z.array(MergeRequestRecordZ),
    nextCursor: z.string().nullable(),
  }),
  http: { method: 'GET', path: '/merge-requests' },
  graphql: [{ type: 'Query', field: 'mergeRequests' }],
});
