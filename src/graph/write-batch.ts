/**
 * Planning a write batch: validate every operation, apply them in order over
 * the current state, cascade node deletions to their edges, check the
 * graph's constraints on the result, and produce one run per changed table.
 *
 * Rules users rely on:
 * - insert fails on an existing key, update on a missing one; upsert
 *   replaces the whole row; delete of a missing key changes nothing;
 * - update is partial: only the named properties change;
 * - deleting a node deletes every edge that starts or ends at it (edges that
 *   existed before the batch; an edge the same batch writes to a node it
 *   deletes is an error);
 * - constraints are checked on the state after the batch: types, enums and
 *   ranges per row, @unique across the table, edge endpoints exist, and edge
 *   cardinality for every source whose edges of that type change;
 * - a failing batch changes nothing and lists every failing operation.
 */
import { findInputProblem } from '../model/text.js';
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import { EDGE_FROM, EDGE_TO, findType, keyProps, type EdgeType, type PropDef, type TableType } from '../model/schema.js';
import { checkRow, edgeKeyPrefix, entityKey, rowHash, rowSizeProblem, rowText, type Row } from '../model/values.js';
import { contentHash } from '../model/canonical.js';
import type { RunRef, RunRow } from '../table/run.js';
import { compareKey } from '../table/run.js';
import { EMPTY_TABLE, type LoadRun, type TableVersion } from '../table/table-version.js';
import { lookupRows } from '../table/table-lookup.js';
import { scanPrefix } from '../table/table-prefix.js';
import { encodeNodeKey, encodeUnique, IN_SPEC, uniqueSpec } from '../table/secondary-index.js';
import { uniqueClashes } from '../table/unique-clashes.js';
import type { PlanResult } from './change.js';
import type { Snapshot } from './snapshot.js';
import type { Embedder, TableReader, TableView } from './ports.js';
import { fillEmbeddings } from './embed-ops.js';
import { appendRun, ownRuns, type RunAppender } from './append-run.js';
import { indexesOfNewRows } from './index-maintenance.js';
import type { IndexedVersion } from '../table/secondary-index.js';
import { Slice } from '../model/turns.js';
import { sortInTurns } from '../model/sort-in-turns.js';

export type WriteOpKind = 'insert' | 'update' | 'upsert' | 'delete';

export interface WriteOp {
  op: WriteOpKind;
  table: string;
  values: Record<string, unknown>;
}

export interface WriteSummary {
  inserted: number;
  updated: number;
  deleted: number;
  /** Edges deleted because their endpoint node was deleted. */
  cascaded: number;
}

export const MAX_BATCH_OPS = 100_000;
const MAX_REPORTED_ISSUES = 200;

interface Change {
  /** The row after the batch; null when deleted. */
  row: Row | null;
  /** Index of the last operation that set it, for error paths; -1 for cascades. */
  op: number;
  /** The row's canonical text, when the operation gave the row whole (made once, to measure it, then hashed). */
  text?: string;
}

class Issues {
  readonly list: ErrorIssue[] = [];
  /** @param name how an operation is named in a path: `ops[3]`, or where a load read it (`line 5`) */
  constructor(readonly name: (op: number) => string = (op) => `ops[${op}]`) {}
  /** Some value is malformed input (see checkValue): the batch is invalid_input, not a constraint violation. */
  malformed = false;
  add(path: string, message: string): void {
    if (this.list.length < MAX_REPORTED_ISSUES) this.list.push({ path, message });
  }
  throwIfAny(what: string): void {
    if (this.list.length === 0) return;
    const first = this.list[0] as ErrorIssue;
    throw new BranchgraphError(
      this.malformed ? 'invalid_input' : 'constraint_violation',
      `${what}: ${first.path}: ${first.message}${this.list.length > 1 ? ` (and ${this.list.length - 1} more)` : ''}`,
      {
        issues: this.list,
      },
    );
  }
}

/**
 * Validate operation shapes against the schema; returns typed ops with keys. A batch of large
 * rows gives the event loop turns between operations (model/turns.ts).
 */
async function checkOps(a: {
  schema: Snapshot['schema'];
  ops: readonly WriteOp[];
  issues: Issues;
  maxOps: number;
  embedder?: Embedder | undefined;
  signal?: AbortSignal | undefined;
  wellFormed?: boolean | undefined;
}): Promise<TypedOp[]> {
  const { schema, issues, maxOps } = a;
  let ops = a.ops;
  if (ops.length > maxOps) {
    throw new BranchgraphError('payload_too_large', `a batch holds at most ${maxOps} operations, got ${ops.length}`);
  }
  // Text no storage encoding can carry is malformed input, not a constraint: refuse it before anything else.
  const malformed: ErrorIssue[] = [];
  const slice = new Slice();
  for (const [i, o] of (a.wellFormed === true ? [] : ops).entries()) {
    // The path is spelled only for an operation with a problem: a load checks a million.
    const bad = findInputProblem(o, '');
    if (bad !== undefined) malformed.push({ ...bad, path: `${a.issues.name(i)}${bad.path}` });
    if (slice.due()) await slice.turn();
  }
  if (malformed.length > 0) {
    throw new BranchgraphError('invalid_input', `write refused: ${malformed[0]?.path}: ${malformed[0]?.message}`, {
      issues: malformed.slice(0, MAX_REPORTED_ISSUES),
    });
  }
  // `@embed` vectors are filled from well-formed text, before the rows are checked (a required vector is then present).
  if (a.embedder !== undefined) ops = await fillEmbeddings({ schema, ops, embedder: a.embedder, signal: a.signal });
  const out: TypedOp[] = [];
  for (const [i, o] of ops.entries()) {
    if (slice.due()) await slice.turn();
    const type = findType(schema, o.table);
    if (type === undefined) {
      issues.add(`${issues.name(i)}.table`, `table ${o.table} does not exist`);
      continue;
    }
    const mode = o.op === 'insert' || o.op === 'upsert' ? 'full' : 'partial';
    const { row, issues: rowIssues, malformed } = checkRow({ table: type, input: o.values, mode, path: `${issues.name(i)}.values` });
    for (const is of rowIssues) issues.add(is.path, is.message);
    issues.malformed ||= malformed;
    if (o.op === 'delete') {
      const extra = Object.keys(row).filter((k) => !keyProps(type).includes(k));
      for (const k of extra) issues.add(`${issues.name(i)}.values.${k}`, 'delete takes only key properties');
    }
    if (rowIssues.length > 0) continue;
    const key = entityKey(type, row);
    const text = rowText(type, row);
    const tooBig = rowSizeProblem(key, row, text);
    if (tooBig !== undefined) {
      issues.add(`${issues.name(i)}.values`, tooBig);
      issues.malformed = true;
      continue;
    }
    out.push({ type, key, row, text, op: o.op, index: i });
  }
  return out;
}

export interface ResolvedWrite {
  summary: WriteSummary;
  /** Per changed table, the new state of every key whose state really changes, sorted by key. */
  rows: [TableType, RunRow[]][];
  /** Per changed table with @unique properties, those its rows left as they were (see RunRef.keptUnique). */
  keptUnique: Map<string, string[]>;
  /** Per changed table, the operation each of its rows came from (-1 for a cascade), in the order of `rows`. */
  origins: Map<string, number[]>;
}

/** An operation checked against the schema, with its entity key and row text. */
interface TypedOp {
  type: TableType;
  key: string;
  row: Row;
  text: string;
  op: WriteOpKind;
  index: number;
}

/** A write to plan or resolve: the batch, the head it applies to, and where tables are read. */
export interface WriteRequest {
  tables: TableReader;
  head: Snapshot;
  ops: readonly WriteOp[];
  signal?: AbortSignal | undefined;
  /** The most operations taken (a load takes more than a batch). */
  maxOps?: number;
  /** Fills `@embed` vectors (embed-ops.ts); without one, a vector is only what the operation gives. */
  embedder?: Embedder | undefined;
  /** How problems name an operation: `ops[3]` by default; a load names the line or row it read it from. */
  name?: (op: number) => string;
  /** The operations come from a parser that already refused what no schema could accept (findInputProblem): not walked again. */
  wellFormed?: boolean;
}

export async function planWrite(request: WriteRequest & { runs: RunAppender; validated?: () => void }): Promise<PlanResult<WriteSummary>> {
  const { runs, head, signal, validated } = request;
  const { summary, rows: rowsByTable, keptUnique } = await resolveWrite(request);
  validated?.();
  if (rowsByTable.length === 0) return { unchanged: summary };
  const changed: Record<string, IndexedVersion> = {};
  const scratch: RunRef[] = [];
  try {
    const foldable = ownRuns(head.branch?.lineage);
    await Promise.all(
      rowsByTable.map(async ([type, rows]) => {
        const cur = head.tables[type.name] ?? EMPTY_TABLE;
        const kept = keptUnique.get(type.name);
        const appended = appendRun({ runFiles: runs, type, rows, runs: cur.runs, foldable, keptUnique: kept, scratch, signal });
        // A table that held nothing gets its indexes from the rows in hand, written beside its run.
        const fresh = cur.runs.length === 0 ? indexesOfNewRows({ runFiles: runs, type, rows, runs: appended, scratch, signal }) : undefined;
        const [tableRuns, indexes] = await Promise.allSettled([appended, fresh]);
        if (tableRuns.status === 'rejected') throw tableRuns.reason;
        if (indexes.status === 'rejected') throw indexes.reason;
        changed[type.name] = indexes.value === undefined ? { runs: tableRuns.value } : { runs: tableRuns.value, indexes: indexes.value };
      }),
    );
  } catch (e) {
    await runs.delete(scratch).catch(() => undefined);
    throw e;
  }
  return { kind: 'write', tables: changed, scratch, result: summary };
}

/** The batch's changes so far, over the state before it. */
class Overlay {
  readonly changes = new Map<string, Map<string, Change>>();
  constructor(readonly before: Map<string, Map<string, Row>>) {}

  current(table: string, key: string): Row | null {
    const o = this.changes.get(table)?.get(key);
    if (o !== undefined) return o.row;
    return this.before.get(table)?.get(key) ?? null;
  }

  set(table: string, key: string, change: Change): void {
    const m = this.changes.get(table) ?? new Map<string, Change>();
    m.set(key, change);
    this.changes.set(table, m);
  }
}

/**
 * Validate a batch against `head` and resolve it to row states, writing
 * nothing. Ordinary writes store the states as runs; WAL ingest seals them
 * into a generation.
 */
export async function resolveWrite(request: WriteRequest): Promise<ResolvedWrite> {
  const { tables, head, ops, signal, maxOps = MAX_BATCH_OPS, embedder } = request;
  const issues = new Issues(request.name);
  const typed = await checkOps({ schema: head.schema, ops, issues, maxOps, embedder, signal, wellFormed: request.wellFormed });
  const summary: WriteSummary = { inserted: 0, updated: 0, deleted: 0, cascaded: 0 };
  const view = (name: string): TableView => tables.table(head, name, signal);
  const overlay = new Overlay(await readBefore(view, typed));
  const deletedNodes = await applyOps(typed, overlay, issues);
  // Operations refused so far are left out of the overlay; the constraint checks still run over
  // the rest, so one refusal lists every failing operation, not only those of the first kind.
  summary.cascaded = await cascadeDeletes({ head, view, deletedNodes, overlay });
  await checkConstraints({ tables, head, overlay: overlay.changes, before: overlay.before, issues, signal });
  issues.throwIfAny('write refused');
  return { summary, ...(await changedRows({ head, view, overlay, summary })) };
}

/** An operation of a load's chunk, checked on its own (checkRows). */
export interface CheckedRow {
  key: string;
  row: Row;
  /** The row's canonical text, which its hash is made from. */
  text: string;
  /** The operation it came from. */
  index: number;
}

/**
 * Check a bulk load's chunk of operations row by row, as a batch checks each (shape, types,
 * sizes, `@embed` vectors filled), with no state to read or overlay (streaming-load.ts). What
 * the rows mean together, and against the graph (a key given twice, a @unique value held twice,
 * an edge's endpoints), is judged on the rows the load's merge keeps. Refused as a batch is,
 * listing every failing operation.
 */
export async function checkRows(request: Omit<WriteRequest, 'tables' | 'head'> & { schema: Snapshot['schema'] }): Promise<CheckedRow[]> {
  const issues = new Issues(request.name);
  const { schema, ops, signal, embedder, wellFormed, maxOps = MAX_BATCH_OPS } = request;
  const typed = await checkOps({ schema, ops, issues, maxOps, embedder, signal, wellFormed });
  issues.throwIfAny('write refused');
  return typed;
}

/** The current state of every key the batch names. */
async function readBefore(view: (name: string) => TableView, typed: readonly TypedOp[]): Promise<Map<string, Map<string, Row>>> {
  const keysByTable = new Map<string, Set<string>>();
  // A table with no runs holds none of the keys: a load into a new table collects nothing.
  const empty = new Map<string, boolean>();
  const slice = new Slice();
  for (const o of typed) {
    if (slice.due()) await slice.turn();
    const name = o.type.name;
    let none = empty.get(name);
    if (none === undefined) {
      none = view(name).version.runs.length === 0;
      empty.set(name, none);
    }
    if (none) continue;
    const set = keysByTable.get(name) ?? new Set<string>();
    set.add(o.key);
    keysByTable.set(name, set);
  }
  const before = new Map<string, Map<string, Row>>();
  await Promise.all(
    [...keysByTable].map(async ([name, ks]) => {
      const t = view(name);
      const rows = new Map<string, Row>();
      // A load's 400,000 rows, copied in slices as well.
      for (const [k, r] of await lookupRows(t.version, ks, t.load)) {
        if ((rows.size & 4095) === 0 && slice.due()) await slice.turn();
        rows.set(k, r.props as Row);
      }
      before.set(name, rows);
    }),
  );
  return before;
}

/** Apply the operations in order over the overlay; returns the nodes deleted. */
async function applyOps(typed: readonly TypedOp[], overlay: Overlay, issues: Issues): Promise<{ type: TableType; key: string }[]> {
  const deletedNodes: { type: TableType; key: string }[] = [];
  const slice = new Slice();
  for (const o of typed) {
    if (slice.due()) await slice.turn();
    const i = o.index;
    const cur = overlay.current(o.type.name, o.key);
    switch (o.op) {
      case 'insert':
        if (cur !== null) issues.add(issues.name(i), `${o.type.name} ${o.key} already exists`);
        else overlay.set(o.type.name, o.key, { row: o.row, op: i, text: o.text });
        break;
      case 'update':
        if (cur === null) issues.add(issues.name(i), `${o.type.name} ${o.key} does not exist`);
        else overlay.set(o.type.name, o.key, { row: { ...cur, ...o.row }, op: i });
        break;
      case 'upsert':
        overlay.set(o.type.name, o.key, { row: o.row, op: i, text: o.text });
        break;
      case 'delete':
        if (cur !== null) {
          overlay.set(o.type.name, o.key, { row: null, op: i });
          if (o.type.kind === 'node') deletedNodes.push({ type: o.type, key: o.key });
        }
        break;
    }
  }
  return deletedNodes;
}

/** Delete the edges that existed before the batch at every deleted node; returns how many. */
async function cascadeDeletes(a: {
  head: Snapshot;
  view: (name: string) => TableView;
  deletedNodes: readonly { type: TableType; key: string }[];
  overlay: Overlay;
}): Promise<number> {
  const { head, view, deletedNodes, overlay } = a;
  let cascaded = 0;
  for (const et of head.schema.types) {
    if (et.kind !== 'edge') continue;
    const outgoing = deletedNodes.filter((n) => n.type.name === et.from);
    const incoming = deletedNodes.filter((n) => n.type.name === et.to);
    if (outgoing.length === 0 && incoming.length === 0) continue;
    const t = view(et.name);
    const doomed: string[] = [];
    for (const node of outgoing) for await (const r of scanPrefix(t.version, t.load, edgeKeyPrefix(node.key))) doomed.push(r.key);
    // Incoming edges by the `in` index: the work is the deleted nodes' edges, not the edge table.
    const ins = await t.indexes.holders(
      IN_SPEC,
      incoming.map((n) => encodeNodeKey(n.key)),
    );
    for (const ks of ins.values()) doomed.push(...ks);
    for (const k of doomed) {
      if (overlay.changes.get(et.name)?.has(k)) continue;
      overlay.set(et.name, k, { row: null, op: -1 });
      cascaded++;
    }
  }
  return cascaded;
}

/** Whether `row` (a key's state before the change) holds `value` (encoded) in `prop`. */
function heldValue(row: Row | null | undefined, prop: string, value: string): boolean {
  const v = row?.[prop];
  return v !== null && v !== undefined && encodeUnique(v) === value;
}

/**
 * One run's rows per changed table, holding only keys whose state really changed, and the tables
 * whose rows keep every @unique value where it was; counts the rows into `summary`.
 */
async function changedRows(a: {
  head: Snapshot;
  view: (name: string) => TableView;
  overlay: Overlay;
  summary: WriteSummary;
}): Promise<Pick<ResolvedWrite, 'rows' | 'keptUnique' | 'origins'>> {
  const { head, view, overlay, summary } = a;
  const rowsByTable: [TableType, RunRow[]][] = [];
  const keptUnique = new Map<string, string[]>();
  const origins = new Map<string, number[]>();
  for (const [name, changes] of overlay.changes) {
    const type = findType(head.schema, name) as TableType;
    const t = view(name);
    const priorKnown = overlay.before.get(name) ?? new Map<string, Row>();
    const cascadeKeys: string[] = [];
    for (const [k, c] of changes) if (c.op === -1 && !priorKnown.has(k)) cascadeKeys.push(k);
    const prior =
      cascadeKeys.length > 0
        ? new Map([...priorKnown, ...[...(await lookupRows(t.version, cascadeKeys, t.load))].map(([k, r]) => [k, r.props as Row] as const)])
        : priorKnown;
    const rows: RunRow[] = [];
    const from: number[] = [];
    const slice = new Slice();
    // Sorted as entries, so no key is looked up again (a load sorts a million). Gathered in slices
    // too: spreading 400,000 changes into pairs held the loop some 40 ms and its collections more.
    const entries: [string, Change][] = [];
    for (const e of changes) {
      if ((entries.length & 4095) === 0 && slice.due()) await slice.turn();
      entries.push(e);
    }
    for (const [key, c] of await sortInTurns(entries, (x, y) => compareKey(x[0], y[0]))) {
      if (slice.due()) await slice.turn();
      const old = prior.get(key) ?? null;
      if (c.row === null) {
        if (old === null) continue;
        rows.push({ key, tomb: true, hash: '', props: null });
        from.push(c.op);
        if (c.op >= 0) summary.deleted++;
      } else {
        const hash = c.text !== undefined ? contentHash(c.text) : rowHash(c.row);
        if (old !== null && rowHash(old) === hash) continue;
        rows.push({ key, tomb: false, hash, props: c.row });
        from.push(c.op);
        if (old === null) summary.inserted++;
        else summary.updated++;
      }
    }
    if (rows.length === 0) continue;
    rowsByTable.push([type, rows]);
    origins.set(name, from);
    const uniques = type.props.filter((p) => p.unique);
    if (uniques.length === 0) continue;
    const keptBy = (p: PropDef): boolean =>
      rows.every((r) => {
        const v = r.props?.[p.name];
        return v === null || v === undefined || heldValue(prior.get(r.key), p.name, encodeUnique(v));
      });
    keptUnique.set(
      name,
      uniques.filter(keptBy).map((p) => p.name),
    );
  }
  return { rows: rowsByTable, keptUnique, origins };
}

async function checkConstraints(a: {
  tables: TableReader;
  head: Snapshot;
  overlay: Map<string, Map<string, Change>>;
  before: Map<string, Map<string, Row>>;
  issues: Issues;
  signal?: AbortSignal | undefined;
}): Promise<void> {
  const { tables, head, overlay, before, issues, signal } = a;
  const at = (c: Change, table: string, key: string): string => (c.op >= 0 ? issues.name(c.op) : `${table}/${key}`);
  const liveAfter = async (table: string, ks: string[]): Promise<Set<string>> => {
    const out = new Set<string>();
    // Many edges share an endpoint: each is looked up once.
    const pending = new Set<string>();
    for (const k of ks) {
      const c = overlay.get(table)?.get(k);
      if (c !== undefined) {
        if (c.row !== null) out.add(k);
      } else pending.add(k);
    }
    if (pending.size > 0) {
      const t = tables.table(head, table, signal);
      for (const k of (await lookupRows(t.version, pending, t.load)).keys()) out.add(k);
    }
    return out;
  };

  for (const [name, changes] of overlay) {
    const type = findType(head.schema, name) as TableType;
    const t = tables.table(head, name, signal);

    // Edge endpoints exist after the batch.
    if (type.kind === 'edge') {
      const edges: [string, Change][] = [];
      for (const [k, c] of changes) if (c.row !== null) edges.push([k, c]);
      await checkEndpoints({
        type,
        edges,
        of: ([key, c]) => ({ key, row: c.row as Row }),
        liveAfter,
        report: ([k, c], message) => issues.add(at(c, name, k), message),
      });
      await checkCardinality({ type, changes, version: t.version, load: t.load, issues, at, liveAfter });
    }

    await checkUnique({ type, changes, t, before: before.get(name), issues, at });
  }
}

/**
 * Every edge's source and target exist (`liveAfter`): each missing one is reported with
 * `report`, in the words a batch uses. A bulk load checks the rows its merge keeps with it.
 */
export async function checkEndpoints<E>(a: {
  type: EdgeType;
  edges: readonly E[];
  /** An edge's key and row. */
  of: (edge: E) => { key: string; row: Row };
  liveAfter: (table: string, ks: string[]) => Promise<Set<string>>;
  report: (edge: E, message: string) => void;
}): Promise<void> {
  const { type, edges, of } = a;
  const froms = await a.liveAfter(
    type.from,
    edges.map((e) => String(of(e).row[EDGE_FROM])),
  );
  const tos = await a.liveAfter(
    type.to,
    edges.map((e) => String(of(e).row[EDGE_TO])),
  );
  for (const e of edges) {
    const { key, row } = of(e);
    const from = String(row[EDGE_FROM]);
    const to = String(row[EDGE_TO]);
    if (!froms.has(from)) a.report(e, `${type.name} ${key}: source ${type.from} ${from} does not exist`);
    if (!tos.has(to)) a.report(e, `${type.name} ${key}: target ${type.to} ${to} does not exist`);
  }
}

/** @unique across the table after the batch, by each property's index. */
async function checkUnique(a: {
  type: TableType;
  changes: Map<string, Change>;
  t: TableView;
  before: Map<string, Row> | undefined;
  issues: Issues;
  at: (c: Change, table: string, key: string) => string;
}): Promise<void> {
  const { type, changes, issues, at } = a;
  const uniques = type.props.filter((p) => p.unique);
  if (uniques.length === 0) return;
  // The rows after the batch, read through the changes rather than copied out of them.
  const after = {
    has: (k: string) => changes.has(k),
    *[Symbol.iterator](): Generator<[string, Row | null]> {
      for (const [k, c] of changes) yield [k, c.row];
    },
  };
  const heldBefore = (key: string, prop: string, value: string): boolean => heldValue(a.before?.get(key), prop, value);
  const holdersOf = (p: PropDef, values: string[]) => a.t.indexes.holders(uniqueSpec(p.name), values);
  for (const clash of await uniqueClashes({ uniques, changed: after, holdersOf, heldBefore })) {
    const c = changes.get(clash.key) as Change;
    issues.add(
      at(c, type.name, clash.key),
      `${type.name}.${clash.property} = ${clash.value} is ${clash.otherChanged ? 'also' : 'already'} used by ${clash.other}`,
    );
  }
}

async function checkCardinality(a: {
  type: EdgeType;
  changes: Map<string, Change>;
  version: TableVersion;
  load: LoadRun;
  issues: Issues;
  at: (c: Change, table: string, key: string) => string;
  liveAfter: (table: string, ks: string[]) => Promise<Set<string>>;
}): Promise<void> {
  const { type, changes, version, load, issues, at, liveAfter } = a;
  const card = type.cardinality;
  if (card === null) return;
  const sources = new Map<string, [string, Change]>();
  // Live edges the batch leaves per source, counted in one pass (not one pass per source).
  const written = new Map<string, number>();
  for (const [k, c] of changes) {
    const from = (JSON.parse(k) as string[])[0] as string;
    if (!sources.has(from)) sources.set(from, [k, c]);
    if (c.row !== null) written.set(from, (written.get(from) ?? 0) + 1);
  }
  const liveSources = await liveAfter(type.from, [...sources.keys()]);
  for (const [from, [k, c]] of sources) {
    if (!liveSources.has(from)) continue;
    let degree = 0;
    for await (const r of scanPrefix(version, load, edgeKeyPrefix(from))) if (!changes.has(r.key)) degree++;
    degree += written.get(from) ?? 0;
    if (degree < card.min || (card.max !== null && degree > card.max)) {
      issues.add(
        at(c, type.name, k),
        `${type.name}: ${type.from} ${from} would have ${degree} outgoing edges; allowed ${card.min}..${card.max ?? '∞'}`,
      );
    }
  }
}
