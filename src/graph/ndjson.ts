/**
 * NDJSON bulk loads: one operation per line,
 *   {"table":"Person","values":{"id":"a","name":"Ann"}}
 *   {"op":"delete","table":"Person","values":{"id":"b"}}
 * `op` defaults to upsert. Blank lines are skipped. Every problem is reported
 * with its line number and nothing is applied unless every line parses.
 */
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import type { WriteOp } from './write-batch.js';

export const MAX_LOAD_ROWS = 1_000_000;
const OPS = new Set(['insert', 'update', 'upsert', 'delete']);

/** One line: an operation, an issue, or undefined for a blank line. */
export function parseNdjsonLine(raw: string, lineNo: number): WriteOp | ErrorIssue | undefined {
  const line = raw.trim();
  if (line === '') return undefined;
  const at = `line ${lineNo}`;
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    return { path: at, message: `not valid JSON: ${(e as Error).message}` };
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { path: at, message: 'each line must be an object {"table", "values", "op"?}' };
  const o = v as Record<string, unknown>;
  const op = o.op ?? 'upsert';
  if (typeof op !== 'string' || !OPS.has(op)) return { path: `${at}.op`, message: 'op must be insert, update, upsert or delete' };
  if (typeof o.table !== 'string') return { path: `${at}.table`, message: 'table must be a string' };
  if (o.values === null || typeof o.values !== 'object' || Array.isArray(o.values)) return { path: `${at}.values`, message: 'values must be an object' };
  return { op: op as WriteOp['op'], table: o.table, values: o.values as Record<string, unknown> };
}

const isIssue = (x: WriteOp | ErrorIssue): x is ErrorIssue => 'path' in x;

export function parseNdjson(text: string): WriteOp[] {
  const ops: WriteOp[] = [];
  const issues: ErrorIssue[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const parsed = parseNdjsonLine(lines[i] as string, i + 1);
    if (parsed === undefined) continue;
    if (isIssue(parsed)) issues.push(parsed);
    else ops.push(parsed);
    if (ops.length > MAX_LOAD_ROWS) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_LOAD_ROWS} rows`);
    if (issues.length >= 100) break;
  }
  if (issues.length > 0) throw new BranchgraphError('invalid_input', `bad NDJSON at ${issues[0]?.path}: ${issues[0]?.message}`, { issues });
  return ops;
}

/**
 * Operations from an NDJSON byte stream, one line at a time, for ingest:
 * rows before a bad line are already on their way, so a bad line stops the
 * stream with its line number instead of being collected with the others.
 */
export async function* ndjsonStream(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<WriteOp> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let rest = '';
  let lineNo = 0;
  const one = (line: string): WriteOp | undefined => {
    lineNo++;
    const parsed = parseNdjsonLine(line, lineNo);
    if (parsed !== undefined && isIssue(parsed)) throw new BranchgraphError('invalid_input', `bad NDJSON at ${parsed.path}: ${parsed.message}`, { issues: [parsed] });
    return parsed;
  };
  const reader = chunks[Symbol.asyncIterator]();
  try {
    for (;;) {
      let step: IteratorResult<Uint8Array>;
      try {
        step = await reader.next();
      } catch (e) {
        // The body stopped arriving: the client went away or the connection broke.
        throw new BranchgraphError('aborted', `the request body ended before it was complete (after line ${lineNo})`, { cause: e });
      }
      if (step.done === true) break;
      const chunk = step.value;
      let text: string;
      try {
        text = rest + decoder.decode(chunk, { stream: true });
      } catch {
        throw new BranchgraphError('invalid_input', `the NDJSON body is not valid UTF-8 after line ${lineNo}`);
      }
      const lines = text.split('\n');
      rest = lines.pop() as string;
      for (const line of lines) {
        const op = one(line);
        if (op !== undefined) yield op;
      }
    }
  } finally {
    // Stopped early (a bad line, or the consumer gave up): release the body.
    void Promise.resolve(reader.return?.()).catch(() => undefined);
  }
  try {
    rest += decoder.decode();
  } catch {
    throw new BranchgraphError('invalid_input', `the NDJSON body ends inside a UTF-8 character (line ${lineNo + 1})`);
  }
  const op = one(rest);
  if (op !== undefined) yield op;
}
