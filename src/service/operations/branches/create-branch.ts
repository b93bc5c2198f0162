import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, refOrMain } from '../../inputs.js';
import type { BranchDto } from '../../dtos.js';
import { BranchZ } from '../../results/branch.js';

/** A branch at any ref (main's head by default); it shares its parent's data and copies nothing. */
export const createBranch = defineOperation({
  name: 'createBranch',
  summary: 'Create a branch at a ref (default main); it copies nothing.',
  role: 'write',
  input: z.object({ name: branchName, from: refOrMain }).strict(),
  async run(service, { name, from }, ctx): Promise<BranchDto> {
    const r = await service.graph.createBranch(name, from, { signal: ctx.signal, actor: ctx.actor });
    return service.branchDto({ name, head: r.head.manifest.commit, rec: r.record }, ctx);
  },
  output: BranchZ,
  http: { method: 'POST', path: '/branches', status: 201 },
  graphql: [{ type: 'Mutation', field: 'createBranch' }],
  mcp: [
    {
      tool: 'branch_create',
      description:
        'Create a branch from a ref (main by default). It copies nothing, so make one per task: write there, then merge_preview and merge it back (or merge_request_open when the target is protected). Returns the branch with its head commit.',
    },
  ],
});
