/**
 * Entity values: validation against the schema, keys, and content hashes.
 *
 * A row holds every property of its table (endpoints included for edges);
 * an optional property that is not set holds null. Keys are strings so every
 * table sorts and compares the same way: a single-property key is the value's
 * text (`alice`, `42`); composite keys and edge keys are canonical JSON arrays
 * (`["alice","bob"]`). Scan order is key-string order.
 */
import { canonicalJson, contentHash, type JsonValue } from './canonical.js';
import type { ErrorIssue } from './errors.js';
import { findInputProblem } from './text.js';
import { keyProps, rowProps, type PropDef, type TableType } from './schema.js';

export type Value = JsonValue;
export type Row = Record<string, Value>;

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;

function validDate(s: string): boolean {
  const m = DATE_RE.exec(s);
  if (m === null) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}

/** Nesting of arrays and objects a json value may have (deeper values cost stack in every encoder). */
export const MAX_JSON_DEPTH = 64;

/** Depth of a JSON-like value, counting no further than `cap` + 1. */
function jsonDepth(v: unknown, cap: number): number {
  if (v === null || typeof v !== 'object') return 0;
  if (cap < 0) return 1;
  let max = 0;
  for (const x of Array.isArray(v) ? v : Object.values(v as Record<string, unknown>)) max = Math.max(max, jsonDepth(x, cap - 1));
  return max + 1;
}

const DATETIME_RE = /^(\d{4}-\d{2}-\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

/**
 * A datetime in its stored form: UTC with six fractional digits,
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ`, so the text sorts as the instants do.
 * Microseconds are kept (as PostgreSQL and DATETIME(6) keep them), so two
 * instants a microsecond apart never merge as equal; finer non-zero digits
 * cannot be kept and are refused rather than rounded. Without a zone the
 * time is UTC. (Values stored before microseconds were kept have three
 * digits; they read back as stored, and a rewrite normalizes them.)
 */
export function normalizeDatetime(s: string): { value: string } | { error: string; malformed?: true } {
  const bad = { error: 'must be an ISO 8601 date-time string, such as 2026-01-31T12:00:00.000001Z' };
  const m = DATETIME_RE.exec(s);
  if (m === null) return bad;
  const [, day, hh, mm, ss = '00', frac = '', zone = 'Z'] = m as unknown as [string, string, string, string, string?, string?, string?];
  if (!validDate(day) || Number(hh) > 23 || Number(mm) > 59 || Number(ss) > 59) return bad;
  if (/[1-9]/.test(frac.slice(6))) return { error: 'has more precision than microseconds, which cannot be stored', malformed: true };
  const micros = Number(frac.padEnd(6, '0').slice(0, 6));
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(3).replace(':', '').padEnd(2, '0')}`;
  const ms = Date.parse(`${day}T${hh}:${mm}:${ss}.000${offset}`);
  if (Number.isNaN(ms)) return bad;
  const iso = new Date(ms + Math.floor(micros / 1000)).toISOString();
  return { value: `${iso.slice(0, -1)}${String(micros % 1000).padStart(3, '0')}Z` };
}

/**
 * Validate and normalize one value; returns the stored value or an error
 * message. `malformed` marks input no schema could accept (text that cannot
 * be stored, precision that cannot be kept): callers answer `invalid_input`
 * for it rather than a constraint violation.
 */
export function checkValue(prop: PropDef, v: unknown): { value: Value } | { error: string; malformed?: true } {
  if (v === null || v === undefined) {
    return prop.optional ? { value: null } : { error: `${prop.name} is required` };
  }
  const problem = findInputProblem(v, prop.name);
  if (problem !== undefined) return { error: `${problem.path} ${problem.message}`, malformed: true };
  const t = prop.type;
  switch (t.kind) {
    case 'string':
      if (typeof v !== 'string') return { error: `${prop.name} must be a string` };
      return { value: v };
    case 'int':
      if (typeof v !== 'number' || !Number.isSafeInteger(v)) return { error: `${prop.name} must be an integer within ±2^53` };
      return checkRange(prop, v);
    case 'float':
      if (typeof v !== 'number' || !Number.isFinite(v)) return { error: `${prop.name} must be a finite number` };
      return checkRange(prop, Object.is(v, -0) ? 0 : v);
    case 'bool':
      if (typeof v !== 'boolean') return { error: `${prop.name} must be true or false` };
      return { value: v };
    case 'date':
      if (typeof v !== 'string' || !validDate(v)) return { error: `${prop.name} must be a date YYYY-MM-DD` };
      return { value: v };
    case 'datetime': {
      const r = typeof v === 'string' ? normalizeDatetime(v) : { error: 'must be an ISO 8601 date-time string' };
      return 'error' in r ? { ...r, error: `${prop.name} ${r.error}` } : r;
    }
    case 'json':
      if (jsonDepth(v, MAX_JSON_DEPTH) > MAX_JSON_DEPTH)
        return { error: `${prop.name} nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, malformed: true };
      try {
        // Round-trip through canonical form: rejects non-JSON values such as NaN.
        return { value: JSON.parse(canonicalJson(v)) as Value };
      } catch {
        return { error: `${prop.name} must be a JSON value` };
      }
    case 'enum':
      if (typeof v !== 'string' || !t.values.includes(v)) return { error: `${prop.name} must be one of ${t.values.join(', ')}` };
      return { value: v };
    case 'vector':
      return checkVector(prop.name, t.dims, v);
  }
}

/**
 * A vector value: exactly `dims` finite numbers, stored as float32 (each rounded to the nearest
 * float32, so what is read back is what is stored). A value beyond float32's range would round
 * to infinity, and is refused like NaN.
 */
function checkVector(name: string, dims: number, v: unknown): { value: Value } | { error: string; malformed?: true } {
  if (!Array.isArray(v) || v.length !== dims) return { error: `${name} must be a list of ${dims} numbers` };
  const out = new Array<number>(dims);
  for (let i = 0; i < dims; i++) {
    const x = v[i];
    const f = typeof x === 'number' ? Math.fround(x) : Number.NaN;
    if (!Number.isFinite(f)) return { error: `${name}[${i}] must be a finite float32 number` };
    out[i] = Object.is(f, -0) ? 0 : f;
  }
  return { value: out };
}

function checkRange(prop: PropDef, v: number): { value: Value } | { error: string } {
  const r = prop.range;
  if (r !== null && ((r.min !== null && v < r.min) || (r.max !== null && v > r.max))) {
    return { error: `${prop.name} must be within [${r.min ?? '-∞'}, ${r.max ?? '∞'}], got ${v}` };
  }
  return { value: v };
}

/** A table's properties and names, made once per table type: a load checks a million rows against them. */
interface RowShape {
  props: PropDef[];
  known: Set<string>;
  keys: Set<string>;
  /** Property names in canonical (sorted) order, each with its JSON-quoted form and colon. */
  sorted: { name: string; quoted: string }[];
}

const shapes = new WeakMap<TableType, RowShape>();

function rowShape(table: TableType): RowShape {
  let s = shapes.get(table);
  if (s === undefined) {
    const props = rowProps(table);
    const names = props.map((p) => p.name).sort();
    s = {
      props,
      known: new Set(names),
      keys: new Set(keyProps(table)),
      sorted: names.map((name) => ({ name, quoted: `${JSON.stringify(name)}:` })),
    };
    shapes.set(table, s);
  }
  return s;
}

/**
 * The canonical text of a row checkRow made (its keys are the table's properties): the same text
 * as canonicalJson(row), without sorting and quoting the names again for every row of a load.
 */
export function rowText(table: TableType, row: Row): string {
  let out = '{';
  for (const { name, quoted } of rowShape(table).sorted) {
    const v = row[name];
    if (v === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${quoted}${canonicalJson(v)}`;
  }
  return `${out}}`;
}

/**
 * Validate `input` as a row of `table`. `full` rows need every required
 * property; `partial` rows (updates) need the key and check only what is given.
 */
export function checkRow(a: { table: TableType; input: unknown; mode: 'full' | 'partial'; path: string }): {
  row: Row;
  issues: ErrorIssue[];
  malformed: boolean;
} {
  const { table, input, mode, path } = a;
  const issues: ErrorIssue[] = [];
  const row: Row = {};
  let malformed = false;
  if (input === null || typeof input !== 'object' || Array.isArray(input)) {
    return { row, issues: [{ path, message: 'a row must be an object of property values' }], malformed };
  }
  const obj = input as Record<string, unknown>;
  const { props, known, keys } = rowShape(table);
  for (const name in obj) {
    if (Object.hasOwn(obj, name) && !known.has(name))
      issues.push({ path: `${path}.${name}`, message: `${table.name} has no property ${name}` });
  }
  for (const prop of props) {
    const given = Object.hasOwn(obj, prop.name);
    if (mode === 'partial' && !given && !keys.has(prop.name)) continue;
    const r = checkValue(prop, obj[prop.name]);
    if ('error' in r) {
      issues.push({ path: `${path}.${prop.name}`, message: r.error });
      malformed ||= r.malformed === true;
    } else row[prop.name] = r.value;
  }
  for (const k of keys) {
    if (row[k] === null) issues.push({ path: `${path}.${k}`, message: `key property ${k} cannot be null` });
  }
  return { row, issues, malformed };
}

/**
 * Size limits of what a row may hold, in UTF-8 bytes. Keys are stored in
 * run files and, at run edges, in manifests and page cursors, so they are
 * kept small; a row as a whole is bounded so one write cannot make every
 * later read carry megabytes.
 */
export const MAX_KEY_BYTES = 1024;
export const MAX_ROW_BYTES = 1024 * 1024;

/** The size problem of a row with key `key` (whose canonical text is `text`, when already made), or undefined. */
export function rowSizeProblem(key: string, row: Row, text = canonicalJson(row)): string | undefined {
  const keyBytes = Buffer.byteLength(key, 'utf8');
  if (keyBytes > MAX_KEY_BYTES) return `the key is ${keyBytes} bytes; keys are limited to ${MAX_KEY_BYTES} bytes (UTF-8)`;
  // Counted on every row, not only long ones: counting flattens the text, which was built by
  // appending, so a batch holds one string per row until it is hashed rather than a rope of pieces
  // (a 200,000-row load peaked 100 MiB higher without it).
  const rowBytes = Buffer.byteLength(text, 'utf8');
  if (rowBytes > MAX_ROW_BYTES) return `the row is ${rowBytes} bytes; rows are limited to ${MAX_ROW_BYTES} bytes (as canonical JSON)`;
  return undefined;
}

/** The key string of a row (which must hold its key properties). */
export function entityKey(table: TableType, row: Row): string {
  const names = keyProps(table);
  if (names.length === 1) {
    const v = row[names[0] as string];
    return typeof v === 'string' ? v : canonicalJson(v);
  }
  return canonicalJson(names.map((n) => row[n] ?? null));
}

/** Key string of a node addressed by its key values, as edges refer to it. */
export function nodeRefKey(value: Value): string {
  return typeof value === 'string' ? value : canonicalJson(value);
}

/** The content hash of a row's properties; equal rows hash equal. */
export function rowHash(row: Row): string {
  return contentHash(canonicalJson(row));
}

/** Properties whose values differ between two rows of one table. */
export function changedProps(a: Row, b: Row): string[] {
  const names = new Set([...Object.keys(a), ...Object.keys(b)]);
  const out: string[] = [];
  for (const n of names) if (canonicalJson(a[n] ?? null) !== canonicalJson(b[n] ?? null)) out.push(n);
  return out.sort();
}

/** The key prefix shared by every edge leaving node `fromKey` (edge keys start with from). */
export function edgeKeyPrefix(fromKey: string): string {
  return `[${JSON.stringify(fromKey)},`;
}
