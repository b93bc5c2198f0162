/**
 * Cherry-pick and revert are one operation shape on a different kind: one
 * commit's change applied to a branch (the commit named by any ref), with what a merge takes besides (no
 * source branch, no width), through the merge handler, answering as a
 * merge does. `applyCommitOperation` builds each from its name, route and
 * GraphQL field.
 */
import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, MERGE_COMMON, RefZ } from '../../inputs.js';
import { runMerge, servedMergeRequest } from '../../merge-handler.js';
import type { MergeResultDto } from '../../dtos.js';
import type { BranchgraphService } from '../../service.js';
import type { RequestContext } from '../../request-context.js';
import { GraphqlMergeResultZ, graphqlMergeResult, MERGE_HTTP, MergeResultZ, receiveMergeResult } from './merge-result.js';

// The commit is any ref (`commit:<id>`, a bare id, `feature~2`, `main^2`); it is resolved to its commit id first.
const input = z.object({ ...MERGE_COMMON, branch: branchName, commit: RefZ }).strict();

export function applyCommitOperation(op: { name: string; kind: 'cherry_pick' | 'revert'; summary: string; path: string; field: string }) {
  return defineOperation({
    name: op.name,
    summary: op.summary,
    role: 'write',
    access: ({ commit, branch }) => ({ reads: [commit], writes: [branch] }),
    input,
    output: MergeResultZ,
    // Typed here: the result's type is fixed before the bindings below, which are typed functions.
    async run(
      service: BranchgraphService,
      { commit, branch, ...rest }: z.output<typeof input>,
      ctx: RequestContext,
    ): Promise<MergeResultDto> {
      const source = (await service.snapshot(commit, ctx)).manifest.commit.id;
      return runMerge(service, servedMergeRequest(service, { ...rest, source, into: branch, apply: op.kind }, ctx), { ctx });
    },
    http: { method: 'POST', path: op.path, params: { id: 'branch' }, ...MERGE_HTTP },
    graphql: [
      {
        type: 'Mutation',
        field: op.field,
        input: 'ApplyCommitInput',
        result: graphqlMergeResult,
        output: GraphqlMergeResultZ,
        receive: receiveMergeResult,
      },
    ],
  });
}
