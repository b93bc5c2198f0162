import { BranchgraphError } from '../model/errors.js';
import type { ProtectionPass } from '../model/branch-protection.js';
import type { RequestContext } from './request-context.js';

/** What a change presents to a protected branch when its caller asked to bypass the rule: only an admin may. */
export function protectionPass(ctx: RequestContext, bypass: boolean | undefined): ProtectionPass | undefined {
  if (bypass !== true) return undefined;
  if (ctx.role !== undefined && ctx.role !== 'admin')
    throw new BranchgraphError('forbidden', 'bypassing a branch protection needs the admin role');
  return { bypass: true };
}
