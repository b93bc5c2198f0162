/**
 * The GQT statements for protected branches and merge requests:
 * `protect BRANCH [approvals N] [allow-bypass] [stale-on head_move]`,
 * `unprotect BRANCH`, `request open|revise|review|resolve|merge|close NAME
 * …` (NAME is the case's name for the request), and `expect request NAME`
 * with a block of `state S`, `revisions N`, `preview OUTCOME CONFLICTS`,
 * `mergeable yes|no` and `reason TEXT` lines.
 */
import type { RequestChecks } from './gqt-case.js';
import { NAME, type GqtCursor, type Statement } from './gqt-cursor.js';

const PROTECT = 'expected "protect BRANCH [approvals N] [allow-bypass] [stale-on result_change|head_move]"';

export function protect(c: GqtCursor, s: Statement): void {
  const [cmd, branch, ...rest] = s.words;
  const error = c.errorCode(s.line, s.tail);
  const base = { kind: 'protect' as const, line: s.line.n, branch: branch ?? '', ...(error ? { error } : {}) };
  if (branch === undefined || !NAME.test(branch)) c.fail(s.line, cmd === 'unprotect' ? 'expected "unprotect BRANCH"' : PROTECT);
  else if (cmd === 'unprotect') {
    if (rest.length > 0) c.fail(s.line, 'expected "unprotect BRANCH"');
    c.steps.push({ ...base, rule: null });
  } else {
    const rule = { requiredApprovals: 1, allowAdminBypass: false, staleApprovals: 'result_change' as 'result_change' | 'head_move' };
    for (let i = 0; i < rest.length; i++) {
      const [w, v] = [rest[i], rest[i + 1]];
      if (w === 'approvals' && v !== undefined && /^\d{1,3}$/.test(v)) rule.requiredApprovals = Number(rest[++i]);
      else if (w === 'allow-bypass') rule.allowAdminBypass = true;
      else if (w === 'stale-on' && (v === 'result_change' || v === 'head_move')) rule.staleApprovals = rest[++i] as typeof v;
      else {
        c.fail(s.line, PROTECT, c.colOf(s.line, w as string));
        break;
      }
    }
    c.steps.push({ ...base, rule });
  }
  c.i++;
}

const REQUEST =
  'expected "request open NAME from BRANCH [into BRANCH]", "request revise|close NAME", "request review NAME approve|request_changes|comment", "request resolve NAME source-wins|target-wins|none" or "request merge NAME [delete-branch] -> merged|fast_forward|error CODE"';

export function request(c: GqtCursor, s: Statement): void {
  const [, action, name, ...rest] = s.words;
  const l = s.line;
  const merged = s.tail === 'merged' || s.tail === 'fast_forward' ? s.tail : undefined;
  const error = merged === undefined ? c.errorCode(l, s.tail) : undefined;
  const base = { kind: 'request' as const, line: l.n, name: name ?? '', ...(error ? { error } : {}) };
  const bad = (): void => c.fail(l, REQUEST);
  if (name === undefined || !/^\w+$/.test(name)) bad();
  else if (
    action === 'open' &&
    rest[0] === 'from' &&
    rest[1] !== undefined &&
    (rest.length === 2 || (rest.length === 4 && rest[2] === 'into'))
  )
    c.steps.push({ ...base, action: 'open', source: rest[1], target: rest[3] ?? 'main' });
  else if ((action === 'revise' || action === 'close') && rest.length === 0) c.steps.push({ ...base, action });
  else if (action === 'review' && rest.length === 1 && ['approve', 'request_changes', 'comment'].includes(rest[0] as string))
    c.steps.push({ ...base, action, verdict: rest[0] as 'approve' | 'request_changes' | 'comment' });
  else if (action === 'resolve' && rest.length === 1 && ['source-wins', 'target-wins', 'none'].includes(rest[0] as string))
    c.steps.push({ ...base, action, strategy: rest[0] === 'none' ? null : (rest[0] as 'source-wins' | 'target-wins') });
  else if (
    action === 'merge' &&
    (rest.length === 0 || (rest.length === 1 && rest[0] === 'delete-branch')) &&
    (merged !== undefined || error !== undefined)
  )
    c.steps.push({ ...base, action, deleteBranch: rest.length === 1, ...(merged !== undefined ? { expect: merged } : {}) });
  else bad();
  c.i++;
}

/** `expect request NAME` … `end`. */
export function expectRequest(c: GqtCursor, s: Statement): void {
  const name = s.words[2];
  if (name === undefined || s.words.length !== 3 || s.tail !== undefined) c.fail(s.line, 'expected "expect request NAME"');
  const checks: RequestChecks = {};
  for (const b of c.block(s.line)) {
    const m = /^(state|revisions|preview|mergeable|reason)\s+(.+)$/.exec(b.text);
    const [key, value] = [m?.[1], m?.[2] ?? ''];
    const preview = /^(merged|fast_forward|already_up_to_date|conflicts)\s+(\d+)$/.exec(value);
    if (key === 'state' && ['open', 'merged', 'closed'].includes(value)) checks.state = value;
    else if (key === 'revisions' && /^\d+$/.test(value)) checks.revisions = Number(value);
    else if (key === 'preview' && preview !== null) checks.preview = { outcome: preview[1] as string, conflicts: Number(preview[2]) };
    else if (key === 'mergeable' && (value === 'yes' || value === 'no')) checks.mergeable = value === 'yes';
    else if (key === 'reason') checks.reasons = [...(checks.reasons ?? []), value];
    else c.fail(b, 'expected "state S", "revisions N", "preview OUTCOME CONFLICTS", "mergeable yes|no" or "reason TEXT"');
  }
  c.steps.push({ kind: 'expect-request', line: s.line.n, name: name ?? '', checks });
}
