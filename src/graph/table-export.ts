/**
 * Tables out to analytical tools: a table's live rows at a ref, pending
 * WAL rows included, tombstones and superseded versions left out, as
 * NDJSON, Arrow IPC (stream or file) or Parquet.
 *
 * Rows are read in key order straight from the merged runs (no page
 * limit) and encoded in batches of BATCH_ROWS (or of about BATCH_BYTES of
 * text, for large rows), so NDJSON and the Arrow
 * stream never hold more than one batch; the Arrow file and Parquet are
 * written whole at the end (their footers index every batch).
 *
 * Arrow types follow the schema: string and enum utf8, int int64, float
 * float64, bool bool, date date32 (days), datetime timestamp[us, UTC] (the
 * stored microseconds are kept exactly), json utf8 holding canonical JSON.
 * Edge tables have `from` and `to` first. The file's schema metadata names
 * the table and the commit it was read at.
 */
import {
  DateDay,
  makeBuilder,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Field,
  Schema as ArrowSchema,
  Struct,
  TimestampMicrosecond,
  Utf8,
  type Data,
  type DataType,
} from 'apache-arrow';
import { jsonLengthUpTo } from '../model/json-steps.js';
import { Slice } from '../model/turns.js';
import { BranchgraphError } from '../model/errors.js';
import { runColumnType } from '../table/run.js';
import { rowProps, type PropDef, type TableType } from '../model/schema.js';
import type { Row } from '../model/values.js';

export const EXPORT_FORMATS = ['ndjson', 'arrow', 'arrow-stream', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Media types, as the HTTP route answers them. */
export const EXPORT_MEDIA_TYPES: Record<ExportFormat, string> = {
  ndjson: 'application/x-ndjson',
  arrow: 'application/vnd.apache.arrow.file',
  'arrow-stream': 'application/vnd.apache.arrow.stream',
  parquet: 'application/vnd.apache.parquet',
};

/** File name extensions, for downloads and the CLI's default output name. */
export const EXPORT_EXTENSIONS: Record<ExportFormat, string> = {
  ndjson: 'ndjson',
  arrow: 'arrow',
  'arrow-stream': 'arrows',
  parquet: 'parquet',
};

const BATCH_ROWS = 8192;
/** About the most text one batch holds. */
const BATCH_BYTES = 1024 * 1024;

/** What an export reads: the table's type, where it was read, and its live rows in key order. */
export interface ExportSource {
  type: TableType;
  commit: string;
  rows: AsyncIterable<{ key: string; row: Row }>;
}

/** As in run files, but dates and datetimes as Arrow's own types, which analytical tools read as such. */
function arrowType(p: PropDef): DataType {
  if (p.type.kind === 'date') return new DateDay();
  if (p.type.kind === 'datetime') return new TimestampMicrosecond('UTC');
  // A vector is exported as the JSON text of its values, which every reader takes.
  if (p.type.kind === 'vector') return new Utf8();
  return runColumnType(p);
}

/** Microseconds since the epoch of a stored datetime (`…SS.ffffffZ`, or three digits from older rows). */
function datetimeMicros(s: string): bigint {
  const dot = s.indexOf('.');
  const whole = dot < 0 ? s : `${s.slice(0, dot)}Z`;
  const frac = dot < 0 ? '' : s.slice(dot + 1, -1);
  return BigInt(Date.parse(whole)) * 1000n + BigInt(frac.padEnd(6, '0').slice(0, 6));
}

/** One column of a batch. Timestamps are built by hand: Arrow's builder takes milliseconds and would drop the microseconds. */
function column(p: PropDef, rows: readonly Row[]): Data {
  if (p.type.kind === 'datetime') {
    const values = new BigInt64Array(rows.length);
    const valid = new Uint8Array(Math.ceil(rows.length / 8));
    let nulls = 0;
    rows.forEach((r, i) => {
      const v = r[p.name];
      if (typeof v !== 'string') {
        nulls++;
        return;
      }
      values[i] = datetimeMicros(v);
      valid[i >> 3] = (valid[i >> 3] as number) | (1 << (i & 7));
    });
    return makeData({ type: new TimestampMicrosecond('UTC'), length: rows.length, nullCount: nulls, data: values, nullBitmap: valid });
  }
  const b = makeBuilder({ type: arrowType(p), nullValues: [null, undefined] });
  for (const r of rows) {
    const v = r[p.name];
    if (v === null || v === undefined) b.append(null);
    else if (p.type.kind === 'int') b.append(BigInt(v as number) as never);
    else if (p.type.kind === 'date') b.append(new Date(`${v as string}T00:00:00Z`) as never);
    else if (p.type.kind === 'json' || p.type.kind === 'vector') b.append(JSON.stringify(v) as never);
    else b.append(v as never);
  }
  return b.finish().flush();
}

function arrowSchema(src: ExportSource): ArrowSchema {
  const fields = rowProps(src.type).map((p) => new Field(p.name, arrowType(p), p.optional));
  return new ArrowSchema(
    fields,
    new Map([
      ['branchgraph.table', src.type.name],
      ['branchgraph.commit', src.commit],
    ]),
  );
}

function batchOf(schema: ArrowSchema, props: readonly PropDef[], rows: readonly Row[]): RecordBatch {
  const children = props.map((p) => column(p, rows));
  return new RecordBatch(schema, makeData({ type: new Struct(schema.fields), length: rows.length, nullCount: 0, children }));
}

/**
 * The rows in batches of BATCH_ROWS, or fewer once they hold about BATCH_BYTES of text: a batch is
 * encoded in one step, and 8,192 rows of a megabyte each would be 8 GB. Each batch after the first
 * waits for a turn of the loop when the last ones held it long enough: the reads and the socket
 * writes in between may all be promise jobs, which never let the loop turn.
 */
async function* batches(src: ExportSource): AsyncIterable<Row[]> {
  const slice = new Slice();
  let batch: Row[] = [];
  let bytes = 0;
  for await (const { row } of src.rows) {
    batch.push(row);
    bytes += jsonLengthUpTo(row, BATCH_BYTES);
    if (batch.length === BATCH_ROWS || bytes >= BATCH_BYTES) {
      if (slice.due()) await slice.turn();
      yield batch;
      batch = [];
      bytes = 0;
    }
  }
  if (batch.length > 0) yield batch;
}

/** The export as bytes, produced as the rows are read (see the file header for which formats hold everything). */
export async function* exportTable(src: ExportSource, format: ExportFormat): AsyncIterable<Uint8Array> {
  if (format === 'ndjson') {
    const enc = new TextEncoder();
    for await (const rows of batches(src)) yield enc.encode(rows.map((r) => `${JSON.stringify(r)}\n`).join(''));
    return;
  }
  const schema = arrowSchema(src);
  const props = rowProps(src.type);
  if (format === 'arrow-stream') {
    yield* arrowStream(schema, props, batches(src));
    return;
  }
  const all: RecordBatch[] = [];
  for await (const rows of batches(src)) all.push(batchOf(schema, props, rows));
  if (all.length === 0) all.push(batchOf(schema, props, []));
  if (format === 'arrow') yield RecordBatchFileWriter.writeAll(all).toUint8Array(true);
  else yield await toParquet(RecordBatchStreamWriter.writeAll(all).toUint8Array(true));
}

/**
 * The IPC stream, a message per batch as it is encoded. Arrow JS's stream
 * writer only hands out everything written so far, so each batch is written
 * alone and cut out of its own stream: a stream is the schema message, then
 * batch messages, then the 8-byte end-of-stream marker, and the schema
 * message is the same for every batch of one schema.
 */
async function* arrowStream(schema: ArrowSchema, props: readonly PropDef[], rows: AsyncIterable<Row[]>): AsyncIterable<Uint8Array> {
  const w = new RecordBatchStreamWriter();
  w.reset(undefined, schema);
  w.finish();
  const schemaOnly = w.toUint8Array(true);
  const EOS = 8;
  const prefix = schemaOnly.length - EOS;
  yield schemaOnly.subarray(0, prefix);
  for await (const batch of rows) {
    const one = RecordBatchStreamWriter.writeAll([batchOf(schema, props, batch)]).toUint8Array(true);
    yield one.subarray(prefix, one.length - EOS);
  }
  yield schemaOnly.subarray(prefix);
}

/** Parquet through parquet-wasm (Rust's arrow and parquet crates), from an Arrow stream; zstd-compressed. */
async function toParquet(arrowStream: Uint8Array): Promise<Uint8Array> {
  const pq = await import('parquet-wasm');
  const table = pq.Table.fromIPCStream(arrowStream);
  const props = new pq.WriterPropertiesBuilder().setCompression(pq.Compression.ZSTD).build();
  return pq.writeParquet(table, props);
}

/**
 * The most rows an export built whole in memory (Arrow file, Parquet) may
 * hold: about a gigabyte at a few hundred bytes a row. Beyond it the
 * streamed formats, which hold one batch, are the way out.
 */
export const WHOLE_EXPORT_MAX_ROWS = 2_000_000;

/** Refuse, before any work, a whole-file export of a table that may exceed WHOLE_EXPORT_MAX_ROWS (`rowsAtMost` counts every run's rows). */
export function checkExportSize(format: ExportFormat, rowsAtMost: number): void {
  if ((format === 'arrow' || format === 'parquet') && rowsAtMost > WHOLE_EXPORT_MAX_ROWS) {
    throw new BranchgraphError(
      'payload_too_large',
      `a ${format} export is built in memory and is limited to ${WHOLE_EXPORT_MAX_ROWS} rows; this table may hold ${rowsAtMost}: use arrow-stream or ndjson, which stream`,
      { details: { limit: WHOLE_EXPORT_MAX_ROWS } },
    );
  }
}

export function parseExportFormat(s: string | undefined): ExportFormat {
  const format = s ?? 'ndjson';
  if (!(EXPORT_FORMATS as readonly string[]).includes(format)) {
    throw new BranchgraphError('invalid_input', `unknown export format ${JSON.stringify(format)}: expected ${EXPORT_FORMATS.join(', ')}`, {
      issues: [{ path: 'format', message: EXPORT_FORMATS.join(', ') }],
    });
  }
  return format as ExportFormat;
}
