/**
 * NDJSON bulk loads: one operation per line,
 *   {"table":"Person","values":{"id":"a","name":"Ann"}}
 *   {"op":"delete","table":"Person","values":{"id":"b"}}
 * `op` defaults to upsert. Blank lines are skipped. Every problem is reported
 * with its line number and nothing is applied unless every line parses. A
 * line is at most MAX_LINE_BYTES: a longer one is refused by its number
 * (`payload_too_large`) before it is parsed.
 */
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import { lineTooLong, LineSplitter } from '../model/line-splitter.js';
import { findInputProblem } from '../model/text.js';
import { MAX_ROW_BYTES } from '../model/values.js';
import { Slice } from '../model/turns.js';
import type { WriteOp } from './write-batch.js';

export const MAX_LOAD_ROWS = 1_000_000;
/** The longest NDJSON line: a row at its limit, with room for its operation and table. */
export const MAX_LINE_BYTES = MAX_ROW_BYTES + 64 * 1024;
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
  if (v === null || typeof v !== 'object' || Array.isArray(v))
    return { path: at, message: 'each line must be an object {"table", "values", "op"?}' };
  // Before anything walks the value (sizing, hashing): a line nested 100,000 deep is one issue.
  const bad = findInputProblem(v, at);
  if (bad !== undefined) return bad;
  const o = v as Record<string, unknown>;
  const op = o.op ?? 'upsert';
  if (typeof op !== 'string' || !OPS.has(op)) return { path: `${at}.op`, message: 'op must be insert, update, upsert or delete' };
  if (typeof o.table !== 'string') return { path: `${at}.table`, message: 'table must be a string' };
  if (o.values === null || typeof o.values !== 'object' || Array.isArray(o.values))
    return { path: `${at}.values`, message: 'values must be an object' };
  return { op: op as WriteOp['op'], table: o.table, values: o.values as Record<string, unknown> };
}

/** Whether a line is over MAX_LINE_BYTES: a string has at least as many UTF-8 bytes as characters, so bytes are counted only where it can matter. */
export function tooLong(line: string): boolean {
  return line.length > MAX_LINE_BYTES / 3 && (line.length > MAX_LINE_BYTES || Buffer.byteLength(line) > MAX_LINE_BYTES);
}

/** The refusal of NDJSON line `lineNo`, over MAX_LINE_BYTES (as a streamed body's line splitter refuses it). */
export const ndjsonLineTooLong = (lineNo: number): BranchgraphError => lineTooLong('NDJSON line', lineNo, MAX_LINE_BYTES);

export const isIssue = (x: WriteOp | ErrorIssue): x is ErrorIssue => 'path' in x;

/**
 * Operations from NDJSON text; `lines`, when given, receives the line number of each. A large text
 * is parsed in slices with turns of the event loop between them (model/turns.ts).
 */
export async function parseNdjson(text: string, lines?: number[]): Promise<WriteOp[]> {
  const ops: WriteOp[] = [];
  const issues: ErrorIssue[] = [];
  const all = text.split('\n');
  const slice = new Slice();
  for (let i = 0; i < all.length; i++) {
    if (slice.due()) await slice.turn();
    const line = all[i] as string;
    if (tooLong(line)) throw ndjsonLineTooLong(i + 1);
    const parsed = parseNdjsonLine(line, i + 1);
    if (parsed === undefined) continue;
    if (isIssue(parsed)) issues.push(parsed);
    else {
      ops.push(parsed);
      lines?.push(i + 1);
    }
    if (ops.length > MAX_LOAD_ROWS) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_LOAD_ROWS} rows`);
    if (issues.length >= 100) break;
  }
  if (issues.length > 0) throw new BranchgraphError('invalid_input', `bad NDJSON at ${issues[0]?.path}: ${issues[0]?.message}`, { issues });
  return ops;
}

/** Options of a streamed NDJSON body. */
export interface NdjsonStreamOptions {
  /** The longest line, in bytes (default MAX_LINE_BYTES). */
  maxLineBytes?: number;
  /** The most bytes one body may hold (default DEFAULT_MAX_INGEST_BYTES). */
  maxBytes?: number;
}

/** One request's ingest body is refused past this many bytes unless configured otherwise. */
export const DEFAULT_MAX_INGEST_BYTES = 1 << 30;

/**
 * Operations from an NDJSON byte stream, one line at a time, for ingest:
 * rows before a bad line are already on their way, so a bad line stops the
 * stream with its line number instead of being collected with the others.
 * Lines are split in time linear in the bytes received (model/line-splitter.ts);
 * a line over the limit, or a body over its byte limit, is refused
 * (`payload_too_large`) at once, without reading the rest.
 */
export async function* ndjsonStream(chunks: AsyncIterable<Uint8Array>, opts: NdjsonStreamOptions = {}): AsyncGenerator<WriteOp> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const splitter = new LineSplitter(opts.maxLineBytes ?? MAX_LINE_BYTES, 'NDJSON line');
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_INGEST_BYTES;
  let received = 0;
  const one = (bytes: Uint8Array): WriteOp | undefined => {
    const lineNo = splitter.lines;
    let line: string;
    try {
      line = decoder.decode(bytes);
    } catch {
      throw new BranchgraphError('invalid_input', `the NDJSON body is not valid UTF-8 at line ${lineNo}`, {
        issues: [{ path: `line ${lineNo}`, message: 'invalid UTF-8' }],
      });
    }
    const parsed = parseNdjsonLine(line, lineNo);
    if (parsed !== undefined && isIssue(parsed))
      throw new BranchgraphError('invalid_input', `bad NDJSON at ${parsed.path}: ${parsed.message}`, { issues: [parsed] });
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
        throw new BranchgraphError('aborted', `the request body ended before it was complete (after line ${splitter.lines})`, { cause: e });
      }
      if (step.done === true) break;
      received += step.value.length;
      if (received > maxBytes) {
        throw new BranchgraphError('payload_too_large', `an ingest body is limited to ${maxBytes} bytes (at line ${splitter.lines + 1})`, {
          details: { limit: maxBytes, line: splitter.lines + 1 },
        });
      }
      for (const line of splitter.push(step.value)) {
        const op = one(line);
        if (op !== undefined) yield op;
      }
    }
  } finally {
    // Stopped early (a bad line, a line too long, or the consumer gave up): release the body.
    void Promise.resolve(reader.return?.()).catch(() => undefined);
  }
  const last = splitter.finish();
  const op = last === undefined ? undefined : one(last);
  if (op !== undefined) yield op;
}
