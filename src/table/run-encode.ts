/**
 * Writing runs: rows (sorted by key, keys unique) as the file their number
 * calls for, a compact JSON document of a few rows (compressed as stored
 * JSON is) or an Arrow IPC file with one typed column per property (see
 * run.ts for both formats). Encoding a large compact run gives the event
 * loop turns between its passes and deflates off the loop.
 */
import { Binary, Bool, Float64, Int64, makeData, makeVector, Table, tableToIPC, Utf8, type Vector } from 'apache-arrow';
import { compressStored, compressStoredOffLoop } from '../model/compress-stored.js';
import { largeJsonInSlices } from '../model/utf8-in-slices.js';
import { rowProps, type PropDef, type TableType } from '../model/schema.js';
import { COMPACT_FORMAT, COMPACT_RUN_ROWS, compareKey, RUN_FORMAT, type RunRow } from './run.js';

const TEXT_OUT = new TextEncoder();

/** Encode rows (sorted by key, keys unique) in the run format their number calls for. */
export function encodeRunFile(table: TableType, rows: readonly RunRow[]): Uint8Array {
  return rows.length <= COMPACT_RUN_ROWS ? encodeCompactRun(table, rows) : encodeRun(table, rows);
}

/** Rows (sorted by key, keys unique) as a compact run: a JSON document of rows, compressed as stored JSON is. */
export function encodeCompactRun(table: TableType, rows: readonly RunRow[]): Uint8Array {
  return compactBytes(compactRunDoc(table, rows));
}

/**
 * `encodeRunFile` for a request that may carry large rows. A large compact run's text is made a
 * member at a time (model/json-steps.ts) and written to UTF-8 a piece at a time
 * (model/utf8-in-slices.ts), with turns of the event loop between, and deflates off the loop: a
 * 15 MB write held the loop 140 ms in one `JSON.stringify` and one encoding. The bytes are those
 * `encodeRunFile` writes.
 */
export async function encodeRunFileOffLoop(table: TableType, rows: readonly RunRow[]): Promise<Uint8Array> {
  if (rows.length > COMPACT_RUN_ROWS) return encodeRun(table, rows);
  const doc = compactRunDoc(table, rows);
  const large = await largeJsonInSlices(doc);
  return large === undefined ? compactBytes(doc) : compressStoredOffLoop(large);
}

/** A compact run's document as stored: its JSON text, compressed as stored JSON is. */
function compactBytes(doc: object): Uint8Array {
  return compressStored(TEXT_OUT.encode(JSON.stringify(doc)));
}

/** The compact run's document: its format, its table, and its rows as `[key, tomb, hash, props]`. */
function compactRunDoc(table: TableType, rows: readonly RunRow[]): object {
  let prev: string | undefined;
  for (const r of rows) {
    if (prev !== undefined && compareKey(prev, r.key) >= 0) throw new Error(`run rows out of order at ${r.key}`);
    prev = r.key;
  }
  const body = rows.map((r) => [r.key, r.tomb ? 1 : 0, r.hash, r.tomb ? null : r.props]);
  return { format: COMPACT_FORMAT, table: table.name, rows: body };
}

/** Encode rows (sorted by key, keys unique) as an Arrow IPC file. */
export function encodeRun(table: TableType, rows: readonly RunRow[]): Uint8Array {
  const props = rowProps(table);
  let prev: string | undefined;
  for (const r of rows) {
    if (prev !== undefined && compareKey(prev, r.key) >= 0) throw new Error(`run rows out of order at ${r.key}`);
    prev = r.key;
  }
  const columns: Record<string, Vector> = {
    _key: utf8Column(rows.map((r) => r.key)),
    _tomb: boolColumn(rows.map((r) => r.tomb)),
    _hash: utf8Column(rows.map((r) => r.hash)),
  };
  for (const p of props) columns[p.name] = propColumn(p, rows);
  const t = new Table(columns);
  t.schema.metadata.set('branchgraph.format', RUN_FORMAT);
  t.schema.metadata.set('branchgraph.table', table.name);
  return tableToIPC(t, 'file');
}

/*
 * Columns are laid out directly as Arrow buffers (offsets, bytes, validity) rather than through
 * Arrow's builders, which encode each string on its own and grow their buffers by copying: a
 * 100,000-row write spent most of its encoding time there. The files are the same Arrow IPC.
 */

function propColumn(p: PropDef, rows: readonly RunRow[]): Vector {
  const values = rows.map((r) => r.props?.[p.name] ?? null);
  switch (p.type.kind) {
    case 'int':
      return int64Column(values as (number | null)[]);
    case 'float':
      return makeVector(
        makeData({
          type: new Float64(),
          length: values.length,
          ...validity(values),
          data: Float64Array.from(values, (v) => (v === null ? 0 : (v as number))),
        }),
      );
    case 'bool':
      return boolColumn(values as (boolean | null)[]);
    case 'json':
      return utf8Column(values.map((v) => (v === null ? null : JSON.stringify(v))));
    case 'vector':
      return float32Column(values as (number[] | null)[]);
    default:
      return utf8Column(values as (string | null)[]);
  }
}

/** The validity bitmap of `values` (omitted when nothing is null). */
function validity(values: readonly unknown[]): { nullCount: number; nullBitmap?: Uint8Array } {
  let nulls = 0;
  for (const v of values) if (v === null) nulls++;
  if (nulls === 0) return { nullCount: 0 };
  const bitmap = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v !== null) bitmap[i >> 3] = (bitmap[i >> 3] as number) | (1 << (i & 7));
  });
  return { nullCount: nulls, nullBitmap: bitmap };
}

function utf8Column(values: readonly (string | null)[]): Vector {
  const offsets = new Int32Array(values.length + 1);
  // Most columns are ASCII: then the whole column is one encoding call, and each value's bytes
  // are its characters (join spells null as nothing, as the column's data does).
  const joined = values.join('');
  const ascii = Buffer.from(joined, 'utf8');
  if (ascii.length === joined.length) {
    for (let i = 0; i < values.length; i++) offsets[i + 1] = (offsets[i] as number) + (values[i]?.length ?? 0);
    return makeVector(makeData({ type: new Utf8(), length: values.length, ...validity(values), valueOffsets: offsets, data: ascii }));
  }
  // Written through a Buffer view: `write` takes an offset, where encodeInto needs a new view per value.
  let bytes = Buffer.alloc(Math.max(64, values.reduce((n, v) => n + (v === null ? 0 : v.length), 0) + 16));
  let at = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== null && v !== undefined && v.length > 0) {
      // A UTF-16 unit takes at most three bytes of UTF-8.
      if (at + v.length * 3 > bytes.length) {
        const grown = Buffer.alloc(Math.max(bytes.length * 2, at + v.length * 3));
        bytes.copy(grown, 0, 0, at);
        bytes = grown;
      }
      at += bytes.write(v, at, 'utf8');
    }
    offsets[i + 1] = at;
  }
  return makeVector(
    makeData({ type: new Utf8(), length: values.length, ...validity(values), valueOffsets: offsets, data: bytes.subarray(0, at) }),
  );
}

/** Vectors as the little-endian bytes of their float32 values, one binary value each: 4 bytes a value, against about 10 as JSON text. */
function float32Column(values: readonly (readonly number[] | null)[]): Vector {
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  values.forEach((v, i) => {
    total += (v?.length ?? 0) * 4;
    offsets[i + 1] = total;
  });
  const floats = new Float32Array(total / 4);
  values.forEach((v, i) => {
    if (v !== null) floats.set(v, (offsets[i] as number) / 4);
  });
  return makeVector(
    makeData({
      type: new Binary(),
      length: values.length,
      ...validity(values),
      valueOffsets: offsets,
      data: new Uint8Array(floats.buffer),
    }),
  );
}

function boolColumn(values: readonly (boolean | null)[]): Vector {
  const bits = new Uint8Array((values.length + 7) >> 3);
  values.forEach((v, i) => {
    if (v === true) bits[i >> 3] = (bits[i >> 3] as number) | (1 << (i & 7));
  });
  return makeVector(makeData({ type: new Bool(), length: values.length, ...validity(values), data: bits }));
}

/** Safe integers as little-endian 64-bit two's complement, without a BigInt per value. */
function int64Column(values: readonly (number | null)[]): Vector {
  const words = new Int32Array(values.length * 2);
  values.forEach((v, i) => {
    if (v === null) return;
    const hi = Math.floor(v / 4294967296);
    words[2 * i] = v - hi * 4294967296;
    words[2 * i + 1] = hi;
  });
  return makeVector(makeData({ type: new Int64(), length: values.length, ...validity(values), data: new BigInt64Array(words.buffer) }));
}
