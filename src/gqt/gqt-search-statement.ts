/**
 * `expect search TABLE [at REF]` … `returns` … `end`: a search and its hits.
 * Lines before `returns` say what is asked: `text WORDS`, `near {json}` (a
 * vector or a text, as the search operation takes it), `where {json}` and
 * `first N`. Lines after it are the hits in rank order, `KEY [SCORE]`; a
 * score is compared to 1e-6 when given.
 */
import type { GqtCursor, Statement } from './gqt-cursor.js';

const USAGE = 'expected "expect search TABLE [at REF]"';

export function expectSearch(c: GqtCursor, s: Statement): void {
  const [, , table, at, ref, ...extra] = s.words;
  if (table === undefined || (at !== undefined && (at !== 'at' || ref === undefined)) || extra.length > 0 || s.tail !== undefined)
    c.fail(s.line, USAGE);
  const atRef = c.ref(s.line, ref ?? 'main', ref === undefined ? s.line.indent + 1 : c.colOf(s.line, ref));
  const ask: { text?: string; near?: Record<string, unknown>; where?: Record<string, unknown>; first?: number } = {};
  const hits: { key: string; score?: number }[] = [];
  let returns = false;
  for (const b of c.block(s.line)) {
    const [word = '', ...rest] = b.text.split(/\s+/);
    const value = b.text.slice(word.length).trim();
    if (returns) {
      const score = rest[0] === undefined ? undefined : Number(rest[0]);
      if (rest.length > 1 || (score !== undefined && !Number.isFinite(score))) c.fail(b, 'expected "KEY [SCORE]"');
      hits.push({ key: word, ...(score !== undefined ? { score } : {}) });
    } else if (word === 'returns' && value === '') returns = true;
    else if (word === 'text' && value !== '') ask.text = value;
    else if (word === 'near' || word === 'where') {
      const json = c.json(b, value, c.colOf(b, value));
      if (json !== undefined) ask[word] = json;
    } else if (word === 'first' && /^\d+$/.test(value)) ask.first = Number(value);
    else c.fail(b, 'expected "text WORDS", "near {json}", "where {json}", "first N" or "returns"');
  }
  if (!returns) c.fail(s.line, 'an "expect search" block lists its hits after a "returns" line');
  if (table !== undefined && atRef !== undefined) c.steps.push({ kind: 'expect-search', line: s.line.n, table, at: atRef, ask, hits });
}
