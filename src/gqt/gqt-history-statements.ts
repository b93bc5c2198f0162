/**
 * The GQT statements that read and move history: `expect log REF` with
 * filters, `expect history TABLE KEY`, `expect blame TABLE KEY`, and
 * `reset BRANCH to REF`. Each line of an expectation block is a word or
 * two and the commit's message, as `expect log` has always read.
 */
import type { LogQuery } from './gqt-case.js';
import { NAME, type GqtCursor, type Statement } from './gqt-cursor.js';

const LOG = 'expected "expect log REF [table T] [key K] [kind K,K] [author A] [first-parent]"';

/** The filter words after `expect log REF`. */
function logQuery(c: GqtCursor, s: Statement, words: string[]): LogQuery {
  const q: LogQuery = {};
  for (let i = 0; i < words.length; i++) {
    const w = words[i] as string;
    const v = words[i + 1];
    if (w === 'first-parent') q.firstParent = true;
    else if ((w === 'table' || w === 'key' || w === 'kind' || w === 'author') && v !== undefined) {
      q[w] = v;
      i++;
    } else {
      c.fail(s.line, LOG, c.colOf(s.line, w));
      break;
    }
  }
  if (q.key !== undefined && q.table === undefined) c.fail(s.line, 'a key filter needs "table T" too', c.colOf(s.line, 'key'));
  return q;
}

/** Block lines as `WORD [message]` (or `WORD WORD [message]` with `two`). */
function entries(c: GqtCursor, s: Statement, two: boolean): { words: string[]; message?: string }[] {
  return c.block(s.line).map((b) => {
    const parts = b.text.split(/\s+/);
    const n = two ? 2 : 1;
    if (parts.length < n) c.fail(b, two ? 'expected "CHANGE PROPS|KIND [message]"' : 'expected "KIND [message]"');
    const rest = parts.slice(n).join(' ');
    return { words: parts.slice(0, n), ...(rest !== '' ? { message: rest } : {}) };
  });
}

/** `expect log REF [filters]` … `end`: the log, newest first, `KIND [message]` per line. */
export function expectLog(c: GqtCursor, s: Statement): void {
  const [, , ref, ...rest] = s.words;
  if (ref === undefined || s.tail !== undefined) c.fail(s.line, LOG);
  const at = ref === undefined ? undefined : c.ref(s.line, ref, c.colOf(s.line, ref));
  const query = logQuery(c, s, rest);
  const lines = entries(c, s, false).map((e) => ({
    kind: e.words[0] as string,
    ...(e.message !== undefined ? { message: e.message } : {}),
  }));
  if (at !== undefined) c.steps.push({ kind: 'expect-log', line: s.line.n, at, query, entries: lines });
}

/** `TABLE KEY [at REF] [first-parent]`, as history and blame take it. */
function entity(c: GqtCursor, s: Statement, usage: string) {
  const [, what, table, key, ...rest] = s.words;
  let at = c.ref(s.line, 'main', s.line.indent + 1);
  let firstParent = false;
  if (table === undefined || key === undefined || s.tail !== undefined) c.fail(s.line, usage);
  for (let i = 0; i < rest.length; i++) {
    const w = rest[i] as string;
    if (w === 'at' && rest[i + 1] !== undefined) {
      at = c.ref(s.line, rest[i + 1], c.colOf(s.line, rest[i + 1] as string));
      i++;
    } else if (w === 'first-parent' && what === 'history') firstParent = true;
    else {
      c.fail(s.line, usage, c.colOf(s.line, w));
      break;
    }
  }
  return { table: table ?? '', key: key ?? '', at, firstParent };
}

/** `expect history TABLE KEY [at REF] [first-parent]` … `end`: `CHANGE PROPS [message]` per version, newest first. */
export function expectHistory(c: GqtCursor, s: Statement): void {
  const e = entity(c, s, 'expected "expect history TABLE KEY [at REF] [first-parent]"');
  const versions = entries(c, s, true).map((x) => ({
    change: x.words[0] as string,
    changed: (x.words[1] as string).split(','),
    ...(x.message !== undefined ? { message: x.message } : {}),
  }));
  if (e.at !== undefined) c.steps.push({ kind: 'expect-history', line: s.line.n, ...e, at: e.at, versions });
}

/** `expect blame TABLE KEY [at REF]` … `end`: `PROPERTY KIND [message]` per property of the row, in name order. */
export function expectBlame(c: GqtCursor, s: Statement): void {
  const { firstParent: _no, ...e } = entity(c, s, 'expected "expect blame TABLE KEY [at REF]"');
  const properties = entries(c, s, true).map((x) => ({
    property: x.words[0] as string,
    kind: x.words[1] as string,
    ...(x.message !== undefined ? { message: x.message } : {}),
  }));
  if (e.at !== undefined) c.steps.push({ kind: 'expect-blame', line: s.line.n, ...e, at: e.at, properties });
}

/** `reset BRANCH to REF [-> error CODE]`: move the branch to any commit, if its head is still the one just read. */
export function reset(c: GqtCursor, s: Statement): void {
  const [, branch, to, ref] = s.words;
  const error = c.errorCode(s.line, s.tail);
  if (branch === undefined || !NAME.test(branch) || to !== 'to' || ref === undefined || s.words.length !== 4)
    c.fail(s.line, 'expected "reset BRANCH to REF"');
  const at = ref === undefined ? undefined : c.ref(s.line, ref, c.colOf(s.line, ref));
  if (at !== undefined && branch !== undefined)
    c.steps.push({ kind: 'reset', line: s.line.n, branch, to: at, ...(error ? { error } : {}) });
  c.i++;
}
