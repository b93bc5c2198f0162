import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, commitId, RefZ, bypassProtection } from '../../inputs.js';
import { protectionPass } from '../../protection-pass.js';
import type { BranchDto } from '../../dtos.js';
import { BranchZ } from '../../results/branch.js';

/**
 * Move a branch to any commit (`to` is any ref: `main~3`, `commit:<id>`, `main@{time}`), if its
 * head is still `expectedHead`. Admin only. The old head stays readable by commit id and as
 * `<branch>@{time}`, and GC keeps it for its grace.
 */
export const resetBranch = defineOperation({
  name: 'resetBranch',
  summary: 'Move a branch to any commit, if its head is still the one expected (admin).',
  role: 'admin',
  access: ({ name, to }) => ({ reads: [to], writes: [name] }),
  input: z.object({ name: branchName, to: RefZ, expectedHead: commitId, bypassProtection }).strict(),
  async run(service, { name, to, expectedHead, bypassProtection: bypass }, ctx): Promise<BranchDto> {
    const protection = protectionPass(ctx, bypass);
    const r = await service.graph.resetBranch(name, to, { signal: ctx.signal, actor: ctx.actor, expectedHead, protection });
    service.catchUps.forget(name);
    return service.branchDto({ name, head: r.head.manifest.commit, rec: r.record }, ctx);
  },
  output: BranchZ,
  http: { method: 'PUT', path: '/branches/{id}', params: { id: 'name' } },
  graphql: [{ type: 'Mutation', field: 'resetBranch' }],
});
