import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, text } from '../../inputs.js';
import { requestDto, type MergeRequestDto } from '../../review/request-dto.js';
import { reviewPorts } from '../../review/review-ports.js';
import { openRequest } from '../../review/open-request.js';
import { MergeRequestRecordZ } from '../../results/merge-request.js';

/** Open a merge request of a source branch into a target (main by default), with its first revision computed. */
export const openMergeRequest = defineOperation({
  name: 'openMergeRequest',
  summary: 'Open a merge request: a source branch into a target, with its first revision previewed.',
  role: 'write',
  access: ({ source, target = 'main' }) => ({ reads: [{ branch: source }, { branch: target }] }),
  input: z
    .object({
      source: branchName,
      target: branchName.optional(),
      title: text(300).refine((t) => t.trim() !== '', 'a title is required'),
      description: text(20_000).optional(),
    })
    .strict(),
  async run(service, input, ctx): Promise<MergeRequestDto> {
    const opened = await openRequest(
      reviewPorts(service),
      { source: input.source, target: input.target ?? 'main', title: input.title, description: input.description ?? '' },
      ctx,
    );
    return requestDto(service, opened, ctx);
  },
  output: MergeRequestRecordZ,
  http: { method: 'POST', path: '/merge-requests' },
  graphql: [{ type: 'Mutation', field: 'openMergeRequest' }],
  mcp: [
    {
      tool: 'merge_request_open',
      description:
        'Open a merge request of a source branch into a target (main by default) for review, with a title and description. Use it when the target is protected and a direct merge is refused. Returns the request with its first revision: a preview of the merge, its conflicts, and whether it may merge yet.',
    },
  ],
});
