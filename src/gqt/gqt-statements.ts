/**
 * The GQT statements, one parser each, keyed by the statement's first
 * word. A parser reads its line (and its block, when it opens one) from
 * the cursor, pushes the steps it parsed, and reports what is wrong at the
 * line and column it is wrong at. Adding a statement is one entry here and
 * one kind in gqt-case.ts.
 */
import { clone, fetchStatement, push, remote } from './gqt-remote-statements.js';
import type { ConflictResolution, ResolutionChoice } from '../service/inputs.js';
import type { ExpectedChange, Step, WriteLine } from './gqt-case.js';
import { NAME, type GqtCursor, type Line, type Statement, type StatementParser } from './gqt-cursor.js';
import { parseMergeStatement } from './gqt-merge-statement.js';
import { expectBlame, expectHistory, expectLog, reset } from './gqt-history-statements.js';
import { expectSearch } from './gqt-search-statement.js';
import { expectRequest, protect, request } from './gqt-request-statements.js';

const withError = (c: GqtCursor, s: Statement) => {
  const code = c.errorCode(s.line, s.tail);
  return code ? { error: code } : {};
};

function schema(c: GqtCursor, s: Statement): void {
  const branch = s.words[1] === 'on' ? (s.words[2] ?? '') : 'main';
  const error = withError(c, s);
  const text = c
    .block(s.line, { keepBlank: true })
    .map((b) => b.text)
    .join('\n');
  c.steps.push({ kind: 'schema', line: s.line.n, branch, text, ...error });
}

function seed(c: GqtCursor, s: Statement): void {
  const table = s.words[1];
  if (table === undefined) c.fail(s.line, 'expected "seed TABLE"', s.line.indent + 6);
  const error = withError(c, s);
  c.steps.push({ kind: 'seed', line: s.line.n, table: table ?? '', rows: c.objects(s.line), ...error });
}

function writes(c: GqtCursor, s: Statement): void {
  const [cmd, branch] = s.words as [string, string | undefined];
  const l = s.line;
  if (branch === undefined || !NAME.test(branch)) c.fail(l, `expected "${cmd} BRANCH"`, l.indent + cmd.length + 2);
  const error = withError(c, s);
  const ops: WriteLine[] = [];
  for (const b of c.block(l)) {
    const m = /^(insert|update|upsert|delete)\s+(\S+)\s+(.*)$/.exec(b.text);
    if (m === null) {
      c.fail(b, 'expected "insert|update|upsert|delete TABLE {json}"');
      continue;
    }
    const values = c.json(b, m[3] as string, b.indent + b.text.indexOf(m[3] as string) + 1);
    if (values !== undefined) ops.push({ op: m[1] as WriteLine['op'], table: m[2] as string, values });
  }
  c.steps.push({ kind: cmd === 'ingest' ? 'ingest' : 'write', line: l.n, branch: branch ?? '', ops, ...error });
}

function catchup(c: GqtCursor, s: Statement): void {
  const error = withError(c, s);
  const m = /^catchup\s+(\S+)((?:\s+(?:max\s+\d{1,7}|serial))*)$/.exec(s.head);
  if (m === null || !NAME.test(m[1] as string)) c.fail(s.line, 'expected "catchup BRANCH [max N] [serial]"');
  else {
    const max = /max\s+(\d+)/.exec(m[2] ?? '');
    const serial = /\bserial\b/.test(m[2] ?? '');
    c.steps.push({
      kind: 'catchup',
      line: s.line.n,
      branch: m[1] as string,
      serial,
      ...(max ? { maxGenerations: Number(max[1]) } : {}),
      ...error,
    });
  }
  c.i++;
}

/** `branch create NAME [from REF]`, `branch delete NAME`, `tag create NAME [from REF]`. */
function refName(c: GqtCursor, s: Statement): void {
  const { words, line: l } = s;
  const what = words[0] as 'branch' | 'tag';
  const error = withError(c, s);
  const name = words[2];
  if (words[1] === 'create' && name !== undefined && (words.length === 3 || (words[3] === 'from' && words.length === 5))) {
    const from = words.length === 5 ? c.ref(l, words[4], c.colOf(l, words[4] as string)) : { branch: 'main' };
    if (!NAME.test(name)) c.fail(l, `invalid ${what} name "${name}"`, c.colOf(l, name));
    if (from !== undefined) c.steps.push({ kind: what === 'tag' ? 'tag-create' : 'branch-create', line: l.n, name, from, ...error });
  } else if (what === 'branch' && words[1] === 'delete' && name !== undefined && words.length === 3) {
    c.steps.push({ kind: 'branch-delete', line: l.n, name, ...error });
  } else
    c.fail(
      l,
      what === 'tag'
        ? 'expected "tag create NAME [from BRANCH|@label|tag:NAME]"'
        : 'expected "branch create NAME [from BRANCH|@label]" or "branch delete NAME"',
    );
  c.i++;
}

function resolve(c: GqtCursor, s: Statement): void {
  if (s.words.length !== 1 || s.tail !== undefined) c.fail(s.line, '"resolve" opens a block of choices and takes no arguments');
  if (c.resolveBlock !== undefined) c.fail(s.line, 'a resolve block must be followed by the merge it is for');
  const conflicts = c
    .block(s.line)
    .map((b) => resolution(c, b))
    .filter((r): r is ConflictResolution => r !== undefined);
  c.resolveBlock = { line: s.line, conflicts };
}

/** One `resolve` line: TABLE KEY PROPERTY|* CHOICE [VALUE] [expected {"base": …, "source": …, "target": …}]. */
function resolution(c: GqtCursor, b: Line): ConflictResolution | undefined {
  const m = /^(\S+)\s+(\S+)\s+(\S+)\s+(source|target|base|value)\b\s*(.*)$/.exec(b.text);
  if (m === null) {
    c.fail(b, 'expected "TABLE KEY PROPERTY|* source|target|base|value [JSON] [expected {JSON}]"');
    return undefined;
  }
  let rest = m[5] as string;
  const r: ConflictResolution = {
    table: m[1] as string,
    key: m[2] as string,
    property: m[3] === '*' ? null : (m[3] as string),
    take: m[4] as ResolutionChoice,
  };
  const at = rest.lastIndexOf('expected {');
  if (at >= 0 && (at === 0 || rest[at - 1] === ' ')) {
    const e = c.json(b, rest.slice(at + 'expected '.length), c.colOf(b, 'expected {'));
    if (e !== undefined) r.expected = e;
    rest = rest.slice(0, at).trim();
  }
  if (r.take === 'value') {
    try {
      r.value = JSON.parse(rest) as unknown;
    } catch (e) {
      c.fail(b, `value takes a JSON value: ${(e as Error).message}`, c.colOf(b, 'value'));
    }
  } else if (rest !== '') c.fail(b, `${r.take} takes no value`, c.colOf(b, rest));
  return r;
}

function label(c: GqtCursor, s: Statement): void {
  const m = /^label\s+(\w+)\s*=\s*head\s+(\S+)$/.exec(s.head);
  if (m === null) c.fail(s.line, 'expected "label NAME = head BRANCH"');
  else c.steps.push({ kind: 'label', line: s.line.n, name: m[1] as string, branch: m[2] as string });
  c.i++;
}

function restart(c: GqtCursor, s: Statement): void {
  if (s.words.length !== 1 || s.tail !== undefined) c.fail(s.line, '"restart" takes no arguments');
  c.steps.push({ kind: 'restart', line: s.line.n });
  c.i++;
}

const EXPECTATIONS =
  'expected "expect table TABLE at REF", "expect log REF", "expect history TABLE KEY", "expect blame TABLE KEY", "expect search TABLE", "expect request NAME", "expect head BRANCH is|is-not @label", "expect pending BRANCH N" or "expect diff FROM TO|FROM...TO"';

const HISTORY_EXPECTATIONS: Record<string, StatementParser> = {
  log: expectLog,
  history: expectHistory,
  blame: expectBlame,
  request: expectRequest,
  search: expectSearch,
};

function expectStep(c: GqtCursor, s: Statement): void {
  const { head, tail, line: l } = s;
  const history = HISTORY_EXPECTATIONS[s.words[1] ?? ''];
  if (history !== undefined) {
    history(c, s);
    return;
  }
  const diff = /^expect\s+diff\s+(\S+?)(\.\.\.|\s+)(\S+)$/.exec(head);
  if (diff !== null && tail === undefined) {
    expectDiff(c, l, diff);
    return;
  }
  const pending = /^expect\s+pending\s+(\S+)\s+(\d{1,7})$/.exec(head);
  if (pending !== null && tail === undefined) {
    c.steps.push({ kind: 'expect-pending', line: l.n, branch: pending[1] as string, generations: Number(pending[2]) });
    c.i++;
    return;
  }
  const m = /^expect\s+(table|head)\s+(\S+)(?:\s+(at|is|is-not)\s+(\S+))?$/.exec(head);
  if (m === null || tail !== undefined) {
    c.fail(l, EXPECTATIONS);
    c.i++;
    return;
  }
  if (m[1] === 'table') {
    const at = c.ref(l, m[4] ?? 'main', m[4] ? c.colOf(l, m[4]) : l.indent + 1);
    if (m[3] !== undefined && m[3] !== 'at') c.fail(l, 'expected "at REF"', c.colOf(l, m[3]));
    const rows = c.objects(l);
    if (at) c.steps.push({ kind: 'expect-table', line: l.n, table: m[2] as string, at, rows });
  } else {
    if ((m[3] !== 'is' && m[3] !== 'is-not') || !m[4]?.startsWith('@')) c.fail(l, 'expected "expect head BRANCH is|is-not @label"');
    else c.steps.push({ kind: 'expect-head', line: l.n, branch: m[2] as string, label: m[4].slice(1), same: m[3] === 'is' });
    c.i++;
  }
}

function expectDiff(c: GqtCursor, l: Line, diff: RegExpExecArray): void {
  const from = c.ref(l, diff[1], c.colOf(l, diff[1] as string));
  const to = c.ref(l, diff[3], c.colOf(l, diff[3] as string));
  const changes: ExpectedChange[] = [];
  for (const b of c.block(l)) {
    const m = /^([+~-])\s+(\S+)\s+(\S+)$/.exec(b.text);
    if (m === null) c.fail(b, 'expected "+|~|- TABLE KEY"');
    else changes.push({ change: m[1] as ExpectedChange['change'], table: m[2] as string, key: m[3] as string });
  }
  if (from && to) c.steps.push({ kind: 'expect-diff', line: l.n, from, to, threeDot: diff[2] === '...', changes } satisfies Step);
}

/** `graphql BRANCH`: a typed document, a `returns` line, then the expected `data` as JSON (lines joined), up to `end`. */
function graphql(c: GqtCursor, s: Statement): void {
  const l = s.line;
  const branch = s.words[1];
  if (branch === undefined || !NAME.test(branch)) c.fail(l, 'expected "graphql BRANCH"', l.indent + 9);
  const error = withError(c, s);
  const lines = c.block(l, { keepBlank: true });
  const cut = lines.findIndex((b) => b.text === 'returns');
  const query = (cut < 0 ? lines : lines.slice(0, cut)).map((b) => b.text).join('\n');
  if (query.trim() === '') c.fail(l, 'expected a GraphQL document in the block');
  let expected: unknown;
  if (cut >= 0) {
    const rest = lines.slice(cut + 1);
    const text = rest.map((b) => b.text).join('\n');
    try {
      expected = JSON.parse(text);
    } catch (e) {
      c.fail(rest[0] ?? (lines[cut] as Line), `invalid JSON after "returns": ${(e as Error).message}`);
    }
  } else if (error.error === undefined) c.fail(l, 'expected a "returns" line with the data, or "-> error CODE"');
  c.steps.push({ kind: 'graphql', line: l.n, branch: branch ?? '', query, ...(expected !== undefined ? { expected } : {}), ...error });
}

export const STATEMENTS: Record<string, StatementParser> = {
  schema,
  seed,
  write: writes,
  ingest: writes,
  catchup,
  branch: refName,
  tag: refName,
  resolve,
  merge: parseMergeStatement,
  'cherry-pick': parseMergeStatement,
  revert: parseMergeStatement,
  label,
  reset,
  protect,
  unprotect: protect,
  request,
  restart,
  graphql,
  expect: expectStep,
  remote,
  fetch: fetchStatement,
  push,
  clone,
};

/** The statements, as an unknown one's error lists them. */
export const STATEMENT_NAMES =
  'schema, seed, write, ingest, catchup, branch, tag, resolve, merge, cherry-pick, revert, label, reset, protect, unprotect, request, restart, graphql, expect, remote, fetch, push or clone';
