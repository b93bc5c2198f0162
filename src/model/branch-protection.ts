/**
 * Branch protection: the rule a branch can carry, and the decision whether
 * a change may land on a protected branch. Pure: the publisher, the WAL
 * writer and the branch operations ask it with what they know.
 *
 * A protected branch takes no direct writes, ingests, schema changes,
 * cherry-picks, reverts or resets, and cannot be deleted. Merges land only
 * through a merge request the service found mergeable (its approvals are
 * checked there, where the reviews are), or by an admin's bypass when the
 * rule allows one; a bypass is recorded on the commit. Folding
 * acknowledged WAL rows and compaction change no content and are always
 * allowed.
 */
import { z } from 'zod';
import { CHECK_NAME_RE } from './hook.js';

export const ProtectionRuleZ = z
  .object({
    /** Current approvals a merge request needs, none of them by its author. */
    requiredApprovals: z.number().int().min(0).max(100).default(1),
    /** Whether an admin may land a change anyway, recorded on the commit. */
    allowAdminBypass: z.boolean().default(false),
    /**
     * When an approval stops counting: `result_change` (the default) when the change the merge brings
     * or its resolutions change (a new source head, merge base or resolution), `head_move` when either
     * head moves at all.
     */
    staleApprovals: z.enum(['result_change', 'head_move']).default('result_change'),
    /** Checks (by name, model/hook.ts) that must pass on the revision a merge request merges. */
    requiredChecks: z.array(z.string().regex(CHECK_NAME_RE, 'a check name: letters, digits, ., _ and -')).max(20).default([]),
  })
  .strict();
export type ProtectionRule = z.infer<typeof ProtectionRuleZ>;

/** A protected branch's rule, who set it and when. */
export interface Protection extends ProtectionRule {
  setBy: string;
  time: string;
}

/** What a change presents to a protected branch: the request it merges, or an admin's bypass. */
export interface ProtectionPass {
  /** The merge request (found mergeable) whose merge this is. */
  request?: string;
  /** An admin asked to bypass the rule. */
  bypass?: boolean;
}

/** What would change the branch, as the rule tells them apart. */
export type GuardedChange = 'write' | 'ingest' | 'schema' | 'merge' | 'cherry_pick' | 'revert' | 'reset' | 'delete';

/** The guarded change a commit kind is; undefined for kinds that change no content (catch-up, compaction). */
export function guardedChangeOf(kind: string): GuardedChange | undefined {
  if (kind === 'fast_forward') return 'merge';
  return (['write', 'schema', 'merge', 'cherry_pick', 'revert'] as const).find((k) => k === kind);
}

export type ProtectionVerdict = { allowed: true; bypassed: boolean } | { allowed: false; reason: string };

/** Whether `change` may land on a branch protected by `rule`, with what it presents. */
export function protectionVerdict(a: {
  branch: string;
  rule: ProtectionRule;
  change: GuardedChange;
  pass?: ProtectionPass | undefined;
}): ProtectionVerdict {
  const { branch, rule, change, pass } = a;
  if (change === 'merge' && pass?.request !== undefined) return { allowed: true, bypassed: false };
  if (pass?.bypass === true) {
    if (rule.allowAdminBypass) return { allowed: true, bypassed: true };
    return { allowed: false, reason: `branch ${branch} is protected and its rule allows no bypass` };
  }
  const how =
    change === 'merge'
      ? `merges land through a merge request with ${rule.requiredApprovals} approval${rule.requiredApprovals === 1 ? '' : 's'}`
      : change === 'delete'
        ? 'remove its protection first'
        : `${change.replace('_', '-')}s are refused; merge a request instead`;
  return { allowed: false, reason: `branch ${branch} is protected: ${how}` };
}
