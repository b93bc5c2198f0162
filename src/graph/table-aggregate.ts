/**
 * Aggregates of a table at a snapshot: how many entities a typed filter
 * admits, and per numeric property (int and float) how many hold a value,
 * their least, greatest, sum and mean; optionally per group of values of
 * some properties.
 *
 * The count of a whole table is answered from run statistics when they
 * suffice, with no row read: when no two runs' key ranges overlap, no run
 * holds a key another holds, so each key's newest state is its only one
 * and the live entities are the rows less the tombstones, summed over the
 * runs. Anything else (a filter, groups, the numbers, runs that overlap)
 * is a scan of the live rows, once, in key order. The answer says which
 * (`source`).
 */
import { canonicalJson } from '../model/canonical.js';
import { BranchgraphError } from '../model/errors.js';
import { compileRowFilter } from '../model/row-filter.js';
import { rowProps, type PropDef } from '../model/schema.js';
import type { Row, Value } from '../model/values.js';
import { compareKey, runEndsBefore } from '../table/run.js';
import type { TableVersion } from '../table/table-version.js';
import type { TableReader } from './ports.js';
import { liveRows } from './row-query.js';
import type { Snapshot } from './snapshot.js';

/** Most groups one answer lists. */
export const MAX_GROUPS = 10_000;
/** Most distinct groups a scan keeps while it counts. */
export const MAX_GROUPS_HELD = 100_000;
/** Most properties one grouping takes. */
export const MAX_GROUP_BY = 4;

export interface NumberStats {
  /** Entities holding a value. */
  count: number;
  min: number | null;
  max: number | null;
  sum: number | null;
  avg: number | null;
}

export interface AggregateGroup {
  key: Record<string, Value>;
  count: number;
  numbers: Record<string, NumberStats>;
}

export interface AggregateResult {
  count: number;
  numbers: Record<string, NumberStats>;
  groups: AggregateGroup[];
  /** More groups than MAX_GROUPS: the first ones in key order are listed. */
  groupsTruncated: boolean;
  /** `statistics`: the count came from run statistics, no row read; `scan`: the live rows were read. */
  source: 'statistics' | 'scan';
  rowsRead: number;
}

export interface AggregateAsk {
  where?: unknown;
  groupBy?: readonly string[] | undefined;
  /** Whether the per-property numbers are wanted (default true); a count alone may need no row. */
  numbers?: boolean | undefined;
}

const bad = (path: string, message: string): BranchgraphError =>
  new BranchgraphError('invalid_input', `${path}: ${message}`, { issues: [{ path, message }] });

/** Whether no two runs of `v` hold a key in common, judged from their key ranges alone. */
export function disjointRuns(v: TableVersion): boolean {
  const runs = v.runs.filter((r) => r.rows > 0).sort((a, b) => compareKey(a.minKey, b.minKey));
  return runs.every((r, i) => i === 0 || runEndsBefore(runs[i - 1] as (typeof runs)[number], r.minKey, true));
}

/** Running numbers of one property. */
class Tally {
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;

  add(v: Value): void {
    if (typeof v !== 'number') return;
    this.count++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  stats(): NumberStats {
    if (this.count === 0) return { count: 0, min: null, max: null, sum: null, avg: null };
    return { count: this.count, min: this.min, max: this.max, sum: this.sum, avg: this.sum / this.count };
  }
}

class Bucket {
  count = 0;
  readonly tallies: Tally[];
  constructor(
    readonly key: Value[],
    numeric: readonly PropDef[],
  ) {
    this.tallies = numeric.map(() => new Tally());
  }
}

function numbersOf(numeric: readonly PropDef[], b: Bucket): Record<string, NumberStats> {
  return Object.fromEntries(numeric.map((p, i) => [p.name, (b.tallies[i] as Tally).stats()]));
}

/** Group keys in order: null first, then numbers, booleans and text each in their own order. */
function compareValues(a: readonly Value[], b: readonly Value[]): number {
  for (let i = 0; i < a.length; i++) {
    const x = a[i] ?? null;
    const y = b[i] ?? null;
    if (x === y) continue;
    if (x === null) return -1;
    if (y === null) return 1;
    const c = typeof x === 'number' && typeof y === 'number' ? x - y : compareKey(String(x), String(y));
    if (c !== 0) return c;
  }
  return 0;
}

/** Aggregate `table` at `snap` under `ask`. */
export async function aggregateTable(s: {
  tables: TableReader;
  snap: Snapshot;
  table: string;
  ask: AggregateAsk;
  signal?: AbortSignal | undefined;
}): Promise<AggregateResult> {
  const view = s.tables.table(s.snap, s.table, s.signal);
  const props = rowProps(view.type);
  const groupBy = s.ask.groupBy ?? [];
  if (groupBy.length > MAX_GROUP_BY) throw bad('groupBy', `at most ${MAX_GROUP_BY} properties`);
  const groupProps = groupBy.map((name, i) => {
    const p = props.find((x) => x.name === name);
    if (p === undefined) throw bad(`groupBy[${i}]`, `${name} is not a property of ${s.table}`);
    if (p.type.kind === 'json' || p.type.kind === 'vector') throw bad(`groupBy[${i}]`, `${p.type.kind} values are not grouped`);
    return p;
  });
  const filter = compileRowFilter({ schema: s.snap.schema, type: view.type, where: s.ask.where });
  if (filter.ends.from || filter.ends.to) throw bad('where', "an aggregate filters on the row's own properties, not on its endpoints");
  const wantNumbers = s.ask.numbers !== false;
  const numeric = wantNumbers ? props.filter((p) => p.type.kind === 'int' || p.type.kind === 'float') : [];
  if (filter.node === null && groupProps.length === 0 && numeric.length === 0 && disjointRuns(view.version)) {
    const count = view.version.runs.reduce((n, r) => n + r.rows - r.tombstones, 0);
    return { count, numbers: {}, groups: [], groupsTruncated: false, source: 'statistics', rowsRead: 0 };
  }
  const total = new Bucket([], numeric);
  const groups = new Map<string, Bucket>();
  let rowsRead = 0;
  for await (const { rows, passed } of liveRows(view.version, { load: view.load, admit: filter.test })) {
    rowsRead += passed;
    for (const { row } of rows) add({ total, groups, numeric, groupProps }, row);
    if (groups.size > MAX_GROUPS_HELD)
      throw new BranchgraphError(
        'payload_too_large',
        `more than ${MAX_GROUPS_HELD} groups: group by fewer or coarser properties, or filter first`,
      );
  }
  const sorted = [...groups.values()].sort((a, b) => compareValues(a.key, b.key));
  return {
    count: total.count,
    numbers: numbersOf(numeric, total),
    groups: sorted.slice(0, MAX_GROUPS).map((b) => ({
      key: Object.fromEntries(groupProps.map((p, i) => [p.name, b.key[i] ?? null])),
      count: b.count,
      numbers: numbersOf(numeric, b),
    })),
    groupsTruncated: sorted.length > MAX_GROUPS,
    source: 'scan',
    rowsRead,
  };
}

function add(
  a: { total: Bucket; groups: Map<string, Bucket>; numeric: readonly PropDef[]; groupProps: readonly PropDef[] },
  row: Row,
): void {
  const buckets = [a.total];
  if (a.groupProps.length > 0) {
    const key = a.groupProps.map((p) => row[p.name] ?? null);
    const id = canonicalJson(key);
    let b = a.groups.get(id);
    if (b === undefined) {
      b = new Bucket(key, a.numeric);
      a.groups.set(id, b);
    }
    buckets.push(b);
  }
  for (const b of buckets) {
    b.count++;
    a.numeric.forEach((p, i) => {
      (b.tallies[i] as Tally).add(row[p.name] ?? null);
    });
  }
}
