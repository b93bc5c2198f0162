/**
 * Runs: immutable files of rows sorted by key.
 *
 * A run of more than COMPACT_RUN_ROWS rows is an Arrow IPC file. Columns:
 * `_key` (utf8), `_tomb` (bool), `_hash` (utf8, the row's content hash) and
 * one typed column per property: utf8 for string/date/datetime/enum, int64,
 * float64, bool, and utf8 canonical JSON for json. A tombstone row has null
 * properties. Files carry `branchgraph.format` in their schema metadata, so
 * pyarrow or DuckDB read them as ordinary Arrow files.
 *
 * A run of at most COMPACT_RUN_ROWS rows (a single write's, a fold of a few
 * generations) is a small JSON document instead: `{"format":
 * "branchgraph.rows/1","table":…,"rows":[[key, tomb (0|1), hash, props or
 * null], …]}`. An Arrow file spends about 1 KB on its schema and buffer
 * layout, so a one-row write stored about 1,120 bytes for a 60-byte row.
 * Up to a few hundred rows the compressed document is also the cheaper to
 * make: a 100-row write's run takes 0.20 ms as Arrow (0.11 to build, 0.09
 * to decode back for the cache) against 0.07 ms as JSON, whose rows are in
 * hand, and 9.7 KB against 3 KB.
 * Compaction gathers small runs into Arrow files; a reader tells the two
 * apart by their first byte.
 *
 * Keys compare by JavaScript string order (`compareKey`), the one order
 * every layer sorts and searches by. Writing runs is run-encode.ts; this
 * file reads them.
 */
import { Binary, Bool, Float64, Int64, tableFromIPC, Utf8, type DataType, type Vector } from 'apache-arrow';
import { bytesHash } from '../model/canonical.js';
import { decompressStored, decompressStoredOffLoop, isCompressed } from '../model/compress-stored.js';
import { jsonParseSteps } from '../model/json-parse-steps.js';
import { LARGE_BYTES, runStepsInSlices } from '../model/turns.js';
import { BranchgraphError } from '../model/errors.js';
import { rowProps, type PropDef, type TableType } from '../model/schema.js';
import { arrowFileOf, readArrowFile } from './read-arrow-file.js';
import type { Row, Value } from '../model/values.js';

export const RUN_FORMAT = '1';

export interface RunRow {
  key: string;
  tomb: boolean;
  hash: string;
  /** Null for tombstones. */
  props: Row | null;
}

/**
 * What a manifest records of a run; enough to skip it without reading it.
 * A large run is split into segments of at most SEGMENT_ROWS rows with
 * disjoint, ordered key ranges; then `segmented` is true and `key` names a
 * small index object listing them, so point lookups read only the segments
 * that can hold their keys.
 */
export interface RunRef {
  key: string;
  rows: number;
  tombstones: number;
  bytes: number;
  /** The least key, or a prefix of it (see `keysCut`). */
  minKey: string;
  /** The greatest key, or a prefix of it (see `keysCut`). */
  maxKey: string;
  /**
   * The keys were longer than KEY_BOUND_CHARS and `minKey`/`maxKey` are
   * their prefixes: a run's entry in a manifest stays small whatever its
   * keys. A prefix of the least key is still a lower bound; the greatest
   * key is bounded by every string that starts with `maxKey`.
   */
  keysCut?: boolean;
  /** Checksum of the run file (of the index object for a segmented run), verified before decoding. */
  checksum: string;
  segmented?: boolean;
  /**
   * The run replaced a contiguous stretch of older runs (compaction); what
   * it replaced is listed in a side object, so a delta against a version
   * that still has those runs can be found without comparing whole tables.
   */
  compacted?: boolean;
  /**
   * The @unique properties this run's rows left as they were: for each, no row gives its key a
   * value the key did not hold just below this run (the rows are deletes, or updates that kept
   * the property). A merge whose deltas on both sides keep every @unique property of a table
   * cannot create a clash there, and reads no index for it (merge/validate.ts).
   */
  keptUnique?: string[];
  /**
   * The compaction that wrote this run dropped tombstones (the stretch began
   * at the table's oldest run), or replaced a run whose compaction had: a key
   * absent here may have been deleted before it (graph/entity-history.ts).
   */
  dropped?: boolean;
  /**
   * The publication that first named this run, as `<lineage>:<version>`
   * (graph/run-origin.ts). A run never changes, so a key's state found in it
   * is the state that publication left: entity history jumps from a state
   * to the commit that set it without walking the commits between. Absent
   * on runs published before it was recorded.
   */
  origin?: string;
  /**
   * Where the rows live when they are not a stored run file: one table of a
   * pending WAL generation, or rows staged in memory (a dry run, a virtual
   * merge base). Such a ref is read like any run and never published; a
   * manifest holds only stored runs, which have no `source`.
   */
  source?: RunSource;
}

export type RunSource = { kind: 'pending'; generation: string; table: string } | { kind: 'staged' };

export const SEGMENT_ROWS = 1024;

export function compareKey(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The longest key a run's entry records whole. */
export const KEY_BOUND_CHARS = 256;

/** `key` cut to KEY_BOUND_CHARS, never between the halves of a surrogate pair. */
function boundKey(key: string): string {
  if (key.length <= KEY_BOUND_CHARS) return key;
  const code = key.charCodeAt(KEY_BOUND_CHARS - 1);
  return key.slice(0, code >= 0xd800 && code <= 0xdbff ? KEY_BOUND_CHARS - 1 : KEY_BOUND_CHARS);
}

/** Is every key of the run below `bound` (or at it, unless `strict`)? */
export function runEndsBefore(ref: Pick<RunRef, 'maxKey' | 'keysCut'>, bound: string, strict: boolean): boolean {
  const c = compareKey(ref.maxKey, bound);
  if (ref.keysCut !== true) return strict ? c < 0 : c <= 0;
  // Every key starts with the recorded prefix: all sort before `bound` exactly when the prefix does and `bound` does not extend it.
  return c < 0 && !bound.startsWith(ref.maxKey);
}

/** Could the run hold `key`, judged from its recorded range? */
export function rangeMayHold(ref: Pick<RunRef, 'rows' | 'minKey' | 'maxKey' | 'keysCut'>, key: string): boolean {
  return ref.rows > 0 && compareKey(ref.minKey, key) <= 0 && !runEndsBefore(ref, key, true);
}

/** A property's column type in run files (dates and datetimes as their sortable text). */
export function runColumnType(p: PropDef): DataType {
  switch (p.type.kind) {
    case 'int':
      return new Int64();
    case 'float':
      return new Float64();
    case 'bool':
      return new Bool();
    case 'vector':
      return new Binary();
    default:
      return new Utf8();
  }
}

/** A vector's values from its stored bytes (little-endian float32), copied out so they need no alignment. */
function vectorOf(bytes: Uint8Array): number[] {
  return Array.from(new Float32Array(bytes.slice().buffer));
}

function fromArrow(p: PropDef, v: unknown): Value {
  if (v === null || v === undefined) return null;
  if (p.type.kind === 'int') return Number(v as bigint);
  if (p.type.kind === 'vector') return vectorOf(v as Uint8Array);
  if (p.type.kind === 'json') return JSON.parse(v as string) as Value;
  return v as Value;
}

/** Runs of at most this many rows are stored as compact JSON (see the file header): a single write's of up to a few hundred rows. */
export const COMPACT_RUN_ROWS = 256;
/** What a compact run's document names itself. */
export const COMPACT_FORMAT = 'branchgraph.rows/1';

type Col = { prop: PropDef; vector: Vector | null };

/** A decoded run: keys and hashes eagerly, property values on demand. */
export class RunData {
  readonly keys: string[];
  readonly tombs: boolean[];
  readonly hashes: string[];
  private readonly columns: Col[];
  readonly byteSize: number;

  constructor(d: {
    keys: string[];
    tombs: boolean[];
    hashes: string[];
    columns: { prop: PropDef; vector: Vector | null }[];
    byteSize: number;
  }) {
    ({ keys: this.keys, tombs: this.tombs, hashes: this.hashes, columns: this.columns, byteSize: this.byteSize } = d);
  }

  get length(): number {
    return this.keys.length;
  }

  /** Index of `key`, or -1; `from` as `lowerBound` takes it. */
  find(key: string, from = 0): number {
    const at = this.lowerBound(key, from);
    return at < this.keys.length && this.keys[at] === key ? at : -1;
  }

  /**
   * First index whose key is at least `key`. `from` is a position the key cannot sort before (a
   * sorted batch's last answer in this run): the search gallops from there, so a batch's probes
   * that land close together cost a few comparisons each rather than a full binary search.
   */
  lowerBound(key: string, from = 0): number {
    const keys = this.keys;
    let lo = from;
    let hi = keys.length;
    if (from > 0) {
      let bound = 1;
      // Each step leaves keys[lo - 1] below `key`.
      while (lo + bound - 1 < keys.length && compareKey(keys[lo + bound - 1] as string, key) < 0) {
        lo += bound;
        bound *= 2;
      }
      hi = Math.min(hi, lo + bound - 1);
    }
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(keys[mid] as string, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** First index whose key is greater than `key`. */
  upperBound(key: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKey(this.keys[mid] as string, key) <= 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  rowAt(i: number): RunRow {
    const tomb = this.tombs[i] as boolean;
    return { key: this.keys[i] as string, tomb, hash: this.hashes[i] as string, props: tomb ? null : this.propsAt(i) };
  }

  /** The properties of the live row at `i` (a scan's form of `rowAt`, with nothing else allocated). */
  propsAt(i: number): Row {
    // A reader that walks many rows of this run gets its columns decoded once, whole.
    if (this.values === undefined && ++this.rowsRead > MATERIALIZE_AFTER) this.decoded();
    const props: Row = {};
    const values = this.values;
    if (values !== undefined)
      for (let n = 0; n < this.columns.length; n++) props[(this.columns[n] as Col).prop.name] = (values[n] as Value[])[i] as Value;
    else for (const c of this.columns) props[c.prop.name] = c.vector === null ? null : fromArrow(c.prop, c.vector.get(i));
    return props;
  }

  /**
   * One reusable row that reads the decoded columns at whatever position `at` last set: a scan
   * tests a filter on it and builds (`propsAt`) only the rows the filter admits. Valid until the
   * next `at`.
   */
  rowView(): (i: number) => Row {
    // Made once per decoded run: accessor properties cost V8 a new hidden class per object, so a
    // view made per scan would leave garbage behind each query that only a full collection frees.
    if (this.view === undefined) {
      const values = this.decoded();
      const view: Row = {};
      const at = { pos: 0 };
      for (const [n, c] of this.columns.entries())
        Object.defineProperty(view, c.prop.name, { get: () => (values[n] as Value[])[at.pos] as Value, enumerable: true });
      this.view = (i) => {
        at.pos = i;
        return view;
      };
    }
    return this.view;
  }

  /**
   * Positions (ascending) of the rows whose `prop` equals one of `values`, from an index of that
   * column built on first use and kept with the decoded run: a run never changes, so an equality
   * filter scans a column once and is answered from the index after. Undefined when the run
   * cannot answer (no such column, or values compared by content), and the caller scans.
   */
  positionsOf(prop: string, values: readonly Value[]): Int32Array | undefined {
    const n = this.columns.findIndex((c) => c.prop.name === prop);
    if (n < 0 || values.some((v) => v !== null && typeof v === 'object')) return undefined;
    this.equalityIndexes ??= new Map();
    let index = this.equalityIndexes.get(prop);
    if (index === undefined) {
      index = new Map();
      const column = this.decoded()[n] as Value[];
      for (let i = 0; i < column.length; i++) {
        const v = column[i] as Value;
        // Nulls match no equality, and values compared by content are not indexed.
        if (v === null || typeof v === 'object') continue;
        const at = index.get(v);
        if (at === undefined) index.set(v, [i]);
        else at.push(i);
      }
      this.equalityIndexes.set(prop, index);
    }
    // An `in` list may name a value twice; each position is read once.
    const hits = [...new Set(values)].map((v) => index.get(v as string | number | boolean) ?? []);
    const out = Int32Array.from(hits.length === 1 ? (hits[0] as number[]) : hits.flat());
    return hits.length === 1 ? out : out.sort();
  }

  /**
   * Every property's values, a column per property of the table type the run was decoded for, in
   * its order: what reads of many rows compare without building them. Undefined for rows held in
   * memory, which are read as rows.
   */
  propertyColumns(): readonly (readonly Value[])[] | undefined {
    return this.decoded();
  }

  /** Every column's values, decoded whole once; the values replace the vectors, so the file's bytes are not held twice. */
  private decoded(): Value[][] {
    if (this.values === undefined) {
      this.values = this.columns.map((c) => columnValues(c.prop, c.vector, this.keys.length));
      for (const c of this.columns) c.vector = null;
    }
    return this.values;
  }

  private rowsRead = 0;
  private values: Value[][] | undefined;
  private view: ((i: number) => Row) | undefined;
  private equalityIndexes: Map<string, Map<string | number | boolean, number[]>> | undefined;
}

/** Rows of one run read one by one before its columns are decoded whole (a point lookup reads one or two). */
const MATERIALIZE_AFTER = 64;

/** A property column's values, decoded in one pass (utf8 columns through `utf8Strings`). */
function columnValues(p: PropDef, v: Vector | null, length: number): Value[] {
  if (v === null) return new Array<Value>(length).fill(null);
  if (runColumnType(p) instanceof Utf8 && p.type.kind !== 'json') {
    const strings = v.nullCount === 0 ? utf8Strings(v) : undefined;
    if (strings !== undefined) return strings;
  }
  // Numbers without nulls come out of their typed arrays in one pass.
  if (v.nullCount === 0 && p.type.kind === 'int') return int64Numbers(v);
  if (v.nullCount === 0 && p.type.kind === 'float') return Array.from(v.toArray() as Float64Array);
  const out = new Array<Value>(length);
  for (let i = 0; i < length; i++) out[i] = fromArrow(p, v.get(i));
  return out;
}

/**
 * Rows already in memory (pending WAL generations) read through the same
 * interface as a decoded file, without an Arrow round trip. Properties are
 * projected onto the table's current properties exactly as `decodeRun`
 * does: missing ones read as null, unknown ones are dropped.
 */
export class MemoryRunData extends RunData {
  constructor(
    private readonly table: TableType,
    private readonly rows: readonly RunRow[],
    byteSize: number,
  ) {
    super({
      keys: rows.map((r) => r.key),
      tombs: rows.map((r) => r.tomb || r.props === null),
      hashes: rows.map((r) => r.hash),
      columns: [],
      byteSize,
    });
  }

  override rowAt(i: number): RunRow {
    const r = this.rows[i] as RunRow;
    if (r.tomb || r.props === null) return { key: r.key, tomb: true, hash: r.hash, props: null };
    return { key: r.key, tomb: false, hash: r.hash, props: this.propsAt(i) };
  }

  override rowView(): (i: number) => Row {
    return (i) => this.propsAt(i);
  }

  /** Rows in memory are few (a WAL generation's) and are scanned. */
  override positionsOf(): Int32Array | undefined {
    return undefined;
  }

  override propertyColumns(): undefined {
    return undefined;
  }

  override propsAt(i: number): Row {
    const stored = (this.rows[i] as RunRow).props ?? {};
    const props: Row = {};
    for (const p of rowProps(this.table)) props[p.name] = stored[p.name] ?? null;
    return props;
  }
}

function rangeMatches(expected: Pick<RunRef, 'minKey' | 'maxKey' | 'keysCut'>, min: string, max: string): boolean {
  const cut = (k: string) => (expected.keysCut === true ? boundKey(k) : k);
  return cut(min) === expected.minKey && cut(max) === expected.maxKey;
}

/**
 * Decode a run for `table` as the current schema sees it: columns the file
 * lacks (properties added later) read as null; extra columns are ignored.
 */
export function decodeRun(a: {
  table: TableType;
  bytes: Uint8Array;
  objectKey: string;
  expected?: Pick<RunRef, 'rows' | 'minKey' | 'maxKey' | 'keysCut'> | undefined;
}): RunData {
  return asCorrupt(a.objectKey, () => decodeRunBytes(a));
}

function decodeRunBytes(a: Parameters<typeof decodeRun>[0]): RunData {
  const { table, bytes, objectKey, expected } = a;
  // `{` opens a compact run, and the compressed envelope one written since; an Arrow file opens with its magic.
  if (bytes[0] === 0x7b) return decodeCompactRun(table, bytes, expected);
  if (isCompressed(bytes)) return decodeCompactRun(table, decompressStored(bytes, objectKey), expected);
  const t = readArrowFile(bytes) ?? arrowFileOf(tableFromIPC(bytes));
  const format = t.metadata.get('branchgraph.format');
  if (format !== RUN_FORMAT) throw new Error(`unknown run format ${String(format)}`);
  // Check the shape against what the manifest recorded before touching any row:
  // a corrupted length must not turn into a billion-row loop.
  if (expected !== undefined && t.numRows !== expected.rows) throw new Error(`holds ${t.numRows} rows, the manifest says ${expected.rows}`);
  if (t.numRows > bytes.length) throw new Error(`claims ${t.numRows} rows in ${bytes.length} bytes`);
  const keyCol = t.column('_key');
  const tombCol = t.column('_tomb');
  const hashCol = t.column('_hash');
  if (keyCol === null || tombCol === null || hashCol === null) throw new Error('missing _key, _tomb or _hash column');
  const keys = utf8Strings(keyCol);
  const tombs = trueAt(tombCol);
  const hashes: string[] = utf8Strings(hashCol);
  for (let i = 0; i < t.numRows; i++) {
    if (typeof keys[i] !== 'string' || typeof hashes[i] !== 'string') throw new Error(`row ${i} has a null key or hash`);
  }
  if (expected !== undefined && t.numRows > 0 && !rangeMatches(expected, keys[0] as string, keys[t.numRows - 1] as string)) {
    throw new Error('its key range differs from the manifest');
  }
  const columns = rowProps(table).map((prop) => ({ prop, vector: t.column(prop.name) }));
  return new RunData({ keys, tombs, hashes, columns, byteSize: bytes.length });
}

/**
 * `decodeRun` for a read that may meet large rows: a compressed compact run inflates off the
 * event loop, and a large one's JSON is parsed from its bytes a piece at a time, with turns of the
 * loop between (model/json-parse-steps.ts). Arrow files decode as `decodeRun` does (their columns
 * decode lazily, row by row).
 */
export async function decodeRunOffLoop(a: Parameters<typeof decodeRun>[0]): Promise<RunData> {
  const { table, bytes, objectKey, expected } = a;
  if (!isCompressed(bytes)) return decodeRun(a);
  const inflated = await decompressStoredOffLoop(bytes, objectKey);
  if (inflated.length < LARGE_BYTES) return decodeRun({ ...a, bytes: inflated });
  let doc: unknown;
  try {
    doc = await runStepsInSlices(jsonParseSteps(inflated));
  } catch (e) {
    throw asCorruptError(objectKey, e);
  }
  return asCorrupt(objectKey, () => compactRunOf(table, { doc, byteSize: inflated.length }, expected));
}

function asCorrupt<T>(objectKey: string, decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    throw asCorruptError(objectKey, e);
  }
}

function asCorruptError(objectKey: string, e: unknown): BranchgraphError {
  return new BranchgraphError('corrupt_object', `run ${objectKey} cannot be decoded: ${(e as Error).message}`, {
    cause: e,
    details: { key: objectKey },
  });
}

/** A compact run's rows, checked as an Arrow file's are: the format, each row's shape, key order, count and range. */
function decodeCompactRun(
  table: TableType,
  bytes: Uint8Array,
  expected: Pick<RunRef, 'rows' | 'minKey' | 'maxKey' | 'keysCut'> | undefined,
): RunData {
  return compactRunOf(table, { doc: JSON.parse(TEXT.decode(bytes)), byteSize: bytes.length }, expected);
}

/** A compact run's parsed document, checked. */
function compactRunOf(
  table: TableType,
  parsed: { doc: unknown; byteSize: number },
  expected: Pick<RunRef, 'rows' | 'minKey' | 'maxKey' | 'keysCut'> | undefined,
): RunData {
  const { byteSize } = parsed;
  const doc = (parsed.doc ?? {}) as { format?: unknown; rows?: unknown };
  if (doc.format !== COMPACT_FORMAT) throw new Error(`unknown run format ${String(doc.format)}`);
  if (!Array.isArray(doc.rows)) throw new Error('no rows');
  if (expected !== undefined && doc.rows.length !== expected.rows)
    throw new Error(`holds ${doc.rows.length} rows, the manifest says ${expected.rows}`);
  const rows: RunRow[] = doc.rows.map((x: unknown, i: number) => {
    const [key, tomb, hash, props] = Array.isArray(x) ? x : [];
    const live = tomb === 0 && props !== null && typeof props === 'object' && !Array.isArray(props);
    if (typeof key !== 'string' || typeof hash !== 'string' || (tomb !== 1 && !live)) throw new Error(`row ${i} is malformed`);
    return { key, tomb: tomb === 1, hash, props: live ? (props as Row) : null };
  });
  rows.forEach((r, i) => {
    if (i > 0 && compareKey((rows[i - 1] as RunRow).key, r.key) >= 0) throw new Error(`row ${i} is out of key order`);
  });
  if (expected !== undefined && rows.length > 0 && !rangeMatches(expected, (rows[0] as RunRow).key, (rows.at(-1) as RunRow).key))
    throw new Error('its key range differs from the manifest');
  return new MemoryRunData(table, rows, byteSize);
}

/**
 * A utf8 column's values as strings. Keys and hashes are decoded for every run a read touches, and
 * Arrow's reader decodes each value on its own; an all-ASCII chunk without nulls (every hash, most
 * keys) is decoded once and sliced by its offsets instead, which reads the same strings.
 */
function utf8Strings(v: Vector): string[] {
  // Sized once: pushing a segment's 1,024 strings grew the array by copying, about half of what
  // decoding keys and hashes allocated.
  const out = new Array<string>(v.length);
  let n = 0;
  for (const d of v.data) {
    const offsets = d.valueOffsets as Int32Array | undefined;
    const bytes = d.values as Uint8Array | undefined;
    if (d.nullCount > 0 || d.offset !== 0 || offsets === undefined || bytes === undefined) {
      for (let i = 0; i < d.length; i++, n++) out[n] = v.get(n) as string;
      continue;
    }
    const start = offsets[0] as number;
    const end = offsets[d.length] as number;
    const region = bytes.subarray(start, end);
    if (!isAscii(region)) {
      for (let i = 0; i < d.length; i++, n++) out[n] = TEXT.decode(bytes.subarray(offsets[i] as number, offsets[i + 1] as number));
      continue;
    }
    const text = Buffer.from(region.buffer, region.byteOffset, region.byteLength).toString('latin1');
    for (let i = 0; i < d.length; i++, n++) out[n] = text.slice((offsets[i] as number) - start, (offsets[i + 1] as number) - start);
  }
  return out;
}

/**
 * An int64 column without nulls as numbers, from each value's two 32-bit halves: going through
 * `BigInt64Array` made a BigInt per value and an iterator result per value, most of what decoding
 * a segment's columns allocated. `hi * 2^32 + lo` is one correctly rounded addition of exact
 * terms, the same number `Number(bigint)` gives.
 */
function int64Numbers(v: Vector): number[] {
  const out = new Array<number>(v.length);
  let n = 0;
  for (const d of v.data) {
    // A slice's values start at its first value already (Arrow slices fixed-width buffers with the data).
    const values = d.values as BigInt64Array;
    const words = new Int32Array(values.buffer, values.byteOffset, d.length * 2);
    for (let i = 0; i < d.length; i++, n++) out[n] = (words[2 * i + 1] as number) * 4294967296 + ((words[2 * i] as number) >>> 0);
  }
  return out;
}

/** Which values of a bool column are true (a null is not), read from the bitmaps when nothing is null. */
function trueAt(v: Vector): boolean[] {
  const out = new Array<boolean>(v.length);
  let n = 0;
  for (const d of v.data) {
    // A bitmap is not sliced with its data: a slice's first bit is at its offset.
    const bits = d.values as Uint8Array | undefined;
    if (d.nullCount > 0 || bits === undefined) {
      for (let i = 0; i < d.length; i++, n++) out[n] = v.get(n) === true;
      continue;
    }
    for (let i = d.offset; i < d.offset + d.length; i++, n++) out[n] = (((bits[i >> 3] as number) >> (i & 7)) & 1) === 1;
  }
  return out;
}

const TEXT = new TextDecoder('utf-8', { fatal: false });

function isAscii(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) if ((b[i] as number) > 0x7f) return false;
  return true;
}

/** A run's key range as its entry records it: whole, or both ends cut when either is long. */
export function boundedRange(min: string, max: string): Pick<RunRef, 'minKey' | 'maxKey' | 'keysCut'> {
  if (min.length <= KEY_BOUND_CHARS && max.length <= KEY_BOUND_CHARS) return { minKey: min, maxKey: max };
  return { minKey: boundKey(min), maxKey: boundKey(max), keysCut: true };
}

/** Stats and checksum for a run's manifest entry. */
export function runRefOf(a: { key: string; rows: readonly RunRow[]; file: Uint8Array; bytes?: number | undefined }): RunRef {
  const { key, rows, file, bytes = file.length } = a;
  return {
    key,
    rows: rows.length,
    tombstones: rows.filter((r) => r.tomb).length,
    bytes,
    ...boundedRange(rows[0]?.key ?? '', rows[rows.length - 1]?.key ?? ''),
    checksum: bytesHash(file),
  };
}

/**
 * Refuse bytes whose checksum differs from the manifest's before any parser
 * sees them: a flipped byte must become `corrupt_object`, never a hang or a
 * wrong answer inside the Arrow reader.
 */
export function verifyChecksum(ref: Pick<RunRef, 'key' | 'checksum'>, bytes: Uint8Array): void {
  if (bytesHash(bytes) !== ref.checksum) {
    throw new BranchgraphError('corrupt_object', `${ref.key} does not match the checksum its manifest recorded`, {
      details: { key: ref.key },
    });
  }
}
