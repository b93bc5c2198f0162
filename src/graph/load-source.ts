/**
 * What a load reads: NDJSON operations, or the rows of one table as CSV
 * (a header line naming the columns) or Parquet, from text, bytes or a
 * byte stream. The input is read once, before the write is planned; its
 * operations are made for the schema the write meets (a CSV cell is read
 * as its column's type), so a write that loses a race and plans again
 * reads nothing twice.
 *
 * Every operation keeps where it came from — NDJSON and CSV by line,
 * Parquet by row — so the first bad row is named in terms of the file:
 * `line 7.values.email: email is required`, not `ops[5]…`.
 */
import { BranchgraphError } from '../model/errors.js';
import { CsvReader, type CsvRecord } from '../model/csv-reader.js';
import { LARGE_BYTES, nextTurn, Slice } from '../model/turns.js';
import { findType, type PropDef, type Schema, type TableType } from '../model/schema.js';
import { isWellFormed } from '../model/text.js';
import { isIssue, ndjsonLineTooLong, MAX_LINE_BYTES, MAX_LOAD_ROWS, parseNdjson, parseNdjsonLine, tooLong } from './ndjson.js';
import { cellValue, columnsOf } from './typed-cells.js';
import { parquetRows } from './parquet-rows.js';
import type { WriteOp } from './write-batch.js';

export type LoadFormat = 'ndjson' | 'csv' | 'parquet';

/** How a CSV or Parquet row is written: `upsert` (the default, as NDJSON's) replaces a row with its key, `insert` refuses one. */
export type LoadOp = 'insert' | 'upsert';

/** A load's input: its format, its body, and for CSV and Parquet the table its rows go to. */
export interface LoadSource {
  format: LoadFormat;
  body: string | Uint8Array | AsyncIterable<Uint8Array>;
  table?: string | undefined;
  op?: LoadOp | undefined;
}

/** A load's input, read: how many rows it holds, and its operations for a schema with the name of each. */
export interface LoadInput {
  readonly rows: number;
  /** `wellFormed`: every operation was already walked for what no schema could accept (NDJSON's parser does it per line). */
  operations(schema: Schema): Promise<{ ops: WriteOp[]; name: (i: number) => string; wellFormed?: boolean }>;
}

/** NDJSON names its table and operation on each line: a load that names either beside it is refused. */
export function refuseNdjsonTableOrOp(source: LoadSource): void {
  if (source.table !== undefined || source.op !== undefined)
    throw new BranchgraphError('invalid_input', 'an NDJSON load names its table and operation on each line', {
      issues: [{ path: source.table !== undefined ? 'table' : 'op', message: 'not taken with NDJSON' }],
    });
}

/** Read a load's body in full (bounded by `maxBytes` when it streams: it is held whole); nothing is checked against a schema yet. */
export async function readLoad(source: LoadSource, maxBytes: number): Promise<LoadInput> {
  const { format, table, op = 'upsert' } = source;
  if (format === 'ndjson') {
    refuseNdjsonTableOrOp(source);
    const lines: number[] = [];
    const ops = await parseNdjson(await textOf(source.body, maxBytes, HELD), lines);
    return { rows: ops.length, operations: async () => ({ ops, name: (i) => `line ${lines[i]}`, wellFormed: true }) };
  }
  if (table === undefined)
    throw new BranchgraphError('invalid_input', `a ${format} load needs the table its rows go to`, {
      issues: [{ path: 'table', message: 'required' }],
    });
  const typeOf = (schema: Schema): TableType => {
    const t = findType(schema, table);
    if (t === undefined)
      throw new BranchgraphError('not_found', `table ${table} does not exist`, { issues: [{ path: 'table', message: 'no such table' }] });
    return t;
  };
  if (format === 'csv') return await csvInput(source.body, { typeOf, op, maxBytes });
  const bytes = await bytesOf(source.body, maxBytes);
  const rows = await parquetRows(bytes);
  return {
    rows: rows.count,
    operations: async (schema) => {
      const type = typeOf(schema);
      const values = rows.read(type);
      return { ops: values.map((v) => ({ op, table: type.name, values: v })), name: (i) => `row ${i + 1}` };
    },
  };
}

/** CSV records, kept as text until the schema says what each column is. */
async function csvInput(
  body: LoadSource['body'],
  a: { typeOf: (schema: Schema) => TableType; op: LoadOp; maxBytes: number },
): Promise<LoadInput> {
  const records: CsvRecord[] = [];
  for await (const piece of csvRecords(body, a.maxBytes, HELD)) {
    for (const r of piece) records.push(r);
    if (records.length > MAX_LOAD_ROWS + 1) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_LOAD_ROWS} rows`);
  }
  const header = headerOf(records.shift());
  return {
    rows: records.length,
    operations: async (schema) => {
      const type = a.typeOf(schema);
      const columns = columnsOf(type, header.fields, `line ${header.line}`);
      const ops: WriteOp[] = [];
      const slice = new Slice();
      for (const { line, fields } of records) {
        if (slice.due()) await slice.turn();
        ops.push({ op: a.op, table: type.name, values: csvValues(columns, fields, line) });
      }
      return { ops, name: (i) => `line ${records[i]?.line}`, wellFormed: scalarCells(body, columns) };
    },
  };
}

/**
 * Whether CSV cells of `columns` are values no schema could refuse as malformed: well-formed text
 * (decoded from UTF-8, where a bad byte is refused as it is read, or a string given whole that is
 * well-formed), numbers and booleans, under property names the header was matched to. A json or
 * vector cell is parsed JSON, which can spell a lone surrogate or nest deep, and is walked.
 */
function scalarCells(body: LoadSource['body'], columns: readonly PropDef[]): boolean {
  if (!columns.every((c) => c.type.kind !== 'json' && c.type.kind !== 'vector')) return false;
  return typeof body !== 'string' || isWellFormed(body);
}

function headerOf(header: CsvRecord | undefined): CsvRecord {
  if (header === undefined)
    throw new BranchgraphError('invalid_input', 'a CSV load needs a header line naming its columns', {
      issues: [{ path: 'line 1', message: 'empty' }],
    });
  return header;
}

/** One table's rows in chunks of at most `rows` operations, read as they stream in (the bulk path, streaming-load.ts). */
export interface LoadChunk {
  ops: WriteOp[];
  /** Where each operation came from: its line (CSV) or row (Parquet), counted from 1. */
  origins: Uint32Array;
  /** Every operation was already walked for what no schema could accept, or cannot hold it (as `LoadInput.operations`). */
  wellFormed?: boolean;
  /** How a problem names the operation at `i`. */
  name: (i: number) => string;
}

/** Yielded by `loadChunks` when an NDJSON line is not for the bulk path: the load goes to the general path, which reads it again from its start. */
export const GENERAL_PATH = Symbol('general path');

/**
 * A load's rows for `type`, `rows` at a time. CSV and NDJSON are read from their body as it
 * arrives (a piece at a time, decoded as UTF-8 in stream), so only one chunk of records is held;
 * a Parquet file is decoded to Arrow columns once and read into rows a chunk at a time. NDJSON
 * names its table and operation on each line: the first line to name another than the source's,
 * or not to parse, ends the chunks with GENERAL_PATH.
 */
export async function* loadChunks(
  source: LoadSource,
  a: { type: TableType; rows: number; maxBytes: number; maxHeldBytes: number },
): AsyncGenerator<LoadChunk | typeof GENERAL_PATH> {
  const { type, rows } = a;
  const op = source.op ?? 'upsert';
  if (source.format === 'ndjson') {
    yield* ndjsonChunks(source.body, { ...a, op });
    return;
  }
  if (source.format === 'parquet') {
    const file = await parquetRows(await bytesOf(source.body, a.maxHeldBytes));
    for (let from = 0; from < file.count; from += rows) {
      const to = Math.min(file.count, from + rows);
      const ops = file.read(type, { from, to }).map((values) => ({ op, table: type.name, values }));
      const origins = Uint32Array.from({ length: to - from }, (_, i) => from + i + 1);
      yield { ops, origins, name: (i) => `row ${origins[i]}` };
    }
    return;
  }
  let columns: PropDef[] | undefined;
  let wellFormed = false;
  let held: CsvRecord[] = [];
  const chunk = (records: CsvRecord[]): LoadChunk => {
    const cols = columns as PropDef[];
    const ops = records.map(({ line, fields }) => ({ op, table: type.name, values: csvValues(cols, fields, line) }));
    const origins = Uint32Array.from(records, (r) => r.line);
    return { ops, origins, name: (i) => `line ${origins[i]}`, wellFormed };
  };
  for await (const piece of csvRecords(source.body, a.maxBytes, STREAMED)) {
    for (const r of piece) {
      if (columns === undefined) {
        columns = columnsOf(type, r.fields, `line ${r.line}`);
        wellFormed = scalarCells(source.body, columns);
        continue;
      }
      held.push(r);
      if (held.length === rows) {
        yield chunk(held);
        held = [];
      }
    }
  }
  if (columns === undefined) headerOf(undefined);
  if (held.length > 0) yield chunk(held);
}

async function* ndjsonChunks(
  body: LoadSource['body'],
  a: { type: TableType; op: LoadOp; rows: number; maxBytes: number },
): AsyncGenerator<LoadChunk | typeof GENERAL_PATH> {
  let ops: WriteOp[] = [];
  let lines: number[] = [];
  const chunk = (): LoadChunk => {
    const origins = Uint32Array.from(lines);
    // Each line was walked as it was parsed (parseNdjsonLine).
    const out = { ops, origins, name: (i: number) => `line ${origins[i]}`, wellFormed: true };
    [ops, lines] = [[], []];
    return out;
  };
  for await (const { line, at } of ndjsonLines(body, a.maxBytes)) {
    const parsed = parseNdjsonLine(line, at);
    if (parsed === undefined) continue;
    if (isIssue(parsed) || parsed.op !== a.op || parsed.table !== a.type.name) {
      yield GENERAL_PATH;
      return;
    }
    ops.push(parsed);
    lines.push(at);
    if (ops.length === a.rows) yield chunk();
  }
  if (ops.length > 0) yield chunk();
}

/** The first operation of an NDJSON body, read no further than its first line that is not blank; undefined when that line does not parse or there is none. */
export async function firstNdjsonOp(body: LoadSource['body'], maxBytes: number): Promise<WriteOp | undefined> {
  for await (const { line, at } of ndjsonLines(body, maxBytes)) {
    const parsed = parseNdjsonLine(line, at);
    if (parsed !== undefined) return isIssue(parsed) ? undefined : parsed;
  }
  return undefined;
}

/** An NDJSON body's lines as they stream in, each with its number; a line over MAX_LINE_BYTES is refused by its number as soon as it is. */
async function* ndjsonLines(body: LoadSource['body'], maxBytes: number): AsyncGenerator<{ line: string; at: number }> {
  let carry = '';
  let at = 0;
  for await (const text of textPieces(body, maxBytes, STREAMED)) {
    const parts = text.split('\n');
    parts[0] = carry + parts[0];
    carry = parts.pop() as string;
    for (const line of parts) {
      at++;
      if (tooLong(line)) throw ndjsonLineTooLong(at);
      yield { line, at };
    }
    if (tooLong(carry)) throw ndjsonLineTooLong(at + 1);
    await nextTurn();
  }
  if (carry !== '') yield { line: carry, at: at + 1 };
}

/** A CSV body's records, a piece of text at a time, with a turn of the event loop between pieces. */
async function* csvRecords(body: LoadSource['body'], maxBytes: number, held: boolean): AsyncGenerator<CsvRecord[]> {
  const reader = new CsvReader(MAX_LINE_BYTES);
  for await (const text of textPieces(body, maxBytes, held)) {
    yield reader.push(text);
    await nextTurn();
  }
  yield reader.finish();
}

/** A body as text, about LARGE_BYTES at a time, decoded as UTF-8 as it streams (a bad byte is `invalid_input`). */
async function* textPieces(body: LoadSource['body'], maxBytes: number, held: boolean): AsyncGenerator<string> {
  if (typeof body === 'string') {
    for (let at = 0; at < body.length; at += LARGE_BYTES) yield body.slice(at, at + LARGE_BYTES);
    return;
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const decode = (bytes?: Uint8Array): string => {
    try {
      return bytes === undefined ? decoder.decode() : decoder.decode(bytes, { stream: true });
    } catch {
      throw new BranchgraphError('invalid_input', 'the load body is not valid UTF-8', {
        issues: [{ path: 'body', message: 'invalid UTF-8' }],
      });
    }
  };
  let size = 0;
  for await (const bytes of body instanceof Uint8Array ? bytePieces(body) : body) {
    size += bytes.length;
    if (size > maxBytes) throw tooLarge(maxBytes, held);
    yield decode(bytes);
  }
  yield decode();
}

function* bytePieces(bytes: Uint8Array): Generator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += LARGE_BYTES) yield bytes.subarray(at, at + LARGE_BYTES);
}

/** Whether a body being read is held whole (the general path, Parquet) or streamed through (the bulk path's CSV). */
const HELD = true;
const STREAMED = false;

function tooLarge(maxBytes: number, held: boolean): BranchgraphError {
  const what = held
    ? "a load body read whole (Parquet, rows into a table that holds rows, or NDJSON that is not one empty table's inserts or upserts)"
    : 'a load body';
  return new BranchgraphError('payload_too_large', `${what} is limited to ${maxBytes} bytes`, { details: { limit: maxBytes } });
}

function csvValues(columns: readonly PropDef[], fields: readonly (string | null)[], line: number): Record<string, unknown> {
  if (fields.length !== columns.length)
    throw new BranchgraphError('invalid_input', `bad CSV at line ${line}: ${columns.length} columns in the header, ${fields.length} here`, {
      issues: [{ path: `line ${line}`, message: `expected ${columns.length} fields, got ${fields.length}` }],
    });
  const values: Record<string, unknown> = {};
  for (let c = 0; c < columns.length; c++) {
    const f = fields[c];
    if (f === null || f === undefined) continue;
    const prop = columns[c] as PropDef;
    try {
      values[prop.name] = cellValue(prop, f);
    } catch (e) {
      throw new BranchgraphError('invalid_input', `bad CSV at line ${line}: ${(e as Error).message}`, {
        issues: [{ path: `line ${line}.${prop.name}`, message: (e as Error).message }],
      });
    }
  }
  return values;
}

async function bytesOf(body: LoadSource['body'], maxBytes: number): Promise<Uint8Array> {
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (body instanceof Uint8Array) return body;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > maxBytes) throw tooLarge(maxBytes, HELD);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function textOf(body: LoadSource['body'], maxBytes: number, held: boolean): Promise<string> {
  if (typeof body === 'string') return body;
  let text = '';
  for await (const piece of textPieces(body, maxBytes, held)) text += piece;
  return text;
}
