import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import type { BranchDto } from '../../dtos.js';
import { setProtection } from './protect-branch.js';
import { BranchZ } from '../../results/branch.js';

/** Remove a branch's protection (admin): direct changes are accepted again. */
export const unprotectBranch = defineOperation({
  name: 'unprotectBranch',
  summary: "Remove a branch's protection.",
  role: 'admin',
  access: ({ name }) => ({ writes: [name] }),
  input: z.object({ name: branchName }).strict(),
  run: (service, { name }, ctx): Promise<BranchDto> => setProtection(service, { name, rule: null }, ctx),
  output: BranchZ,
  http: { method: 'DELETE', path: '/branches/{id}/protection', params: { id: 'name' } },
  graphql: [{ type: 'Mutation', field: 'unprotectBranch' }],
});
