import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import type { Snapshot } from '../../../graph/snapshot.js';
import type { BranchDto } from '../../dtos.js';
import { BranchZ } from '../../results/branch.js';

export const getBranch = defineOperation({
  name: 'getBranch',
  summary: 'A branch with its head commit and where it was forked from.',
  role: 'read',
  access: ({ name }) => ({ reads: [{ branch: name }] }),
  input: z.object({ name: branchName }).strict(),
  async run(service, { name }, ctx): Promise<BranchDto> {
    const head = await service.graph.branchHead(name, ctx.signal);
    return service.branchDto({ name, head: head.manifest.commit, rec: head.branch as NonNullable<Snapshot['branch']> }, ctx);
  },
  output: BranchZ,
  http: { method: 'GET', path: '/branches/{id}', params: { id: 'name' } },
  graphql: [{ type: 'Query', field: 'branch' }],
});
