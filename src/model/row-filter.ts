/**
 * Typed row filters and orderings: the `where` and `orderBy` of a row query,
 * checked against a table's type and compiled into a predicate and a
 * comparator. Pure; the graph layer runs them over rows, and the typed
 * GraphQL API spells the same grammar with generated input types.
 *
 *   { "age": { "gte": 30, "lt": 40 }, "name": { "prefix": "A" },
 *     "_or": [{ "role": { "eq": "admin" } }, { "_key": { "in": ["a", "b"] } }],
 *     "_not": { "email": { "isNull": true } },
 *     "_to": { "age": { "gt": 50 } } }
 *
 * - A property maps to a comparison; several operators in one comparison
 *   all hold (and). Names that start with `_` are the grammar's own
 *   (`_key`, `_and`, `_or`, `_not`, and on edges `_from` / `_to`, a filter
 *   on the endpoint node), so they never collide with a property.
 * - Operators: `eq`, `ne`, `in`, `notIn` on every type; `lt`, `lte`, `gt`,
 *   `gte` on ordered types (int, float, string, date, datetime, enum, and
 *   the key); `prefix`, `contains` on strings and the key; `isNull` on
 *   optional properties. Values are checked and normalized as stored values
 *   are (a datetime compares in its stored UTC form).
 * - A comparison on a null value is false except `isNull: true`, `ne` and
 *   `notIn` (SQL's three-valued logic would make those unknown; a filter
 *   that hides rows whose property is unset surprises more than it helps).
 * - Order: numbers numerically, booleans false first, text-like types by
 *   their text (datetimes are stored so text order is time order), json by
 *   canonical text. Nulls sort last in either direction. The key, ascending,
 *   breaks ties, so an order is total and pages are stable.
 */
import { canonicalJson } from './canonical.js';
import { BranchgraphError, type ErrorIssue } from './errors.js';
import { keyProps, rowProps, type PropDef, type Schema, type TableType } from './schema.js';
import { checkValue, type Row, type Value } from './values.js';

export const COMPARISON_OPS = ['eq', 'ne', 'in', 'notIn', 'lt', 'lte', 'gt', 'gte', 'prefix', 'contains', 'isNull'] as const;
export type ComparisonOp = (typeof COMPARISON_OPS)[number];
const ORDERED_OPS = new Set<ComparisonOp>(['lt', 'lte', 'gt', 'gte']);
const TEXT_OPS = new Set<ComparisonOp>(['prefix', 'contains']);

/** Most conditions one filter may hold, counted over every nesting. */
export const MAX_FILTER_TERMS = 200;
/** Most values an `in` or `notIn` list may hold. */
export const MAX_IN_VALUES = 1000;

/** What a filter holds once checked: each test names the property (or `_key`) and the stored value. */
export type FilterNode =
  | { kind: 'and' | 'or'; of: FilterNode[] }
  | { kind: 'not'; of: FilterNode }
  | { kind: 'test'; prop: string; op: ComparisonOp; value: Value }
  | { kind: 'end'; end: 'from' | 'to'; of: FilterNode };

/** An entity as a filter sees it: its key, its row, and (for edge filters on endpoints) the endpoint rows. */
export interface FilterSubject {
  key: string;
  row: Row;
  ends?: { from?: Row | null; to?: Row | null };
}

export interface CompiledFilter {
  node: FilterNode | null;
  /** Endpoints the filter reads (edge filters with `_from` / `_to`). */
  ends: { from: boolean; to: boolean };
  test(s: FilterSubject): boolean;
}

export const KEY_FIELD = '_key';

const bad = (issues: ErrorIssue[]): BranchgraphError =>
  new BranchgraphError('invalid_input', `invalid filter: ${issues[0]?.path}: ${issues[0]?.message}`, { issues });

interface Ctx {
  schema: Schema;
  path: string;
  terms: { n: number };
}

/** The key as a property: text, ordered, never null. */
const KEY_PROP: PropDef = { name: KEY_FIELD, type: { kind: 'string' }, optional: false, unique: true, range: null };

function propOf(type: TableType, name: string): PropDef | undefined {
  if (name === KEY_FIELD) return KEY_PROP;
  return rowProps(type).find((p) => p.name === name);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A comparison's operand, checked as a stored value of `prop` is. */
function operand(prop: PropDef, v: unknown, path: string): Value {
  const r = checkValue({ ...prop, optional: false, range: null }, v);
  if ('error' in r) throw bad([{ path, message: r.error.replace(prop.name, 'the value') }]);
  return r.value;
}

function comparison(prop: PropDef, cond: unknown, c: Ctx): FilterNode[] {
  if (!isObject(cond))
    throw bad([{ path: c.path, message: `a comparison object such as {"eq": …}; operators: ${COMPARISON_OPS.join(', ')}` }]);
  const out: FilterNode[] = [];
  const kind = prop.type.kind;
  for (const [op, raw] of Object.entries(cond)) {
    const path = `${c.path}.${op}`;
    if (!(COMPARISON_OPS as readonly string[]).includes(op))
      throw bad([{ path, message: `unknown operator; use ${COMPARISON_OPS.join(', ')}` }]);
    const o = op as ComparisonOp;
    if (ORDERED_OPS.has(o) && (kind === 'bool' || kind === 'json')) throw bad([{ path, message: `${kind} values are not ordered` }]);
    if (TEXT_OPS.has(o) && kind !== 'string') throw bad([{ path, message: `${o} applies to strings` }]);
    if (kind === 'vector' && o !== 'isNull') throw bad([{ path, message: 'a vector is filtered only by isNull; search it with near' }]);
    if (++c.terms.n > MAX_FILTER_TERMS) throw bad([{ path, message: `a filter holds at most ${MAX_FILTER_TERMS} conditions` }]);
    let value: Value;
    if (o === 'isNull') {
      if (typeof raw !== 'boolean') throw bad([{ path, message: 'true or false' }]);
      if (!prop.optional) throw bad([{ path, message: `${prop.name} is never null` }]);
      value = raw;
    } else if (o === 'in' || o === 'notIn') {
      if (!Array.isArray(raw) || raw.length > MAX_IN_VALUES) throw bad([{ path, message: `a list of at most ${MAX_IN_VALUES} values` }]);
      value = raw.map((x, i) => operand(prop, x, `${path}.${i}`));
    } else value = operand(prop, raw, path);
    out.push({ kind: 'test', prop: prop.name, op: o, value });
  }
  return out;
}

function compileNode(type: TableType, where: unknown, c: Ctx): FilterNode {
  if (!isObject(where)) throw bad([{ path: c.path, message: 'a filter object' }]);
  const all: FilterNode[] = [];
  for (const [name, v] of Object.entries(where)) {
    const path = `${c.path}.${name}`;
    const sub = { ...c, path };
    if (name === '_and' || name === '_or') {
      if (!Array.isArray(v)) throw bad([{ path, message: 'a list of filters' }]);
      all.push({ kind: name === '_and' ? 'and' : 'or', of: v.map((x, i) => compileNode(type, x, { ...c, path: `${path}.${i}` })) });
    } else if (name === '_not') all.push({ kind: 'not', of: compileNode(type, v, sub) });
    else if ((name === '_from' || name === '_to') && type.kind === 'edge') {
      const end = c.schema.types.find((t) => t.name === (name === '_from' ? type.from : type.to));
      if (end === undefined) throw bad([{ path, message: 'the endpoint table is not in the schema' }]);
      all.push({ kind: 'end', end: name === '_from' ? 'from' : 'to', of: compileNode(end, v, sub) });
    } else {
      const prop = propOf(type, name);
      if (prop === undefined) throw bad([{ path, message: `${type.name} has no property ${name}` }]);
      all.push(...comparison(prop, v, sub));
    }
  }
  return all.length === 1 ? (all[0] as FilterNode) : { kind: 'and', of: all };
}

function orderValue(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  const sa = typeof a === 'string' ? a : canonicalJson(a);
  const sb = typeof b === 'string' ? b : canonicalJson(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

function testOne(op: ComparisonOp, x: Value, value: Value): boolean {
  if (op === 'isNull') return (x === null) === value;
  if (op === 'ne') return x === null || canonicalJson(x) !== canonicalJson(value);
  if (op === 'notIn') return x === null || !(value as Value[]).some((v) => canonicalJson(v) === canonicalJson(x));
  if (x === null) return false;
  switch (op) {
    case 'eq':
      return typeof x === 'object' ? canonicalJson(x) === canonicalJson(value) : x === value;
    case 'in':
      return (value as Value[]).some((v) => (typeof x === 'object' ? canonicalJson(v) === canonicalJson(x) : v === x));
    case 'prefix':
      return (x as string).startsWith(value as string);
    case 'contains':
      return (x as string).includes(value as string);
    default: {
      const c = orderValue(x, value);
      return op === 'lt' ? c < 0 : op === 'lte' ? c <= 0 : op === 'gt' ? c > 0 : c >= 0;
    }
  }
}

function evaluate(n: FilterNode, s: FilterSubject): boolean {
  switch (n.kind) {
    case 'and':
      return n.of.every((x) => evaluate(x, s));
    case 'or':
      return n.of.some((x) => evaluate(x, s));
    case 'not':
      return !evaluate(n.of, s);
    case 'end': {
      const row = s.ends?.[n.end];
      // An edge whose endpoint is not there (it cannot be, in a valid graph) matches no endpoint filter.
      return row !== undefined && row !== null && evaluate(n.of, { key: '', row });
    }
    case 'test':
      return testOne(n.op, n.prop === KEY_FIELD ? s.key : (s.row[n.prop] ?? null), n.value);
  }
}

function endsOf(n: FilterNode | null, acc = { from: false, to: false }): { from: boolean; to: boolean } {
  if (n === null || n.kind === 'test') return acc;
  if (n.kind === 'end') acc[n.end] = true;
  else for (const x of n.kind === 'not' ? [n.of] : n.of) endsOf(x, acc);
  return acc;
}

/** `where` checked against `type` (invalid_input with the path of the first problem) and compiled. */
export function compileRowFilter(a: { schema: Schema; type: TableType; where: unknown }): CompiledFilter {
  const node =
    a.where === undefined || a.where === null ? null : compileNode(a.type, a.where, { schema: a.schema, path: 'where', terms: { n: 0 } });
  return { node, ends: endsOf(node), test: node === null ? () => true : (s) => evaluate(node, s) };
}

/**
 * Equality tests at the top of a filter (not under `_or` / `_not`), which an
 * index can answer: `_key` and unique properties. Every row the filter
 * admits has one of the listed values.
 */
export function indexableEquality(f: CompiledFilter, type: TableType): { prop: string; values: Value[] } | undefined {
  const top = f.node === null ? [] : f.node.kind === 'and' ? f.node.of : [f.node];
  const unique = new Set(type.kind === 'node' ? type.props.filter((p) => p.unique).map((p) => p.name) : []);
  if (type.kind === 'node' && type.key.length === 1) unique.add(type.key[0] as string);
  let best: { prop: string; values: Value[] } | undefined;
  for (const n of top) {
    if (n.kind !== 'test' || (n.op !== 'eq' && n.op !== 'in') || !(n.prop === KEY_FIELD || unique.has(n.prop) || isEdgeEnd(type, n.prop)))
      continue;
    const values = n.op === 'eq' ? [n.value] : (n.value as Value[]);
    // The key first: it needs no index at all.
    if (best === undefined || n.prop === KEY_FIELD || values.length < best.values.length) best = { prop: n.prop, values };
    if (n.prop === KEY_FIELD) break;
  }
  return best;
}

/**
 * The narrowest equality test at the top of a filter on a stored property
 * (not `_key`), which a column's equality index can answer: every row the
 * filter admits has one of the listed values. Values compared by content
 * (json) are left to the scan.
 */
export function columnEquality(f: CompiledFilter): { prop: string; values: Value[] } | undefined {
  const top = f.node === null ? [] : f.node.kind === 'and' ? f.node.of : [f.node];
  let best: { prop: string; values: Value[] } | undefined;
  for (const n of top) {
    if (n.kind !== 'test' || (n.op !== 'eq' && n.op !== 'in') || n.prop === KEY_FIELD) continue;
    const values = n.op === 'eq' ? [n.value] : (n.value as Value[]);
    if (values.some((v) => v !== null && typeof v === 'object')) continue;
    if (best === undefined || values.length < best.values.length) best = { prop: n.prop, values };
  }
  return best;
}

function isEdgeEnd(type: TableType, prop: string): boolean {
  return type.kind === 'edge' && (prop === 'from' || prop === 'to');
}

export type SortDirection = 'asc' | 'desc';
export interface OrderTerm {
  prop: string;
  direction: SortDirection;
}

/** Most properties one order may name. */
export const MAX_ORDER_TERMS = 8;

/** An order checked against the type; the key, ascending, always closes it. */
export function checkOrder(type: TableType, order: readonly OrderTerm[] | undefined): OrderTerm[] {
  const terms = order ?? [];
  if (terms.length > MAX_ORDER_TERMS) throw bad([{ path: 'orderBy', message: `at most ${MAX_ORDER_TERMS} properties` }]);
  terms.forEach((t, i) => {
    if (propOf(type, t.prop) === undefined) throw bad([{ path: `orderBy.${i}`, message: `${type.name} has no property ${t.prop}` }]);
  });
  const single = keyProps(type).length === 1 && type.kind === 'node' ? (type.key[0] as string) : undefined;
  // Ordering by a one-property key is ordering by the key itself.
  const cut = terms.findIndex((t) => t.prop === KEY_FIELD || (t.prop === single && t.direction === 'asc'));
  return cut >= 0 ? terms.slice(0, cut + 1) : [...terms, { prop: KEY_FIELD, direction: 'asc' }];
}

/** Whether an order is the key order (ascending), which a scan yields as it reads. */
export function isKeyOrder(order: readonly OrderTerm[]): boolean {
  const last = order[order.length - 1];
  return order.length === 1 && last?.prop === KEY_FIELD && last.direction === 'asc';
}

/** The values an entity sorts by, in order; a page cursor carries them. */
export function sortValues(order: readonly OrderTerm[], s: { key: string; row: Row }): Value[] {
  return order.map((t) => (t.prop === KEY_FIELD ? s.key : (s.row[t.prop] ?? null)));
}

/** Compares two entities' sort values; the key ascending must close `order` (checkOrder ensures it). */
export function compareSortValues(order: readonly OrderTerm[], a: readonly Value[], b: readonly Value[]): number {
  for (let i = 0; i < order.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
      continue;
    }
    const c = (order[i] as OrderTerm).prop === KEY_FIELD ? (x < y ? -1 : x > y ? 1 : 0) : orderValue(x, y);
    if (c !== 0) return (order[i] as OrderTerm).direction === 'asc' ? c : -c;
  }
  return 0;
}
