/**
 * A Parquet file's rows for a load, decoded by parquet-wasm (Rust's parquet
 * and arrow crates) into Arrow and read column by column into a table's
 * properties by name.
 *
 * Types map as an export writes them, so an exported table loads back
 * unchanged: 64-bit integers as numbers (beyond ±2^53 they stay text and
 * the row check refuses them), Arrow dates and timestamps of any unit as
 * the stored date and microsecond datetime text, lists as vectors, and text
 * as a CSV cell is read (typed-cells.ts): JSON for json and vector properties.
 */
import { DataType, tableFromIPC, type Table, type Vector } from 'apache-arrow';
import { BranchgraphError } from '../model/errors.js';
import type { PropDef, TableType } from '../model/schema.js';
import { cellValue, columnsOf } from './typed-cells.js';

export interface ParquetRows {
  count: number;
  /** Each row's values for `type`'s properties, by the file's column names: all rows, or those from `from` up to `to`. */
  read(type: TableType, range?: { from: number; to: number }): Record<string, unknown>[];
}

export async function parquetRows(bytes: Uint8Array): Promise<ParquetRows> {
  const pq = await import('parquet-wasm');
  let table: Table;
  try {
    table = tableFromIPC(pq.readParquet(bytes).intoIPCStream());
  } catch (e) {
    throw new BranchgraphError(
      'invalid_input',
      `the body is not a Parquet file this server can read: ${String((e as Error)?.message ?? e)}`,
      {
        issues: [{ path: 'body', message: 'not Parquet' }],
      },
    );
  }
  return {
    count: table.numRows,
    read(type, range = { from: 0, to: table.numRows }) {
      const { from, to } = range;
      const names = table.schema.fields.map((f) => f.name);
      const columns = columnsOf(type, names, 'the file');
      const rows = Array.from({ length: to - from }, () => ({}) as Record<string, unknown>);
      columns.forEach((prop, c) => {
        const vector = (table.getChildAt(c) as Vector).slice(from, to);
        const values = columnValues(vector);
        for (let i = 0; i < values.length; i++) {
          const v = values[i];
          if (v === null || v === undefined) continue;
          (rows[i] as Record<string, unknown>)[prop.name] = valueFor(prop, v, from + i);
        }
      });
      return rows;
    },
  };
}

const MICROS_PER_UNIT = [1_000_000n, 1_000n, 1n] as const;

/** A column's values, timestamps as microseconds since the epoch read from the raw data (Arrow's getter keeps milliseconds). */
function columnValues(vector: Vector): unknown[] {
  // Iterating (not toArray) keeps nulls as null.
  if (!DataType.isTimestamp(vector.type)) return [...vector] as unknown[];
  const out: unknown[] = [];
  for (const data of vector.data) {
    const raw = data.values as BigInt64Array;
    const unit = (data.type as { unit: number }).unit;
    for (let i = 0; i < data.length; i++) {
      if (!data.getValid(i)) out.push(null);
      else {
        const v = BigInt(raw[data.offset + i] as bigint);
        out.push({ micros: unit === 3 ? v / 1000n : v * (MICROS_PER_UNIT[unit as 0 | 1 | 2] as bigint) });
      }
    }
  }
  return out;
}

function microsText(micros: bigint): string {
  const ms = micros / 1000n - (micros % 1000n < 0n ? 1n : 0n);
  const rest = micros - ms * 1000n;
  return `${new Date(Number(ms)).toISOString().slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}

function valueFor(prop: PropDef, v: unknown, row: number): unknown {
  if (typeof v === 'object' && v !== null && 'micros' in v) {
    const text = microsText((v as { micros: bigint }).micros);
    return prop.type.kind === 'date' ? text.slice(0, 10) : text;
  }
  if (typeof v === 'bigint') return v >= BigInt(Number.MIN_SAFE_INTEGER) && v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : String(v);
  if (v instanceof Date || ((prop.type.kind === 'date' || prop.type.kind === 'datetime') && typeof v === 'number')) {
    const iso = new Date(v as number | Date).toISOString();
    return prop.type.kind === 'date' ? iso.slice(0, 10) : iso;
  }
  // Text is read as a CSV cell is: JSON for json and vector properties, numbers where the type says.
  if (typeof v === 'string') {
    try {
      return cellValue(prop, v);
    } catch (e) {
      throw new BranchgraphError('invalid_input', `bad Parquet at row ${row + 1}: ${(e as Error).message}`, {
        issues: [{ path: `row ${row + 1}.${prop.name}`, message: (e as Error).message }],
      });
    }
  }
  if (typeof v === 'object' && v !== null && 'toArray' in v) return Array.from((v as { toArray(): ArrayLike<unknown> }).toArray());
  return v;
}
