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
import type { Schema, TableType } from '../model/schema.js';
import { compileRowFilter } from '../model/row-filter.js';
import { changedProps, edgeKeyPrefix, MAX_KEY_BYTES, type Row } from '../model/values.js';
import { compareKey } from '../table/run.js';
import { changedStates } from '../table/table-compare.js';
import { EMPTY_TABLE } from '../table/table-version.js';
import { lookupRows, lookupStates } from '../table/table-lookup.js';
import { mergeRuns } from '../table/merge-walk.js';
import { scanPrefix } from '../table/table-prefix.js';
import { encodeNodeKey, IN_SPEC } from '../table/secondary-index.js';
import type { Snapshot } from './snapshot.js';
import type { RunReader, TableReader } from './ports.js';

export const MAX_PAGE = 1000;

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

/**
 * A REST or CLI filter: the typed grammar of model/row-filter.ts (`{"age": {"gte": 30}}`, `_and`,
 * `_or`, `_not`, `_key`), as typed GraphQL spells it. Two older shorthands are still read: a bare
 * value for equality (`{"name": "Ada"}`, `null` for `isNull`) and `{"op": "gte", "value": 30}`.
 */
export type Filter = Record<string, unknown>;

/** A filter in the typed grammar: the shorthands above rewritten, everything else as given. */
export function typedFilter(filter: Filter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, cond] of Object.entries(filter)) {
    const isObject = cond !== null && typeof cond === 'object' && !Array.isArray(cond);
    const keys = isObject ? Object.keys(cond) : [];
    if (name.startsWith('_')) out[name] = cond;
    else if (cond === null) out[name] = { isNull: true };
    else if (!isObject) out[name] = { eq: cond };
    else if (keys.includes('op') && keys.every((k) => k === 'op' || k === 'value')) {
      const { op, value } = cond as { op: unknown; value: unknown };
      out[name] = { [String(op)]: value };
    } else out[name] = cond;
  }
  return out;
}

/**
 * `filter` checked against the table (unknown properties, unknown operators, and values of the
 * wrong type are `invalid_input` naming the path) and compiled; endpoint filters (`_from`, `_to`)
 * need the endpoints' rows, which a row scan does not read.
 */
export function compileFilter(schema: Schema, type: TableType, filter: Filter | undefined): (key: string, row: Row) => boolean {
  if (filter === undefined) return () => true;
  const f = compileRowFilter({ schema, type, where: typedFilter(filter) });
  if (f.ends.from || f.ends.to)
    throw new BranchgraphError('invalid_input', 'filters on edge endpoints (_from, _to) are read by queryRows and typed GraphQL', {
      issues: [{ path: `where.${f.ends.from ? '_from' : '_to'}`, message: 'not available on a row scan' }],
    });
  return (key, row) => f.test({ key, row });
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
  opts: TableRead & { where?: Filter; limit?: number; cursor?: string; at?: unknown },
): Promise<Page<{ key: string; row: Row }>> {
  const { tables, snap, table } = opts;
  const t = tables.table(snap, table, opts.signal);
  const limit = clampLimit(opts.limit);
  const test = compileFilter(snap.schema, t.type, opts.where);
  // A cursor is bound to the ref, table and filter it pages through (model/page-cursor.ts).
  const scope = canonicalJson({ table, where: opts.where ?? null, ...(opts.at !== undefined ? { at: opts.at } : {}) });
  const after = opts.cursor === undefined ? undefined : decodePageCursor('rows', scope, opts.cursor);
  if (after !== undefined && Buffer.byteLength(after, 'utf8') > MAX_KEY_BYTES)
    throw new BranchgraphError('invalid_input', 'invalid cursor', { issues: [{ path: 'cursor', message: 'too long' }] });
  const items: { key: string; row: Row }[] = [];
  // The page and one more row, to know whether another page follows.
  for await (const r of mergeRuns({ runs: t.version.runs, load: t.load, startAfter: after, opts: { pageRows: limit + 1 } })) {
    const row = r.props as Row;
    if (!test(r.key, row)) continue;
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
