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
import { LARGE_BYTES, nextTurn } from '../model/turns.js';
import { findType, type PropDef, type Schema, type TableType } from '../model/schema.js';
import { MAX_LINE_BYTES, MAX_LOAD_ROWS, parseNdjson } from './ndjson.js';
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
  operations(schema: Schema): { ops: WriteOp[]; name: (i: number) => string; wellFormed?: boolean };
}

/** Read a load's body in full (bounded by `maxBytes` when it streams); nothing is checked against a schema yet. */
export async function readLoad(source: LoadSource, maxBytes: number): Promise<LoadInput> {
  const { format, table, op = 'upsert' } = source;
  if (format === 'ndjson') {
    if (table !== undefined || source.op !== undefined)
      throw new BranchgraphError('invalid_input', 'an NDJSON load names its table and operation on each line', {
        issues: [{ path: table !== undefined ? 'table' : 'op', message: 'not taken with NDJSON' }],
      });
    const lines: number[] = [];
    const ops = await parseNdjson(await textOf(source.body, maxBytes), lines);
    return { rows: ops.length, operations: () => ({ ops, name: (i) => `line ${lines[i]}`, wellFormed: true }) };
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
  if (format === 'csv') return await csvInput(await textOf(source.body, maxBytes), { typeOf, op });
  const bytes = await bytesOf(source.body, maxBytes);
  const rows = await parquetRows(bytes);
  return {
    rows: rows.count,
    operations: (schema) => {
      const type = typeOf(schema);
      const values = rows.read(type);
      return { ops: values.map((v) => ({ op, table: type.name, values: v })), name: (i) => `row ${i + 1}` };
    },
  };
}

/** CSV records, kept as text until the schema says what each column is. */
async function csvInput(text: string, a: { typeOf: (schema: Schema) => TableType; op: LoadOp }): Promise<LoadInput> {
  const reader = new CsvReader(MAX_LINE_BYTES);
  const records: CsvRecord[] = [];
  // Read a piece at a time, with a turn of the event loop between pieces: a large file is not one long pass.
  for (let at = 0; at < text.length; at += LARGE_BYTES) {
    for (const r of reader.push(text.slice(at, at + LARGE_BYTES))) records.push(r);
    if (at + LARGE_BYTES < text.length) await nextTurn();
  }
  for (const r of reader.finish()) records.push(r);
  const header = records.shift();
  if (header === undefined)
    throw new BranchgraphError('invalid_input', 'a CSV load needs a header line naming its columns', {
      issues: [{ path: 'line 1', message: 'empty' }],
    });
  if (records.length > MAX_LOAD_ROWS) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_LOAD_ROWS} rows`);
  return {
    rows: records.length,
    operations: (schema) => {
      const type = a.typeOf(schema);
      const columns = columnsOf(type, header.fields, `line ${header.line}`);
      const ops = records.map(({ line, fields }) => ({ op: a.op, table: type.name, values: csvValues(columns, fields, line) }));
      return { ops, name: (i) => `line ${records[i]?.line}` };
    },
  };
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
    if (size > maxBytes)
      throw new BranchgraphError('payload_too_large', `a load body is limited to ${maxBytes} bytes`, { details: { limit: maxBytes } });
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

async function textOf(body: LoadSource['body'], maxBytes: number): Promise<string> {
  if (typeof body === 'string') return body;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(await bytesOf(body, maxBytes));
  } catch (e) {
    if (e instanceof BranchgraphError) throw e;
    throw new BranchgraphError('invalid_input', 'the load body is not valid UTF-8', {
      issues: [{ path: 'body', message: 'invalid UTF-8' }],
    });
  }
}
