/**
 * Reads at a snapshot: get by key, filtered scans with stable cursors, edges
 * of a node, diffs between snapshots, and the commit log.
 *
 * Cursors are the last key returned, encoded; because runs are immutable, a
 * cursor taken at a commit pages through exactly that commit's rows.
 */
import { canonicalJson } from '../model/canonical.js';
import { decodePageCursor, encodePageCursor } from '../model/page-cursor.js';
import { BranchgraphError } from '../model/errors.js';
import type { TableType } from '../model/schema.js';
import { changedProps, edgeKeyPrefix, MAX_KEY_BYTES, type Row, type Value } from '../model/values.js';
import { compareKey } from '../table/run.js';
import { changedStates, EMPTY_TABLE, lookupRows, lookupStates, mergeRuns, scanPrefix } from '../table/table-version.js';
import { encodeNodeKey, IN_SPEC } from '../table/secondary-index.js';
import type { Snapshot } from './snapshot.js';
import type { RunReader, TableReader } from './ports.js';

export const MAX_PAGE = 1000;

export type FilterOp = 'eq' | 'ne' | 'lt' | 'lte' | 'gt' | 'gte' | 'in';
export type Filter = Record<string, Value | { op: FilterOp; value: Value }>;

/** One page of a listing; `nextCursor` continues it, null at the end. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

function clampLimit(limit: number | undefined, dflt = 100): number {
  if (limit === undefined) return dflt;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new BranchgraphError('invalid_input', `limit must be an integer from 1 to ${MAX_PAGE}`, {
      issues: [{ path: 'limit', message: `1..${MAX_PAGE}` }],
    });
  }
  return limit;
}

function compareValues(a: Value, b: Value): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const sa = typeof a === 'string' ? a : canonicalJson(a);
  const sb = typeof b === 'string' ? b : canonicalJson(b);
  return sa < sb ? -1 : sa > sb ? 1 : 0;
}

/** Compile a filter into a row predicate, rejecting unknown properties. */
export function compileFilter(type: TableType, filter: Filter | undefined): (row: Row) => boolean {
  if (filter === undefined) return () => true;
  const props = new Set([...(type.kind === 'edge' ? ['from', 'to'] : []), ...type.props.map((p) => p.name)]);
  const tests: ((row: Row) => boolean)[] = [];
  for (const [name, cond] of Object.entries(filter)) {
    if (!props.has(name))
      throw new BranchgraphError('invalid_input', `${type.name} has no property ${name}`, {
        issues: [{ path: `where.${name}`, message: 'unknown property' }],
      });
    const { op, value } =
      cond !== null && typeof cond === 'object' && !Array.isArray(cond) && 'op' in cond
        ? (cond as { op: FilterOp; value: Value })
        : { op: 'eq' as const, value: cond as Value };
    const v = (row: Row): Value => row[name] ?? null;
    switch (op) {
      case 'eq':
        tests.push((r) => canonicalJson(v(r)) === canonicalJson(value));
        break;
      case 'ne':
        tests.push((r) => canonicalJson(v(r)) !== canonicalJson(value));
        break;
      case 'in': {
        if (!Array.isArray(value))
          throw new BranchgraphError('invalid_input', `where.${name}: "in" takes a list`, {
            issues: [{ path: `where.${name}`, message: 'expected a list' }],
          });
        const allowed = new Set(value.map((x) => canonicalJson(x)));
        tests.push((r) => allowed.has(canonicalJson(v(r))));
        break;
      }
      case 'lt':
      case 'lte':
      case 'gt':
      case 'gte':
        tests.push((r) => {
          const x = v(r);
          if (x === null || value === null) return false;
          const c = compareValues(x, value);
          return op === 'lt' ? c < 0 : op === 'lte' ? c <= 0 : op === 'gt' ? c > 0 : c >= 0;
        });
        break;
      default:
        throw new BranchgraphError('invalid_input', `where.${name}: unknown operator ${String(op)}`, {
          issues: [{ path: `where.${name}.op`, message: 'eq, ne, lt, lte, gt, gte or in' }],
        });
    }
  }
  return (row) => tests.every((t) => t(row));
}

/** Where a read looks: the tables of one snapshot, one table of them, and the caller's signal. */
export interface TableRead {
  tables: TableReader;
  snap: Snapshot;
  table: string;
  signal?: AbortSignal | undefined;
}

export async function getRow(read: TableRead & { key: string }): Promise<Row | null> {
  const { tables, snap, table, key, signal } = read;
  const t = tables.table(snap, table, signal);
  const found = await lookupRows(t.version, [key], t.load);
  return (found.get(key)?.props as Row | undefined) ?? null;
}

export async function scanRows(
  opts: TableRead & { where?: Filter; limit?: number; cursor?: string },
): Promise<Page<{ key: string; row: Row }>> {
  const { tables, snap, table } = opts;
  const t = tables.table(snap, table, opts.signal);
  const limit = clampLimit(opts.limit);
  const test = compileFilter(t.type, opts.where);
  // A cursor is bound to the table and filter it pages through (model/page-cursor.ts).
  const scope = canonicalJson({ table, where: opts.where ?? null });
  const after = opts.cursor === undefined ? undefined : decodePageCursor('rows', scope, opts.cursor);
  if (after !== undefined && Buffer.byteLength(after, 'utf8') > MAX_KEY_BYTES)
    throw new BranchgraphError('invalid_input', 'invalid cursor', { issues: [{ path: 'cursor', message: 'too long' }] });
  const items: { key: string; row: Row }[] = [];
  // The page and one more row, to know whether another page follows.
  for await (const r of mergeRuns({ runs: t.version.runs, load: t.load, startAfter: after, opts: { pageRows: limit + 1 } })) {
    const row = r.props as Row;
    if (!test(row)) continue;
    if (items.length === limit)
      return { items, nextCursor: encodePageCursor('rows', scope, (items[items.length - 1] as { key: string }).key) };
    items.push({ key: r.key, row });
  }
  return { items, nextCursor: null };
}

/** Every live row of a table, in key order, as it is read (exports): pending WAL rows in, tombstones and older versions out. */
export async function* liveRows(read: TableRead): AsyncIterable<{ key: string; row: Row }> {
  const t = read.tables.table(read.snap, read.table, read.signal);
  for await (const r of mergeRuns({ runs: t.version.runs, load: t.load })) yield { key: r.key, row: r.props as Row };
}

/** Every live row of a table, in key order, in memory (exact checks). */
export async function allRows(read: TableRead): Promise<{ key: string; row: Row }[]> {
  const out: { key: string; row: Row }[] = [];
  for await (const r of liveRows(read)) out.push(r);
  return out;
}

const notKind = (name: string, what: string, path: string): BranchgraphError =>
  new BranchgraphError('invalid_input', `${name} is not ${what}`, { issues: [{ path, message: `not ${what}` }] });

export async function edgesOf(opts: {
  tables: TableReader;
  snap: Snapshot;
  nodeTable: string;
  key: string;
  direction?: 'out' | 'in' | 'both';
  edgeTable?: string;
  signal?: AbortSignal | undefined;
}): Promise<{ table: string; key: string; row: Row }[]> {
  const { tables, snap, nodeTable, key } = opts;
  if (tables.table(snap, nodeTable, opts.signal).type.kind !== 'node') throw notKind(nodeTable, 'a node table', 'table');
  // A named edge table must be one: a typo or a node table is an error, never an empty list.
  if (opts.edgeTable !== undefined && tables.table(snap, opts.edgeTable, opts.signal).type.kind !== 'edge')
    throw notKind(opts.edgeTable, 'an edge table', 'edgeTable');
  const direction = opts.direction ?? 'both';
  const out: { table: string; key: string; row: Row }[] = [];
  for (const et of snap.schema.types) {
    if (et.kind !== 'edge' || (opts.edgeTable !== undefined && et.name !== opts.edgeTable)) continue;
    const t = tables.table(snap, et.name, opts.signal);
    if (direction !== 'in' && et.from === nodeTable) {
      for await (const r of scanPrefix(t.version, t.load, edgeKeyPrefix(key)))
        out.push({ table: et.name, key: r.key, row: r.props as Row });
    }
    if (direction !== 'out' && et.to === nodeTable) {
      // By the `in` index: the work is this node's edges, not the edge table.
      const enc = encodeNodeKey(key);
      const ks = (await t.indexes.holders(IN_SPEC, [enc])).get(enc) ?? [];
      const rows = await lookupRows(t.version, ks, t.load);
      for (const k of ks) {
        const r = rows.get(k);
        if (r !== undefined && !(direction === 'both' && et.from === nodeTable && out.some((o) => o.table === et.name && o.key === k)))
          out.push({ table: et.name, key: k, row: r.props as Row });
      }
    }
  }
  return out;
}

export interface TableDiff {
  table: string;
  inserted: { key: string; row: Row }[];
  updated: { key: string; before: Row; after: Row; changed: string[] }[];
  deleted: { key: string; row: Row }[];
}

/** What changed from `from` to `to`, per table (tables sorted by name). */
export async function diffSnapshots(d: {
  runs: RunReader;
  from: Snapshot;
  to: Snapshot;
  signal?: AbortSignal | undefined;
}): Promise<TableDiff[]> {
  const { runs, from, to, signal } = d;
  const names = [...new Set([...Object.keys(from.tables), ...Object.keys(to.tables)])].sort();
  const out: TableDiff[] = [];
  for (const name of names) {
    const typeTo = to.schema.types.find((t) => t.name === name);
    const typeFrom = from.schema.types.find((t) => t.name === name);
    const type = typeTo ?? typeFrom;
    if (type === undefined) continue;
    const load = runs.loader(type, signal);
    const a = from.tables[name] ?? EMPTY_TABLE;
    const b = to.tables[name] ?? EMPTY_TABLE;
    const changed = await changedStates(a, b, load);
    if (changed.size === 0) continue;
    const before = await lookupStates(a, changed.keys(), load);
    const d: TableDiff = { table: name, inserted: [], updated: [], deleted: [] };
    for (const key of [...changed.keys()].sort(compareKey)) {
      const x = before.get(key);
      const y = changed.get(key);
      const xr = x === undefined || x.tomb ? null : (x.props as Row);
      const yr = y === undefined || y.tomb ? null : (y.props as Row);
      if (xr === null && yr !== null) d.inserted.push({ key, row: yr });
      else if (xr !== null && yr === null) d.deleted.push({ key, row: xr });
      else if (xr !== null && yr !== null) {
        const props = changedProps(xr, yr);
        if (props.length > 0) d.updated.push({ key, before: xr, after: yr, changed: props });
      }
    }
    if (d.inserted.length + d.updated.length + d.deleted.length > 0) out.push(d);
  }
  return out;
}
