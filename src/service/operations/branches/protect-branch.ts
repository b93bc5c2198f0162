import { ProtectionRuleZ, type ProtectionRule } from '../../../model/branch-protection.js';
import type { Snapshot } from '../../../graph/snapshot.js';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import type { BranchDto } from '../../dtos.js';
import type { BranchgraphService } from '../../service.js';
import type { RequestContext } from '../../request-context.js';
import { BranchZ } from '../../results/branch.js';

/**
 * Protect a branch (admin): no direct writes, ingests, schema changes, cherry-picks, reverts, resets
 * or deletion; merges only through a merge request with the approvals the rule asks for, or by an
 * admin's recorded bypass when the rule allows one. Setting it again replaces the rule.
 */
export const protectBranch = defineOperation({
  name: 'protectBranch',
  summary: 'Protect a branch: changes land only through approved merge requests.',
  role: 'admin',
  access: ({ name }) => ({ writes: [name] }),
  input: ProtectionRuleZ.extend({ name: branchName }).strict(),
  run: (service, { name, ...rule }, ctx): Promise<BranchDto> => setProtection(service, { name, rule }, ctx),
  output: BranchZ,
  http: { method: 'PUT', path: '/branches/{id}/protection', params: { id: 'name' } },
  graphql: [{ type: 'Mutation', field: 'protectBranch' }],
});

/** Set (or remove, with null) a branch's rule, and the branch as it is now. */
export async function setProtection(
  service: BranchgraphService,
  a: { name: string; rule: ProtectionRule | null },
  ctx: RequestContext,
): Promise<BranchDto> {
  await service.graph.protectBranch(a.name, a.rule, { signal: ctx.signal, actor: ctx.actor });
  const head = await service.graph.branchHead(a.name, ctx.signal);
  return service.branchDto({ name: a.name, head: head.manifest.commit, rec: head.branch as NonNullable<Snapshot['branch']> }, ctx);
}
