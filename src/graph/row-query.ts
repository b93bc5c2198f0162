/**
 * Row queries at a snapshot, batched: typed filters (model/row-filter.ts),
 * any order, pages with bound cursors and exact counts; lookups of many keys
 * or many unique values at once; and the edges of many nodes at once.
 *
 * Each call is one plan over the table's runs, chosen from the filter:
 * - equality on the key (`_key`) reads just those keys;
 * - equality on a `@unique` property asks the unique index, then the keys;
 * - on an edge table, equality on `from` reads the key prefixes (edge keys
 *   start with their source), on `to` the incoming-edge index;
 * - anything else scans the table once in key order; when the order is the
 *   key order and no count is asked, the scan stops after the page. An
 *   equality on any other property narrows the scan: each decoded run keeps
 *   an index of that column, built the first time it is asked, and reads
 *   only the positions the index gives.
 * A batch of nodes costs one pass per run segment touched, never one call
 * per node: lookups sort their keys so each segment is read once, and
 * segments already read are served from the run cache.
 *
 * Edge filters on endpoints (`_from` / `_to`) look the endpoints up in one
 * batch per page of candidates.
 */
import { canonicalJson } from '../model/canonical.js';
import { BranchgraphError } from '../model/errors.js';
import { decodePageCursor, encodePageCursor } from '../model/page-cursor.js';
import {
  checkOrder,
  compareSortValues,
  columnEquality,
  compileRowFilter,
  indexableEquality,
  isKeyOrder,
  KEY_FIELD,
  sortValues,
  type CompiledFilter,
  type OrderTerm,
} from '../model/row-filter.js';
import type { EdgeType, TableType } from '../model/schema.js';
import { edgeKeyPrefix, nodeRefKey, type Row, type Value } from '../model/values.js';
import { compareKey } from '../table/run.js';
import { firstIndex, mergeSpans } from '../table/merge-walk.js';
import { lookupRows } from '../table/table-lookup.js';
import { prefixRowsMany } from '../table/table-prefix.js';
import { type TableVersion, type LoadRun } from '../table/table-version.js';
import { encodeNodeKey, encodeUnique, IN_SPEC, uniqueSpec } from '../table/secondary-index.js';
import { MAX_PAGE } from './reads.js';
import { DEFAULT_ROWS_PAGE } from '../model/page-size.js';
import type { Snapshot } from './snapshot.js';
import type { TableReader, TableView } from './ports.js';

/** One entity of a page, with the cursor that continues after it. */
export interface QueryItem {
  key: string;
  row: Row;
  cursor: string;
}

export interface QueryPage {
  items: QueryItem[];
  hasNextPage: boolean;
  /** Entities the filter admits, over every page (when asked). */
  totalCount?: number;
  /** Rows the plan read to answer (narrowed candidates, or every row a scan passed). */
  rowsRead: number;
}

/** What a query asks: the filter and order (checked here), a page, and whether to count. */
export interface QueryAsk {
  where?: unknown;
  orderBy?: readonly OrderTerm[];
  first?: number;
  after?: string;
  count?: boolean;
}

interface Scope {
  tables: TableReader;
  snap: Snapshot;
  signal?: AbortSignal | undefined;
}

/** A query checked against its table: its filter, its total order, the page and where it resumes. */
interface Checked {
  view: TableView;
  filter: CompiledFilter;
  order: OrderTerm[];
  first: number;
  after: Value[] | undefined;
  scope: string;
}

function checkAsk(s: Scope & { table: string; ask: QueryAsk; cursorScope?: unknown }): Checked {
  const { table, ask, cursorScope } = s;
  const view = s.tables.table(s.snap, table, s.signal);
  const first = ask.first ?? DEFAULT_ROWS_PAGE;
  if (!Number.isInteger(first) || first < 0 || first > MAX_PAGE)
    throw new BranchgraphError('invalid_input', `first must be an integer from 0 to ${MAX_PAGE}`, {
      issues: [{ path: 'first', message: `0..${MAX_PAGE}` }],
    });
  const filter = compileRowFilter({ schema: s.snap.schema, type: view.type, where: ask.where });
  const order = checkOrder(view.type, ask.orderBy);
  // A cursor belongs to its table, filter and order (and, for traversals, its edge table and direction).
  const scope = canonicalJson({ table, where: ask.where ?? null, order, of: cursorScope ?? null });
  let after: Value[] | undefined;
  if (ask.after !== undefined) {
    const pos = JSON.parse(decodePageCursor('query', scope, ask.after)) as unknown;
    if (!Array.isArray(pos) || pos.length !== order.length)
      throw new BranchgraphError('invalid_input', 'invalid cursor', { issues: [{ path: 'after', message: 'not a cursor of this query' }] });
    after = pos as Value[];
  }
  return { view, filter, order, first, after, scope };
}

/** Rows of `keys` that exist, in key order. */
async function rowsOf(view: TableView, keys: Iterable<string>): Promise<{ key: string; row: Row }[]> {
  const found = await lookupRows(view.version, keys, view.load);
  return [...found.values()].sort((a, b) => compareKey(a.key, b.key)).map((r) => ({ key: r.key, row: r.props as Row }));
}

/** The candidates a filter's indexable equality narrows to, or undefined when the table must be scanned. */
async function candidates(view: TableView, filter: CompiledFilter): Promise<{ key: string; row: Row }[] | undefined> {
  const eq = indexableEquality(filter, view.type);
  if (eq === undefined) return undefined;
  const type = view.type;
  if (eq.prop === KEY_FIELD || (type.kind === 'node' && type.key.length === 1 && type.key[0] === eq.prop))
    return rowsOf(
      view,
      eq.values.map((v) => nodeRefKey(v)),
    );
  if (type.kind === 'edge' && eq.prop === 'from') {
    const sources = [...new Set(eq.values as string[])].sort(compareKey);
    const found = await prefixRowsMany({ v: view.version, load: view.load, prefixes: sources.map(edgeKeyPrefix) });
    return [...found.values()].flat().map((r) => ({ key: r.key, row: r.props as Row }));
  }
  const spec = type.kind === 'edge' ? IN_SPEC : uniqueSpec(eq.prop);
  const encs = eq.values.map((v) => (type.kind === 'edge' ? encodeNodeKey(v as string) : encodeUnique(v)));
  const held = await view.indexes.holders(spec, encs);
  return rowsOf(view, [...held.values()].flat());
}

/** Endpoint rows of a batch of edges, looked up together, for filters on `_from` / `_to`. */
async function withEnds(
  s: Scope,
  c: { type: TableType; filter: CompiledFilter; rows: { key: string; row: Row }[] },
): Promise<{ key: string; row: Row; ends?: { from?: Row | null; to?: Row | null } }[]> {
  const { type, filter, rows } = c;
  if (type.kind !== 'edge' || (!filter.ends.from && !filter.ends.to)) return rows;
  const look = async (table: string, keys: string[]): Promise<Map<string, Row>> => {
    const view = s.tables.table(s.snap, table, s.signal);
    return new Map((await rowsOf(view, keys)).map((r) => [r.key, r.row]));
  };
  const [from, to] = await Promise.all([
    filter.ends.from
      ? look(
          type.from,
          rows.map((r) => r.row.from as string),
        )
      : undefined,
    filter.ends.to
      ? look(
          type.to,
          rows.map((r) => r.row.to as string),
        )
      : undefined,
  ]);
  return rows.map((r) => ({
    ...r,
    ends: { from: from?.get(r.row.from as string) ?? null, to: to?.get(r.row.to as string) ?? null },
  }));
}

/**
 * An item whose cursor is made when read: a cursor is a hash over the query and the position,
 * and most readers of a page (a typed query's `nodes`, a traversal) never ask for one. A class,
 * so a page of thousands of items allocates no closure per item; `toJSON` keeps the cursor in
 * what a REST reply serializes.
 */
class LazyItem implements QueryItem {
  private made: string | undefined;

  constructor(
    readonly key: string,
    readonly row: Row,
    private readonly at: { scope: string; position: readonly Value[] },
  ) {}

  get cursor(): string {
    this.made ??= encodePageCursor('query', this.at.scope, JSON.stringify(this.at.position));
    return this.made;
  }

  toJSON(): { key: string; row: Row; cursor: string } {
    return { key: this.key, row: this.row, cursor: this.cursor };
  }
}

function itemOf(key: string, row: Row, at: { scope: string; position: readonly Value[] }): QueryItem {
  return new LazyItem(key, row, at);
}

/**
 * Live rows of a version in key order after `startAfter`, a batch at a time, with how many live
 * rows each batch read; only rows `admit` takes are built, so a filter that refuses most of a
 * table allocates nothing for them. With `narrow` (an equality every admitted row meets), each
 * decoded run reads only the positions its column index gives for those values.
 */
export async function* liveRows(
  v: TableVersion,
  c: {
    load: LoadRun;
    startAfter?: string | undefined;
    admit?: (s: { key: string; row: Row }) => boolean;
    narrow?: { prop: string; values: Value[] } | undefined;
    /** Rows a page in key order will take (see `mergeSpans`' `pageRows`). */
    pageRows?: number;
  },
): AsyncGenerator<{ rows: { key: string; row: Row }[]; passed: number }> {
  const { admit, narrow } = c;
  for await (const batch of mergeSpans({ runs: v.runs, load: c.load, startAfter: c.startAfter, opts: { pageRows: c.pageRows } })) {
    const rows: { key: string; row: Row }[] = [];
    let passed = 0;
    for (const { data, from, to } of batch) {
      const view = admit === undefined ? undefined : data.rowView();
      const probe = { key: '', row: {} as Row };
      const positions = narrow === undefined ? undefined : data.positionsOf(narrow.prop, narrow.values);
      const at = (x: number) => (positions === undefined ? x : firstIndex(positions.length, (n) => (positions[n] as number) >= x));
      const end = at(to);
      for (let p = at(from); p < end; p++) {
        const i = positions === undefined ? p : (positions[p] as number);
        if (data.tombs[i]) continue;
        passed++;
        const key = data.keys[i] as string;
        if (view !== undefined) {
          probe.key = key;
          probe.row = view(i);
          if (!admit?.(probe)) continue;
        }
        rows.push({ key, row: data.propsAt(i) });
      }
    }
    yield { rows, passed };
  }
}

/** One page of `rows` (already narrowed, any order) under the checked query. */
async function pageOf(s: Scope, c: Checked & { rows: { key: string; row: Row }[]; count: boolean }): Promise<QueryPage> {
  const { rows, count } = c;
  const admitted = (await withEnds(s, { type: c.view.type, filter: c.filter, rows })).filter((r) => c.filter.test(r));
  const keyed = admitted.map((r) => ({ key: r.key, row: r.row, sort: sortValues(c.order, r) }));
  keyed.sort((a, b) => compareSortValues(c.order, a.sort, b.sort));
  const after = c.after;
  const start = after === undefined ? 0 : keyed.findIndex((r) => compareSortValues(c.order, r.sort, after) > 0);
  const rest = start < 0 ? [] : keyed.slice(start);
  const items = rest.slice(0, c.first).map((r) => itemOf(r.key, r.row, { scope: c.scope, position: r.sort }));
  return { items, hasNextPage: rest.length > c.first, ...(count ? { totalCount: admitted.length } : {}), rowsRead: rows.length };
}

/** A key-order page read as the scan goes, stopping after the page (no count asked, no endpoint filter). */
async function streamedPage(c: Checked): Promise<QueryPage> {
  const items: QueryItem[] = [];
  const startAfter = c.after === undefined ? undefined : String(c.after[0]);
  let rowsRead = 0;
  const narrow = columnEquality(c.filter);
  const page = { load: c.view.load, startAfter, admit: c.filter.test, narrow, pageRows: c.first + 1 };
  for await (const { rows, passed } of liveRows(c.view.version, page)) {
    rowsRead += passed;
    for (const r of rows) {
      if (items.length === c.first) return { items, hasNextPage: true, rowsRead };
      items.push(itemOf(r.key, r.row, { scope: c.scope, position: [r.key] }));
    }
  }
  return { items, hasNextPage: false, rowsRead };
}

/** Rows of a table at a snapshot that a typed filter admits, in any order, a page at a time. */
export async function queryRows(q: Scope & { table: string; ask: QueryAsk }): Promise<QueryPage> {
  const c = checkAsk(q);
  const count = q.ask.count === true;
  const narrowed = await candidates(c.view, c.filter);
  if (narrowed !== undefined) return pageOf(q, { ...c, rows: narrowed, count });
  const endsNeeded = c.filter.ends.from || c.filter.ends.to;
  if (isKeyOrder(c.order) && !count && !endsNeeded) return streamedPage(c);
  // Without endpoint filters, rows the filter refuses are dropped as the scan goes; pageOf counts what was read.
  const all: { key: string; row: Row }[] = [];
  let read = 0;
  const narrow = columnEquality(c.filter);
  for await (const { rows, passed } of liveRows(c.view.version, {
    load: c.view.load,
    narrow,
    ...(endsNeeded ? {} : { admit: c.filter.test }),
  })) {
    read += passed;
    all.push(...rows);
  }
  return { ...(await pageOf(q, { ...c, rows: all, count })), rowsRead: read };
}

/** Most keys or values one batched lookup may name. */
export const MAX_BATCH_KEYS = 10_000;

function checkBatch(n: number, path: string): void {
  if (n > MAX_BATCH_KEYS)
    throw new BranchgraphError('invalid_input', `at most ${MAX_BATCH_KEYS} keys per batch`, {
      issues: [{ path, message: `at most ${MAX_BATCH_KEYS}` }],
    });
}

/**
 * Entities by key, or by the values of a `@unique` property, in one batch:
 * the row for each asked key or value, null where there is none.
 */
export async function lookupMany(
  q: Scope & { table: string; keys?: readonly string[]; unique?: { prop: string; values: readonly Value[] } },
): Promise<({ key: string; row: Row } | null)[]> {
  const view = q.tables.table(q.snap, q.table, q.signal);
  if (q.unique === undefined) {
    const keys = q.keys ?? [];
    checkBatch(keys.length, 'keys');
    const found = await lookupRows(view.version, keys, view.load);
    return keys.map((k) => {
      const r = found.get(k);
      return r === undefined ? null : { key: k, row: r.props as Row };
    });
  }
  const { prop, values } = q.unique;
  checkBatch(values.length, 'unique.values');
  const def = view.type.kind === 'node' ? view.type.props.find((p) => p.name === prop) : undefined;
  if (def === undefined || !def.unique)
    throw new BranchgraphError('invalid_input', `${q.table}.${prop} is not a @unique property`, {
      issues: [{ path: 'unique.prop', message: 'not @unique' }],
    });
  const encs = values.map((v) => encodeUnique(v));
  const held = await view.indexes.holders(uniqueSpec(prop), encs);
  const rows = new Map((await rowsOf(view, [...held.values()].flat())).map((r) => [r.key, r]));
  return encs.map((e) => rows.get(held.get(e)?.[0] ?? '') ?? null);
}

/** The edges of one node, a page of them under the query, as `neighbors` answers per node. */
export interface NodeEdges extends Omit<QueryPage, 'rowsRead'> {
  node: string;
}

/**
 * The edges of `edgeTable` leaving (`out`) or reaching (`in`) each of many
 * nodes, filtered, ordered and paged per node, in one batch: out-edges by
 * key prefix (edge keys start with their source), in-edges by the
 * incoming-edge index, then the edge rows in one lookup.
 */
export async function neighborsOf(
  q: Scope & { edgeTable: string; direction: 'out' | 'in'; keys: readonly string[]; ask: QueryAsk },
): Promise<{ nodes: NodeEdges[]; rowsRead: number }> {
  checkBatch(q.keys.length, 'keys');
  const c = checkAsk({ ...q, table: q.edgeTable, cursorScope: { direction: q.direction } });
  if (c.view.type.kind !== 'edge')
    throw new BranchgraphError('invalid_input', `${q.edgeTable} is not an edge table`, {
      issues: [{ path: 'edgeTable', message: 'not an edge table' }],
    });
  const type = c.view.type as EdgeType;
  const nodes = [...new Set(q.keys)].sort(compareKey);
  const count = q.ask.count === true;
  // The common traversal (no filter, key order, no count, a first page) needs only the first
  // `first + 1` edges of each node: the rest are neither decoded nor ordered.
  const firstOnly = c.filter.node === null && isKeyOrder(c.order) && !count && c.after === undefined;
  const byNode = new Map<string, { key: string; row: Row }[]>(nodes.map((n) => [n, []]));
  if (q.direction === 'out') {
    const limit = firstOnly ? c.first + 1 : undefined;
    const found = await prefixRowsMany({ v: c.view.version, load: c.view.load, prefixes: nodes.map(edgeKeyPrefix), limit });
    for (const n of nodes)
      byNode.set(
        n,
        (found.get(edgeKeyPrefix(n)) ?? []).map((r) => ({ key: r.key, row: r.props as Row })),
      );
  } else {
    const held = await c.view.indexes.holders(IN_SPEC, nodes.map(encodeNodeKey));
    // In key order, so each node's edges are too.
    for (const r of await rowsOf(c.view, [...held.values()].flat())) byNode.get(r.row.to as string)?.push(r);
  }
  let rowsRead = 0;
  for (const rows of byNode.values()) rowsRead += rows.length;
  if (firstOnly) {
    const nodePage = (rows: { key: string; row: Row }[]): Omit<NodeEdges, 'node'> => ({
      items: rows.slice(0, c.first).map((r) => itemOf(r.key, r.row, { scope: c.scope, position: [r.key] })),
      hasNextPage: rows.length > c.first,
    });
    return { nodes: q.keys.map((n) => ({ node: n, ...nodePage(byNode.get(n) ?? []) })), rowsRead };
  }
  // Rows are filtered once, here, with their endpoints looked up in one batch; each node's page only orders and cuts.
  let test = (r: { key: string; row: Row }): boolean => c.filter.test(r);
  if (c.filter.ends.from || c.filter.ends.to) {
    const ends = await withEnds(q, { type, filter: c.filter, rows: [...byNode.values()].flat() });
    const endsByKey = new Map(ends.map((e) => [e.key, e.ends]));
    test = (r) => c.filter.test({ ...r, ends: endsByKey.get(r.key) ?? {} });
  }
  const admitAll: CompiledFilter = { node: null, ends: { from: false, to: false }, test: () => true };
  const out: NodeEdges[] = [];
  for (const n of q.keys) {
    const rows = (byNode.get(n) ?? []).filter(test);
    const { rowsRead: _, ...page } = await pageOf(q, { ...c, filter: admitAll, rows, count });
    out.push({ node: n, ...page });
  }
  return { nodes: out, rowsRead };
}
