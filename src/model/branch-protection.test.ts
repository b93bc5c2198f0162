import { describe, expect, it } from 'vitest';
import { guardedChangeOf, ProtectionRuleZ, protectionVerdict } from './branch-protection.js';

const rule = ProtectionRuleZ.parse({});

describe('protectionVerdict', () => {
  it('refuses every direct change, and merges without a request', () => {
    for (const change of ['write', 'ingest', 'schema', 'merge', 'cherry_pick', 'revert', 'reset', 'delete'] as const) {
      const v = protectionVerdict({ branch: 'main', rule, change });
      expect(v.allowed, change).toBe(false);
    }
    expect(protectionVerdict({ branch: 'main', rule, change: 'merge' })).toEqual({
      allowed: false,
      reason: 'branch main is protected: merges land through a merge request with 1 approval',
    });
  });

  it('lets a request merge, and an admin bypass only when the rule allows it', () => {
    expect(protectionVerdict({ branch: 'main', rule, change: 'merge', pass: { request: 'r1' } })).toEqual({
      allowed: true,
      bypassed: false,
    });
    expect(protectionVerdict({ branch: 'main', rule, change: 'write', pass: { request: 'r1' } }).allowed).toBe(false);
    expect(protectionVerdict({ branch: 'main', rule, change: 'write', pass: { bypass: true } }).allowed).toBe(false);
    const open = { ...rule, allowAdminBypass: true };
    expect(protectionVerdict({ branch: 'main', rule: open, change: 'reset', pass: { bypass: true } })).toEqual({
      allowed: true,
      bypassed: true,
    });
  });

  it('guards the kinds that change content, not catch-up or compaction', () => {
    expect(
      ['write', 'schema', 'merge', 'fast_forward', 'cherry_pick', 'revert', 'catchup', 'compact', 'init'].map(guardedChangeOf),
    ).toEqual(['write', 'schema', 'merge', 'merge', 'cherry_pick', 'revert', undefined, undefined, undefined]);
  });

  it('defaults a rule to one approval, no bypass, stale when the result changes, no checks; refuses unknown fields', () => {
    expect(rule).toEqual({ requiredApprovals: 1, allowAdminBypass: false, staleApprovals: 'result_change', requiredChecks: [] });
    expect(ProtectionRuleZ.safeParse({ requiredChecks: ['not a name'] }).success).toBe(false);
    expect(ProtectionRuleZ.safeParse({ requiredApprovals: 1, colour: 'red' }).success).toBe(false);
  });
});
