import { z } from 'zod';
import { BranchgraphError } from '../../../model/errors.js';
import { defineOperation } from '../../operation.js';
import { branchName, commitId, MERGE_COMMON } from '../../inputs.js';
import { idempotencyKeyHash } from '../../../graph/idempotency.js';
import { idempotentMerge } from '../../idempotent-merge.js';
import { runMerge, servedMergeRequest } from '../../merge-handler.js';
import type { MergeResultDto } from '../../dtos.js';
import type { BranchgraphService } from '../../service.js';
import type { RequestContext } from '../../request-context.js';
import { GraphqlMergeResultZ, graphqlMergeResult, MERGE_HTTP, MergeResultZ, receiveMergeResult } from './merge-result.js';

/**
 * Merge a branch into another (main by default): one atomic commit, or nothing and the exact
 * conflicts as a result (not an error). With an idempotency key (REST: the Idempotency-Key
 * header), a retry returns the first result.
 */
const input = z
  .object({
    ...MERGE_COMMON,
    source: branchName,
    into: branchName.optional(),
    expectedSourceHead: commitId.optional(),
    deleteBranch: z.boolean().optional(),
    width: z.union([z.literal(1), z.literal(2), z.literal(4)]).optional(),
    idempotencyKey: z
      .string()
      .regex(/^[\x21-\x7e]{1,200}$/, '1-200 printable ASCII characters, no spaces')
      .optional(),
  })
  .strict();

export const mergeBranch = defineOperation({
  name: 'mergeBranch',
  summary: 'Merge a branch: one atomic commit, or nothing and the exact conflicts.',
  role: 'write',
  access: ({ source, into = 'main', deleteBranch }) => ({
    reads: [{ branch: source }],
    writes: deleteBranch === true ? [into, source] : [into],
  }),
  input,
  // Typed here: the result's type is fixed before the bindings below, which are typed functions.
  async run(service: BranchgraphService, request: z.output<typeof input>, ctx: RequestContext): Promise<MergeResultDto> {
    const { idempotencyKey, ...ask } = request;
    if (ask.deleteBranch === true && ask.source.startsWith('remote:'))
      throw new BranchgraphError('invalid_input', 'a remote-tracking ref is moved only by fetch: it cannot be deleted by a merge', {
        issues: [{ path: 'deleteBranch', message: 'the source is a remote-tracking ref' }],
      });
    const served = servedMergeRequest(service, ask, ctx);
    const here = () =>
      idempotencyKey === undefined || served.dryRun
        ? runMerge(service, served, { ctx })
        : idempotentMerge(service, served, { keyHash: idempotencyKeyHash(idempotencyKey), ctx });
    // Into a branch another server publishes: there, in its lane (merge-forwarding.ts).
    const forwarding = service.forwarding;
    if (forwarding === undefined || served.dryRun) return here();
    return forwarding.merge({
      branch: served.into,
      ctx,
      input: request,
      here,
      published: (r) => r.status === 'success' && r.commit !== null,
    });
  },
  output: MergeResultZ,
  http: {
    method: 'POST',
    path: '/branches/{id}/merge',
    params: { id: 'source' },
    headers: { 'idempotency-key': 'idempotencyKey' },
    ...MERGE_HTTP,
  },
  graphql: [
    {
      type: 'Mutation',
      field: 'mergeBranch',
      input: 'MergeInput',
      result: graphqlMergeResult,
      output: GraphqlMergeResultZ,
      receive: receiveMergeResult,
    },
  ],
  mcp: [
    {
      tool: 'merge_preview',
      description:
        'Preview merging a branch into another (main by default) without changing anything: the outcome, per-table counts, and the exact conflicts, each with its base, source and target values. Call it before merge, and settle conflicts by passing resolutions to merge.',
      fixed: { dryRun: true },
      idempotent: true,
    },
    {
      tool: 'merge',
      description:
        'Merge a branch into another (main by default) as one atomic commit, or change nothing and answer the exact conflicts (status conflicts: an answer, not an error). Settle conflicts with `resolutions` (a strategy, source-wins or target-wins, or a choice per conflict). Give an `idempotencyKey` so that a retry answers the first result instead of merging again. A protected target refuses: open a merge request instead.',
    },
  ],
});
