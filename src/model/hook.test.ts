import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hookUrlProblem, hookWants, retryDelayMs, type Hook } from './hook.js';
import { mergeability, type MergeRequestDoc } from './merge-request.js';

describe('hook URLs', () => {
  const allow = ['127.0.0.1', 'hooks.example.com:8443', '*.ci.example.org', '[::1]'];
  it.each([
    ['http://127.0.0.1:9999/x', undefined],
    ['https://hooks.example.com:8443/x', undefined],
    ['https://a.ci.example.org/x', undefined],
    ['https://a.b.ci.example.org/x', undefined],
    ['http://[::1]:8080/x', undefined],
    ['https://hooks.example.com/x', 'host'],
    ['https://ci.example.org/x', 'host'],
    ['https://evilci.example.org/x', 'host'],
    ['http://127.0.0.2/x', 'host'],
    ['http://localhost/x', 'host'],
    ['ftp://127.0.0.1/x', 'malformed'],
    ['file:///etc/passwd', 'malformed'],
    ['http://user:pw@127.0.0.1/x', 'malformed'],
    ['not a url', 'malformed'],
  ])('%s: %s', (url, reason) => {
    expect(hookUrlProblem(url, allow)?.reason).toBe(reason);
  });
  it('regression: an IPv6 entry with a port allows that port only; without one, every port', () => {
    const v6 = ['[::1]:43050', '[fe80::2]', '::3'];
    expect(hookUrlProblem('http://[::1]:43050/x', v6)).toBeUndefined();
    expect(hookUrlProblem('http://[::1]:43051/x', v6)?.reason).toBe('host');
    expect(hookUrlProblem('http://[fe80::2]:1/x', v6)).toBeUndefined();
    expect(hookUrlProblem('http://[::3]:9/x', v6)).toBeUndefined();
    expect(hookUrlProblem('http://[::4]:43050/x', v6)?.reason).toBe('host');
  });
  it('allows nothing under an empty allowlist', () => {
    expect(hookUrlProblem('http://127.0.0.1/x', [])?.message).toContain('allows no hook hosts');
  });
});

describe('retry waits', () => {
  const policy = { maxAttempts: 6, baseMs: 1000, maxMs: 60_000 };
  it('double from the base, capped, between half and all of the step', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 0.999_999, noNaN: true }), (attempt, r) => {
        const step = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
        const wait = retryDelayMs(attempt, policy, r);
        return wait >= Math.floor(step / 2) && wait <= step;
      }),
    );
    expect([1, 2, 3, 7, 8].map((a) => retryDelayMs(a, policy, 0))).toEqual([500, 1000, 2000, 30_000, 30_000]);
  });
});

describe('which hooks want an event', () => {
  const hook = (kind: 'event' | 'check', events: string[]): Hook => ({
    format: 1,
    id: 'h',
    kind,
    url: 'http://127.0.0.1/',
    events,
    secret: 's',
    createdBy: 'a',
    createdAt: '',
  });
  it('an event hook by kind or *, a check never', () => {
    expect(hookWants(hook('event', ['commit']), 'commit')).toBe(true);
    expect(hookWants(hook('event', ['commit']), 'tag_created')).toBe(false);
    expect(hookWants(hook('event', ['*']), 'tag_created')).toBe(true);
    expect(hookWants(hook('check', ['*']), 'commit')).toBe(false);
  });
});

describe('required checks in mergeability', () => {
  const rule = {
    requiredApprovals: 0,
    allowAdminBypass: false,
    staleApprovals: 'result_change' as const,
    requiredChecks: ['ci', 'lint', 'sec'],
  };
  const doc = (checks: NonNullable<MergeRequestDoc['revisions'][number]['checks']>): MergeRequestDoc => ({
    format: 1,
    id: 'R',
    seq: 1,
    title: 't',
    description: '',
    source: 'f',
    target: 'main',
    author: 'a',
    state: 'open',
    createdAt: '',
    updatedAt: '',
    revisions: [
      {
        n: 1,
        sourceHead: 'S',
        targetHead: 'T',
        base: 'T',
        fingerprint: 'x',
        time: '',
        preview: { outcome: 'fast_forward', conflicts: 0, counts: {}, tables: [] },
        checks,
      },
    ],
    reviews: [],
  });
  const heads = { source: 'S', target: 'T' };
  it('pass only when each required check passed on the latest revision', () => {
    const m = mergeability(
      doc({
        ci: { status: 'pass', message: '', time: '' },
        lint: { status: 'fail', message: '2 problems', time: '' },
        extra: { status: 'fail', message: '', time: '' },
      }),
      { heads, rule },
    );
    expect(m.reasons).toEqual(['check lint failed: 2 problems', 'check sec has not reported on revision 1']);
    expect(m.checks).toEqual({ required: ['ci', 'lint', 'sec'], passed: ['ci'] });
    const all = { status: 'pass' as const, message: '', time: '' };
    expect(mergeability(doc({ ci: all, lint: all, sec: all }), { heads, rule }).mergeable).toBe(true);
    expect(mergeability(doc({}), { heads, rule: undefined }).mergeable).toBe(true);
  });
});
