/**
 * The GQT case-file parser: pure, line-oriented, and strict. Either every
 * step of a file parses, or the file is rejected with every error found, each
 * at `file:line:column`; a malformed file never runs a step.
 *
 * See docs/gqt.md for the format. In short: a case is `case NAME`, optional
 * `description:` lines, then steps. Blocks open on a step line and close
 * with `end`. A step may end with `-> error CODE` to expect that error.
 */
import { RESOLUTION_STRATEGIES, type ConflictResolution, type MergeResolutions, type ResolutionChoice, type ResolutionStrategy } from '../service/inputs.js';
import { CONFLICT_KINDS, type ConflictKind } from '../model/conflict.js';
import { ERROR_CODES, type ErrorCode } from '../model/errors.js';

export interface Located {
  line: number;
}

export interface ExpectedConflict {
  kind: ConflictKind;
  table: string;
  key: string;
  property: string | null;
}

export type MergeExpectation = { kind: 'outcome'; outcome: (typeof OUTCOMES)[number] } | { kind: 'conflicts'; conflicts: ExpectedConflict[] } | { kind: 'error'; code: ErrorCode };

/** A line of `expect diff`: `+`, `~` or `-` and the table and key changed. */
export interface ExpectedChange {
  change: '+' | '~' | '-';
  table: string;
  key: string;
}

export interface WriteLine {
  op: 'insert' | 'update' | 'upsert' | 'delete';
  table: string;
  values: Record<string, unknown>;
}

/** A ref in a case: a branch name, or `@label` for a commit captured by `label`. */
export type CaseRef = { branch: string } | { label: string } | { tag: string };

export type Step = Located &
  (
    | { kind: 'schema'; branch: string; text: string; error?: ErrorCode }
    | { kind: 'seed'; table: string; rows: Record<string, unknown>[]; error?: ErrorCode }
    | { kind: 'write' | 'ingest'; branch: string; ops: WriteLine[]; error?: ErrorCode }
    | { kind: 'catchup'; branch: string; maxGenerations?: number; serial: boolean; error?: ErrorCode }
    | { kind: 'expect-pending'; branch: string; generations: number }
    | { kind: 'branch-create'; name: string; from: CaseRef; error?: ErrorCode }
    | { kind: 'branch-delete'; name: string; error?: ErrorCode }
    | { kind: 'tag-create'; name: string; from: CaseRef; error?: ErrorCode }
    | {
        kind: 'merge';
        /** A branch, or for cherry-pick and revert the label of the commit applied. */
        source: string;
        into: string;
        apply?: 'cherry_pick' | 'revert';
        dryRun: boolean;
        width?: 1 | 2 | 4;
        deleteBranch: boolean;
        expectSourceHead?: string;
        expectTargetHead?: string;
        message?: string;
        /** From the merge's `strategy` option and the `resolve` block just before it. */
        resolutions?: MergeResolutions;
        expect: MergeExpectation;
        expectBranchDeleted?: boolean;
        idempotencyKey?: string;
        /** `-> merged replayed`: the result must be the stored one of an earlier request with the key. */
        expectReplayed?: boolean;
      }
    | { kind: 'expect-diff'; from: CaseRef; to: CaseRef; threeDot: boolean; changes: ExpectedChange[] }
    | { kind: 'label'; name: string; branch: string }
    | { kind: 'restart' }
    | { kind: 'expect-table'; table: string; at: CaseRef; rows: Record<string, unknown>[] }
    | { kind: 'expect-log'; branch: string; entries: { kind: string; message?: string }[] }
    | { kind: 'expect-head'; branch: string; label: string; same: boolean }
  );

export interface GqtCase {
  file: string;
  name: string;
  description: string;
  steps: Step[];
}

export interface GqtParseError {
  file: string;
  line: number;
  column: number;
  message: string;
}

export class GqtSyntaxError extends Error {
  constructor(readonly errors: GqtParseError[]) {
    super(errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`).join('\n'));
  }
}

/** The largest GQT file and line, in characters: a case is a readable script, and rows are limited to 1 MiB. */
export const MAX_GQT_CHARS = 16 * 1024 * 1024;
export const MAX_GQT_LINE_CHARS = 2 * 1024 * 1024;

const NAME = /^[A-Za-z0-9][A-Za-z0-9._\-/]*$/;
const OUTCOMES = ['merged', 'fast_forward', 'already_up_to_date', 'cherry_picked', 'reverted'] as const;

interface Line {
  n: number;
  text: string;
  indent: number;
}

export function parseGqt(source: string, file: string): GqtCase {
  const errors: GqtParseError[] = [];
  const fail = (line: Line | number, message: string, column?: number): void => {
    const l = typeof line === 'number' ? line : line.n;
    const col = column ?? (typeof line === 'number' ? 1 : line.indent + 1);
    errors.push({ file, line: l, column: col, message });
  };
  // A hostile file costs time linear in its size: it is split once, and a file or a line over its
  // limit is refused before any line is parsed (regexes and JSON on a huge line would cost more).
  if (source.length > MAX_GQT_CHARS) throw new GqtSyntaxError([{ file, line: 1, column: 1, message: `the file is ${source.length} characters; GQT files are limited to ${MAX_GQT_CHARS}` }]);
  const lines: Line[] = source.split('\n').map((raw, i) => {
    const text = raw.replace(/\r$/, '');
    return { n: i + 1, text: text.trim(), indent: text.length - text.trimStart().length };
  });
  const long = lines.find((l) => l.text.length > MAX_GQT_LINE_CHARS);
  if (long !== undefined) throw new GqtSyntaxError([{ file, line: long.n, column: 1, message: `the line is ${long.text.length} characters; GQT lines are limited to ${MAX_GQT_LINE_CHARS}` }]);
  let i = 0;
  const content = (): Line | undefined => {
    while (i < lines.length) {
      const l = lines[i] as Line;
      if (l.text === '' || l.text.startsWith('#')) i++;
      else return l;
    }
    return undefined;
  };
  /** Lines of a block up to `end`; comments and blank lines dropped. */
  const block = (opener: Line, keepBlank = false): Line[] => {
    const out: Line[] = [];
    i++;
    while (i < lines.length) {
      const l = lines[i] as Line;
      i++;
      if (l.text === 'end') return out;
      if (!keepBlank && (l.text === '' || l.text.startsWith('#'))) continue;
      out.push(l);
    }
    fail(opener, `block opened here has no closing "end"`);
    return out;
  };
  /** Choices from a `resolve` block, waiting for the merge step that follows it. */
  let resolveBlock: { line: Line; conflicts: ConflictResolution[] } | undefined;
  /** One `resolve` line: TABLE KEY PROPERTY|* CHOICE [VALUE] [expected {"base": …, "source": …, "target": …}]. */
  const resolution = (b: Line): ConflictResolution | undefined => {
    const m = /^(\S+)\s+(\S+)\s+(\S+)\s+(source|target|base|value)\b\s*(.*)$/.exec(b.text);
    if (m === null) {
      fail(b, 'expected "TABLE KEY PROPERTY|* source|target|base|value [JSON] [expected {JSON}]"');
      return undefined;
    }
    let rest = m[5] as string;
    const r: ConflictResolution = { table: m[1] as string, key: m[2] as string, property: m[3] === '*' ? null : (m[3] as string), take: m[4] as ResolutionChoice };
    const at = rest.lastIndexOf('expected {');
    if (at >= 0 && (at === 0 || rest[at - 1] === ' ')) {
      const e = json(b, rest.slice(at + 'expected '.length), colOf(b, 'expected {'));
      if (e !== undefined) r.expected = e;
      rest = rest.slice(0, at).trim();
    }
    if (r.take === 'value') {
      try {
        r.value = JSON.parse(rest) as unknown;
      } catch (e) {
        fail(b, `value takes a JSON value: ${(e as Error).message}`, colOf(b, 'value'));
      }
    } else if (rest !== '') fail(b, `${r.take} takes no value`, colOf(b, rest));
    return r;
  };
  const json = (l: Line, text: string, column: number): Record<string, unknown> | undefined => {
    try {
      const v = JSON.parse(text) as unknown;
      if (v === null || typeof v !== 'object' || Array.isArray(v)) {
        fail(l, 'expected a JSON object', column);
        return undefined;
      }
      return v as Record<string, unknown>;
    } catch (e) {
      fail(l, `invalid JSON: ${(e as Error).message}`, column);
      return undefined;
    }
  };
  /** Split a trailing `-> error CODE` (or any `-> ...`) off a step line. */
  const arrow = (l: Line): { head: string; tail: string | undefined } => {
    const at = l.text.indexOf(' -> ');
    return at < 0 ? { head: l.text, tail: undefined } : { head: l.text.slice(0, at).trim(), tail: l.text.slice(at + 4).trim() };
  };
  const errorCode = (l: Line, tail: string | undefined): ErrorCode | undefined => {
    if (tail === undefined) return undefined;
    const m = /^error\s+(\w+)$/.exec(tail);
    if (m === null || !((m[1] as string) in ERROR_CODES)) {
      fail(l, `expected "-> error CODE" with a known code, found "-> ${tail}"`, l.text.indexOf('->') + l.indent + 1);
      return undefined;
    }
    return m[1] as ErrorCode;
  };
  const ref = (l: Line, word: string | undefined, column: number): CaseRef | undefined => {
    if (word === undefined) return undefined;
    if (word.startsWith('@')) return { label: word.slice(1) };
    if (word.startsWith('tag:') && NAME.test(word.slice(4))) return { tag: word.slice(4) };
    if (!NAME.test(word)) {
      fail(l, `expected a branch name, @label or tag:NAME, found "${word}"`, column);
      return undefined;
    }
    return { branch: word };
  };
  const colOf = (l: Line, word: string): number => l.indent + l.text.indexOf(word) + 1;

  const first = content();
  let name = '';
  if (first === undefined || !first.text.startsWith('case ')) {
    fail(first ?? lines.length, 'a GQT file starts with "case NAME"');
  } else {
    name = first.text.slice(5).trim();
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) fail(first, 'case names use letters, digits, ".", "_" and "-"', 6 + first.indent);
    i++;
  }
  const description: string[] = [];
  const steps: Step[] = [];
  for (let l = content(); l !== undefined; l = content()) {
    if (l.text.startsWith('description:')) {
      description.push(l.text.slice('description:'.length).trim());
      i++;
      continue;
    }
    const { head, tail } = arrow(l);
    const words = head.split(/\s+/);
    const cmd = words[0];
    switch (cmd) {
      case 'schema': {
        const branch = words[1] === 'on' ? (words[2] ?? '') : 'main';
        const code = errorCode(l, tail);
        const body = block(l, true);
        steps.push({ kind: 'schema', line: l.n, branch, text: body.map((b) => b.text).join('\n'), ...(code ? { error: code } : {}) });
        break;
      }
      case 'seed': {
        const table = words[1];
        if (table === undefined) fail(l, 'expected "seed TABLE"', l.indent + 6);
        const code = errorCode(l, tail);
        const rows = block(l)
          .map((b) => json(b, b.text, b.indent + 1))
          .filter((r): r is Record<string, unknown> => r !== undefined);
        steps.push({ kind: 'seed', line: l.n, table: table ?? '', rows, ...(code ? { error: code } : {}) });
        break;
      }
      case 'write':
      case 'ingest': {
        const branch = words[1];
        if (branch === undefined || !NAME.test(branch)) fail(l, `expected "${cmd} BRANCH"`, l.indent + (cmd?.length ?? 0) + 2);
        const code = errorCode(l, tail);
        const ops: WriteLine[] = [];
        for (const b of block(l)) {
          const m = /^(insert|update|upsert|delete)\s+(\S+)\s+(.*)$/.exec(b.text);
          if (m === null) {
            fail(b, 'expected "insert|update|upsert|delete TABLE {json}"');
            continue;
          }
          const values = json(b, m[3] as string, b.indent + b.text.indexOf(m[3] as string) + 1);
          if (values !== undefined) ops.push({ op: m[1] as WriteLine['op'], table: m[2] as string, values });
        }
        steps.push({ kind: cmd === 'ingest' ? 'ingest' : 'write', line: l.n, branch: branch ?? '', ops, ...(code ? { error: code } : {}) });
        break;
      }
      case 'catchup': {
        const code = errorCode(l, tail);
        const m = /^catchup\s+(\S+)((?:\s+(?:max\s+\d{1,7}|serial))*)$/.exec(head);
        if (m === null || !NAME.test(m[1] as string)) fail(l, 'expected "catchup BRANCH [max N] [serial]"');
        else {
          const max = /max\s+(\d+)/.exec(m[2] ?? '');
          steps.push({
            kind: 'catchup',
            line: l.n,
            branch: m[1] as string,
            serial: /\bserial\b/.test(m[2] ?? ''),
            ...(max ? { maxGenerations: Number(max[1]) } : {}),
            ...(code ? { error: code } : {}),
          });
        }
        i++;
        break;
      }
      case 'branch': {
        const code = errorCode(l, tail);
        if (words[1] === 'create' && words[2] !== undefined && (words.length === 3 || (words[3] === 'from' && words.length === 5))) {
          const from = words.length === 5 ? ref(l, words[4], colOf(l, words[4] as string)) : { branch: 'main' };
          if (!NAME.test(words[2])) fail(l, `invalid branch name "${words[2]}"`, colOf(l, words[2]));
          if (from !== undefined) steps.push({ kind: 'branch-create', line: l.n, name: words[2], from, ...(code ? { error: code } : {}) });
        } else if (words[1] === 'delete' && words[2] !== undefined && words.length === 3) {
          steps.push({ kind: 'branch-delete', line: l.n, name: words[2], ...(code ? { error: code } : {}) });
        } else fail(l, 'expected "branch create NAME [from BRANCH|@label]" or "branch delete NAME"');
        i++;
        break;
      }
      case 'tag': {
        const code = errorCode(l, tail);
        if (words[1] === 'create' && words[2] !== undefined && (words.length === 3 || (words[3] === 'from' && words.length === 5))) {
          const from = words.length === 5 ? ref(l, words[4], colOf(l, words[4] as string)) : { branch: 'main' };
          if (!NAME.test(words[2])) fail(l, `invalid tag name "${words[2]}"`, colOf(l, words[2]));
          if (from !== undefined) steps.push({ kind: 'tag-create', line: l.n, name: words[2], from, ...(code ? { error: code } : {}) });
        } else fail(l, 'expected "tag create NAME [from BRANCH|@label|tag:NAME]"');
        i++;
        break;
      }
      case 'cherry-pick':
      case 'revert':
      case 'merge': {
        i++;
        const shape = { merge: ['into', 'SOURCE into TARGET'], 'cherry-pick': ['onto', '@label onto BRANCH'], revert: ['on', '@label on BRANCH'] }[cmd] as [string, string];
        const m = new RegExp(`^${cmd}\\s+(\\S+)\\s+${shape[0]}\\s+(\\S+)(.*)$`).exec(head);
        const apply = cmd === 'merge' ? undefined : cmd === 'revert' ? ('revert' as const) : ('cherry_pick' as const);
        if (m === null || (apply !== undefined && !(m[1] as string).startsWith('@'))) {
          fail(l, `expected "${cmd} ${shape[1]} [options] -> EXPECTATION"`);
          break;
        }
        const step: Extract<Step, { kind: 'merge' }> = {
          kind: 'merge',
          line: l.n,
          source: apply !== undefined ? (m[1] as string).slice(1) : (m[1] as string),
          into: m[2] as string,
          ...(apply !== undefined ? { apply } : {}),
          dryRun: false,
          deleteBranch: false,
          expect: { kind: 'outcome', outcome: 'merged' },
        };
        const opts = (m[3] as string).trim().match(/"[^"]*"|\S+/g) ?? [];
        for (let k = 0; k < opts.length; k++) {
          const o = opts[k] as string;
          const next = (): string | undefined => opts[++k];
          if (o === 'dry-run') step.dryRun = true;
          else if (o === 'delete-branch') step.deleteBranch = true;
          else if (o === 'width') {
            const w = Number(next());
            if (w !== 1 && w !== 2 && w !== 4) fail(l, 'width is 1, 2 or 4', colOf(l, 'width'));
            else step.width = w;
          } else if (o === 'expect-source-head' || o === 'expect-target-head') {
            const v = next();
            if (v === undefined || !v.startsWith('@')) fail(l, `${o} takes a @label`, colOf(l, o));
            else if (o === 'expect-source-head') step.expectSourceHead = v.slice(1);
            else step.expectTargetHead = v.slice(1);
          } else if (o === 'message') {
            const v = next();
            if (v === undefined || !v.startsWith('"')) fail(l, 'message takes a "quoted string"', colOf(l, 'message'));
            else step.message = v.slice(1, -1);
          } else if (o === 'idempotency-key') {
            const v = next();
            if (v === undefined || !v.startsWith('"')) fail(l, 'idempotency-key takes a "quoted string"', colOf(l, 'idempotency-key'));
            else step.idempotencyKey = v.slice(1, -1);
          } else if (o === 'strategy') {
            const v = next();
            if (!(RESOLUTION_STRATEGIES as readonly (string | undefined)[]).includes(v)) fail(l, `strategy is ${RESOLUTION_STRATEGIES.join(' or ')}`, colOf(l, 'strategy'));
            else step.resolutions = { ...step.resolutions, strategy: v as ResolutionStrategy };
          } else fail(l, `unknown merge option "${o}"`, colOf(l, o));
        }
        if (resolveBlock !== undefined) {
          step.resolutions = { ...step.resolutions, conflicts: resolveBlock.conflicts };
          resolveBlock = undefined;
        }
        if (tail === undefined) {
          fail(l, 'a merge needs an expectation: "-> merged", "-> fast_forward", "-> already_up_to_date", "-> conflicts" (block) or "-> error CODE"');
          break;
        }
        const tw = tail.split(/\s+/);
        if (tw[0] === 'conflicts' && tw.length === 1) {
          i--;
          const conflicts: ExpectedConflict[] = [];
          for (const b of block(l)) {
            const c = b.text.split(/\s+/);
            if (c.length < 3 || c.length > 4 || !(CONFLICT_KINDS as readonly string[]).includes(c[0] as string)) {
              fail(b, `expected "KIND TABLE KEY [PROPERTY]" with KIND one of ${CONFLICT_KINDS.join(', ')}`);
              continue;
            }
            // A schema conflict has no entity key: `-` stands for it.
            const key = c[0] === 'SchemaConflict' && c[2] === '-' ? '' : (c[2] as string);
            conflicts.push({ kind: c[0] as ConflictKind, table: c[1] as string, key, property: c[3] ?? null });
          }
          step.expect = { kind: 'conflicts', conflicts };
        } else if (tw[0] === 'error') {
          const code = errorCode(l, tail);
          if (code) step.expect = { kind: 'error', code };
        } else if ((OUTCOMES as readonly string[]).includes(tw[0] as string) && (tw.length === 1 || (tw.length === 2 && ['branch-deleted', 'branch-kept', 'replayed'].includes(tw[1] as string)))) {
          step.expect = { kind: 'outcome', outcome: tw[0] as (typeof OUTCOMES)[number] };
          if (tw[1] === 'replayed') step.expectReplayed = true;
          else if (tw[1] !== undefined) step.expectBranchDeleted = tw[1] === 'branch-deleted';
        } else fail(l, `unknown expectation "-> ${tail}"`, colOf(l, '->'));
        steps.push(step);
        break;
      }
      case 'resolve': {
        if (words.length !== 1 || tail !== undefined) fail(l, '"resolve" opens a block of choices and takes no arguments');
        if (resolveBlock !== undefined) fail(l, 'a resolve block must be followed by the merge it is for');
        const conflicts = block(l)
          .map(resolution)
          .filter((r): r is ConflictResolution => r !== undefined);
        resolveBlock = { line: l, conflicts };
        break;
      }
      case 'label': {
        const m = /^label\s+(\w+)\s*=\s*head\s+(\S+)$/.exec(head);
        if (m === null) fail(l, 'expected "label NAME = head BRANCH"');
        else {
          steps.push({ kind: 'label', line: l.n, name: m[1] as string, branch: m[2] as string });
        }
        i++;
        break;
      }
      case 'restart':
        if (words.length !== 1 || tail !== undefined) fail(l, '"restart" takes no arguments');
        steps.push({ kind: 'restart', line: l.n });
        i++;
        break;
      case 'expect': {
        const diff = /^expect\s+diff\s+(\S+?)(\.\.\.|\s+)(\S+)$/.exec(head);
        if (diff !== null && tail === undefined) {
          const from = ref(l, diff[1], colOf(l, diff[1] as string));
          const to = ref(l, diff[3], colOf(l, diff[3] as string));
          const changes: ExpectedChange[] = [];
          for (const b of block(l)) {
            const m = /^([+~-])\s+(\S+)\s+(\S+)$/.exec(b.text);
            if (m === null) fail(b, 'expected "+|~|- TABLE KEY"');
            else changes.push({ change: m[1] as ExpectedChange['change'], table: m[2] as string, key: m[3] as string });
          }
          if (from && to) steps.push({ kind: 'expect-diff', line: l.n, from, to, threeDot: diff[2] === '...', changes });
          break;
        }
        const pending = /^expect\s+pending\s+(\S+)\s+(\d{1,7})$/.exec(head);
        if (pending !== null && tail === undefined) {
          steps.push({ kind: 'expect-pending', line: l.n, branch: pending[1] as string, generations: Number(pending[2]) });
          i++;
          break;
        }
        const m = /^expect\s+(table|log|head)\s+(\S+)(?:\s+(at|is|is-not)\s+(\S+))?$/.exec(head);
        if (m === null || tail !== undefined) {
          fail(l, 'expected "expect table TABLE at REF", "expect log BRANCH", "expect head BRANCH is|is-not @label", "expect pending BRANCH N" or "expect diff FROM TO|FROM...TO"');
          i++;
          break;
        }
        if (m[1] === 'table') {
          const at = ref(l, m[4] ?? 'main', m[4] ? colOf(l, m[4]) : l.indent + 1);
          if (m[3] !== undefined && m[3] !== 'at') fail(l, 'expected "at REF"', colOf(l, m[3]));
          const rows = block(l)
            .map((b) => json(b, b.text, b.indent + 1))
            .filter((r): r is Record<string, unknown> => r !== undefined);
          if (at) steps.push({ kind: 'expect-table', line: l.n, table: m[2] as string, at, rows });
        } else if (m[1] === 'log') {
          const entries = block(l).map((b) => {
            const [kind, ...msg] = b.text.split(/\s+/);
            return msg.length > 0 ? { kind: kind as string, message: msg.join(' ') } : { kind: kind as string };
          });
          steps.push({ kind: 'expect-log', line: l.n, branch: m[2] as string, entries });
        } else {
          if ((m[3] !== 'is' && m[3] !== 'is-not') || !m[4]?.startsWith('@')) fail(l, 'expected "expect head BRANCH is|is-not @label"');
          else steps.push({ kind: 'expect-head', line: l.n, branch: m[2] as string, label: m[4].slice(1), same: m[3] === 'is' });
          i++;
        }
        break;
      }
      default:
        fail(l, `unknown step "${cmd ?? ''}"; expected schema, seed, write, ingest, catchup, branch, tag, resolve, merge, cherry-pick, revert, label, restart or expect`);
        i++;
    }
  }
  if (resolveBlock !== undefined) fail(resolveBlock.line, 'a resolve block must be followed by the merge it is for');
  // Labels must be defined before use.
  const defined = new Set<string>();
  for (const s of steps) {
    const uses: string[] = [];
    if (s.kind === 'label') defined.add(s.name);
    if (s.kind === 'merge') uses.push(...[s.expectSourceHead, s.expectTargetHead, s.apply !== undefined ? s.source : undefined].filter((x): x is string => x !== undefined));
    const refs = s.kind === 'expect-table' ? [s.at] : s.kind === 'branch-create' || s.kind === 'tag-create' ? [s.from] : s.kind === 'expect-diff' ? [s.from, s.to] : [];
    for (const r of refs) if ('label' in r) uses.push(r.label);
    if (s.kind === 'expect-head') uses.push(s.label);
    for (const u of uses) if (!defined.has(u)) fail(s.line, `label @${u} is used before "label ${u} = head ..." defines it`);
  }
  if (steps.length === 0 && errors.length === 0) fail(lines.length, 'a case needs at least one step');
  if (errors.length > 0) throw new GqtSyntaxError(errors.sort((a, b) => a.line - b.line || a.column - b.column));
  return { file, name, description: description.join(' '), steps };
}
