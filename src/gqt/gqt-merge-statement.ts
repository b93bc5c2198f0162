/**
 * `merge SOURCE into TARGET`, `cherry-pick @label onto BRANCH` and
 * `revert @label on BRANCH`, with their options (dry-run, delete-branch,
 * width, expected heads, message, idempotency key, strategy), the `resolve`
 * block before them, and the expectation after `->`: an outcome (with
 * branch-deleted, branch-kept or replayed), `conflicts` and its block of
 * expected conflicts, or `error CODE`.
 */
import { CONFLICT_KINDS, type ConflictKind } from '../model/conflict.js';
import { RESOLUTION_STRATEGIES, type ResolutionStrategy } from '../service/inputs.js';
import { OUTCOMES, type ExpectedConflict, type Step } from './gqt-case.js';
import type { GqtCursor, Line, Statement } from './gqt-cursor.js';

type MergeStep = Extract<Step, { kind: 'merge' }>;

const SHAPES: Record<string, [string, string]> = {
  merge: ['into', 'SOURCE into TARGET'],
  'cherry-pick': ['onto', '@label onto BRANCH'],
  revert: ['on', '@label on BRANCH'],
};

export function parseMergeStatement(c: GqtCursor, s: Statement): void {
  const { line: l, head, tail } = s;
  const cmd = s.words[0] as string;
  c.i++;
  const shape = SHAPES[cmd] as [string, string];
  const m = new RegExp(`^${cmd}\\s+(\\S+)\\s+${shape[0]}\\s+(\\S+)(.*)$`).exec(head);
  const apply = cmd === 'merge' ? undefined : cmd === 'revert' ? ('revert' as const) : ('cherry_pick' as const);
  if (m === null || (apply !== undefined && !(m[1] as string).startsWith('@'))) {
    c.fail(l, `expected "${cmd} ${shape[1]} [options] -> EXPECTATION"`);
    return;
  }
  const step: MergeStep = {
    kind: 'merge',
    line: l.n,
    source: apply !== undefined ? (m[1] as string).slice(1) : (m[1] as string),
    into: m[2] as string,
    ...(apply !== undefined ? { apply } : {}),
    dryRun: false,
    deleteBranch: false,
    expect: { kind: 'outcome', outcome: 'merged' },
  };
  mergeOptions(c, { line: l, step, opts: (m[3] as string).trim().match(/"[^"]*"|\S+/g) ?? [] });
  if (c.resolveBlock !== undefined) {
    step.resolutions = { ...step.resolutions, conflicts: c.resolveBlock.conflicts };
    c.resolveBlock = undefined;
  }
  if (tail === undefined) {
    c.fail(
      l,
      'a merge needs an expectation: "-> merged", "-> fast_forward", "-> already_up_to_date", "-> conflicts" (block) or "-> error CODE"',
    );
    return;
  }
  expectation(c, { line: l, step, tail });
  c.steps.push(step);
}

function mergeOptions(c: GqtCursor, m: { line: Line; step: MergeStep; opts: string[] }): void {
  const { line: l, step, opts } = m;
  for (let k = 0; k < opts.length; k++) {
    const o = opts[k] as string;
    const next = (): string | undefined => opts[++k];
    const quoted = (): string | undefined => {
      const v = next();
      if (v === undefined || !v.startsWith('"')) c.fail(l, `${o} takes a "quoted string"`, c.colOf(l, o));
      return v?.startsWith('"') ? v.slice(1, -1) : undefined;
    };
    if (o === 'dry-run') step.dryRun = true;
    else if (o === 'delete-branch') step.deleteBranch = true;
    else if (o === 'width') {
      const w = Number(next());
      if (w !== 1 && w !== 2 && w !== 4) c.fail(l, 'width is 1, 2 or 4', c.colOf(l, 'width'));
      else step.width = w;
    } else if (o === 'expect-source-head' || o === 'expect-target-head') {
      const v = next();
      if (v === undefined || !v.startsWith('@')) c.fail(l, `${o} takes a @label`, c.colOf(l, o));
      else if (o === 'expect-source-head') step.expectSourceHead = v.slice(1);
      else step.expectTargetHead = v.slice(1);
    } else if (o === 'message') {
      const v = quoted();
      if (v !== undefined) step.message = v;
    } else if (o === 'idempotency-key') {
      const v = quoted();
      if (v !== undefined) step.idempotencyKey = v;
    } else if (o === 'strategy') {
      const v = next();
      if (!(RESOLUTION_STRATEGIES as readonly (string | undefined)[]).includes(v))
        c.fail(l, `strategy is ${RESOLUTION_STRATEGIES.join(' or ')}`, c.colOf(l, 'strategy'));
      else step.resolutions = { ...step.resolutions, strategy: v as ResolutionStrategy };
    } else c.fail(l, `unknown merge option "${o}"`, c.colOf(l, o));
  }
}

function expectation(c: GqtCursor, e: { line: Line; step: MergeStep; tail: string }): void {
  const { line: l, step, tail } = e;
  const tw = tail.split(/\s+/);
  if (tw[0] === 'conflicts' && tw.length === 1) {
    c.i--;
    step.expect = { kind: 'conflicts', conflicts: expectedConflicts(c, l) };
  } else if (tw[0] === 'error') {
    const code = c.errorCode(l, tail);
    if (code) step.expect = { kind: 'error', code };
  } else if (
    (OUTCOMES as readonly string[]).includes(tw[0] as string) &&
    (tw.length === 1 || (tw.length === 2 && ['branch-deleted', 'branch-kept', 'replayed'].includes(tw[1] as string)))
  ) {
    step.expect = { kind: 'outcome', outcome: tw[0] as (typeof OUTCOMES)[number] };
    if (tw[1] === 'replayed') step.expectReplayed = true;
    else if (tw[1] !== undefined) step.expectBranchDeleted = tw[1] === 'branch-deleted';
  } else c.fail(l, `unknown expectation "-> ${tail}"`, c.colOf(l, '->'));
}

function expectedConflicts(c: GqtCursor, l: Line): ExpectedConflict[] {
  const conflicts: ExpectedConflict[] = [];
  for (const b of c.block(l)) {
    const w = b.text.split(/\s+/);
    if (w.length < 3 || w.length > 4 || !(CONFLICT_KINDS as readonly string[]).includes(w[0] as string)) {
      c.fail(b, `expected "KIND TABLE KEY [PROPERTY]" with KIND one of ${CONFLICT_KINDS.join(', ')}`);
      continue;
    }
    // A schema conflict has no entity key: `-` stands for it.
    const key = w[0] === 'SchemaConflict' && w[2] === '-' ? '' : (w[2] as string);
    conflicts.push({ kind: w[0] as ConflictKind, table: w[1] as string, key, property: w[3] ?? null });
  }
  return conflicts;
}
