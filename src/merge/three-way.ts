/**
 * The pure per-entity three-way merge.
 *
 * Each side's state of a key is a row or null (absent or deleted). A side is
 * changed when its state differs from the base's; equality is typed, by
 * canonical encoding, so null, "" and [] all differ.
 * - source unchanged → target; target unchanged → source; both equal → either;
 * - both inserted differently → DivergentInsert, naming the differing properties;
 * - one deleted, the other updated → DeleteVsUpdate;
 * - both updated differently → merged property by property: each property
 *   takes the side that changed it; a property both sides changed to
 *   different values is a DivergentUpdate naming that property.
 * Delete-then-reinsert on one side is an update (or no change when equal).
 */
import { canonicalJson } from '../model/canonical.js';
import type { Conflict } from '../model/conflict.js';
import { changedProps, rowHash, type Row } from '../model/values.js';
import { sameRuns, type TableVersion } from '../table/table-version.js';

/**
 * Properties whose value is unknown: a virtual merge base (virtual-base.ts) keeps a conflict between
 * the common ancestors it merged as marked properties, as Git keeps conflict markers in its virtual
 * base. A marked value equals nothing, not even another marked value, so a side that holds it has
 * changed it and a side that changed it from a marked base changed it for certain: the outer sides
 * decide, cleanly where they agree and as an ordinary conflict where they differ.
 */
export type Marks = ReadonlySet<string>;

/** The marks of each state of one key (none on stored rows; only a virtual base's staged rows carry them). */
export interface StateMarks {
  base?: Marks;
  source?: Marks;
  target?: Marks;
}

/** A merged state, or conflicts; for a row both sides updated, `merged` holds the property-wise merge with the target's value where they conflict. `marks` are the result's marked properties, taken from a marked side. */
export type EntityMerge = { row: Row | null; marks?: Marks } | { conflicts: Conflict[]; merged?: Row; marks?: Marks };

/**
 * The stored hash of a marked row: a prefix no content hash has, naming the marked properties, so
 * a virtual base's staged row differs from every stored row and its marks travel with it.
 */
export function markedHash(row: Row, marks: Marks): string {
  return marks.size === 0 ? rowHash(row) : `~${[...marks].sort().join(',')}~${rowHash(row)}`;
}

/** Whether a stored hash carries marks (`markedHash`): no content hash starts with `~`. */
export function isMarkedHash(hash: string): boolean {
  return hash.charCodeAt(0) === 126;
}

/** The marks a stored hash carries (undefined for an ordinary content hash). */
export function marksOf(hash: string): Marks | undefined {
  if (!isMarkedHash(hash)) return undefined;
  const end = hash.indexOf('~', 1);
  return new Set(hash.slice(1, end).split(','));
}

/** Equal by canonical encoding, without encoding the common case (two equal or unequal scalars). */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === undefined || a === null || b === undefined || b === null) return (a ?? null) === (b ?? null);
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  return canonicalJson(a) === canonicalJson(b);
}

/** Rows equal as their canonical encodings are: the same defined properties, each the same value; a marked row equals nothing. */
function same(a: Row | null, b: Row | null, marked: boolean): boolean {
  if (a === null || b === null) return a === b;
  if (marked) return false;
  if (a === b) return true;
  const ka = Object.keys(a).filter((k) => a[k] !== undefined);
  const kb = Object.keys(b).filter((k) => b[k] !== undefined);
  return ka.length === kb.length && ka.every((k) => b[k] !== undefined && sameValue(a[k], b[k]));
}

/**
 * `brief` leaves every conflict's message empty, for conflicts only counted (a report holds one
 * page of them; describing the rest is most of their cost). `marks` are the states' marked
 * properties (a virtual base's, see `Marks`).
 */
export function mergeEntity(e: EntityStates, how: { brief?: boolean; marks?: StateMarks } = {}): EntityMerge {
  const { base, source, target } = e;
  const marks = how.marks ?? {};
  const marked = (m: Marks | undefined, n: Marks | undefined): boolean => (m?.size ?? 0) > 0 || (n?.size ?? 0) > 0;
  if (same(source, base, marked(marks.source, marks.base)))
    return { row: target, ...(marks.target !== undefined ? { marks: marks.target } : {}) };
  if (same(target, base, marked(marks.target, marks.base)))
    return { row: source, ...(marks.source !== undefined ? { marks: marks.source } : {}) };
  if (same(source, target, marked(marks.source, marks.target))) return { row: source };
  if (base === null || source === null || target === null) return { conflicts: [wholeRowConflict(e, how.brief === true, marks)] };
  return mergeProperties({ ...e, base, source, target }, how.brief === true, marks);
}

/** One entity's three states: the table and key, and its row at the base, the source and the target (null where absent). */
export interface EntityStates {
  table: string;
  key: string;
  base: Row | null;
  source: Row | null;
  target: Row | null;
}

/** Inserted on both sides with different rows, or deleted on one side and updated on the other. */
function wholeRowConflict(e: EntityStates, brief: boolean, marks: StateMarks): Conflict {
  const { table, key, base, source, target } = e;
  if (base === null) {
    const props = brief ? [] : changedProps(source as Row, target as Row);
    return {
      kind: 'DivergentInsert',
      table,
      key,
      property: null,
      base: null,
      source,
      target,
      message: brief ? '' : `${table} ${key} was inserted on both sides with different ${props.join(', ')}`,
    };
  }
  const unknownBase = (marks.base?.size ?? 0) > 0 ? ' (the common ancestors disagree on it)' : '';
  const deleted = source === null ? 'source' : 'target';
  const updated = source === null ? 'target' : 'source';
  const what = brief
    ? ''
    : `${table} ${key} was deleted on the ${deleted} and updated on the ${updated} (${changedProps(base, (source ?? target) as Row).join(', ')})${unknownBase}`;
  return { kind: 'DeleteVsUpdate', table, key, property: null, base, source, target, message: what };
}

/**
 * How many properties both sides changed to different values, for three rows without marks: the
 * DivergentUpdate conflicts `mergeEntity` would report when both sides updated the row (0 when
 * they merge cleanly). A conflict past a report's page is only counted, and most keys of a big
 * conflicted merge are such: this counts them without building the merged row or the conflicts.
 */
export function divergentProperties(base: Row, source: Row, target: Row): number {
  let n = 0;
  for (const p in base) if (!sameValue(source[p], base[p]) && !sameValue(target[p], base[p]) && !sameValue(source[p], target[p])) n++;
  for (const p in source)
    if (!(p in base) && !sameValue(source[p], undefined) && !sameValue(target[p], undefined) && !sameValue(source[p], target[p])) n++;
  return n;
}

/** One row as its run's decoded columns hold it: every property's column, and the row's position. */
export interface ColumnRow {
  columns: readonly (readonly unknown[])[];
  at: number;
}

/**
 * `divergentProperties` for three rows read where their runs' columns hold them, building no row:
 * runs decoded for one table type hold a column per property, in the same order, so property p
 * of each row is column p at its position (a value the run lacks is null, as in a decoded row).
 */
export function divergentColumns(base: ColumnRow, source: ColumnRow, target: ColumnRow): number {
  let n = 0;
  for (let p = 0; p < base.columns.length; p++) {
    const b = (base.columns[p] as unknown[])[base.at];
    const s = (source.columns[p] as unknown[])[source.at];
    const t = (target.columns[p] as unknown[])[target.at];
    if (!sameValue(s, b) && !sameValue(t, b) && !sameValue(s, t)) n++;
  }
  return n;
}

/** Both sides updated the entity: property by property, each side's change taken, a property both changed differently a conflict. */
function mergeProperties(e: EntityStates & { base: Row; source: Row; target: Row }, brief: boolean, marks: StateMarks): EntityMerge {
  const { table, key, base, source, target } = e;
  const names = [...new Set([...Object.keys(base), ...Object.keys(source), ...Object.keys(target)])].sort();
  const merged: Row = {};
  const conflicts: Conflict[] = [];
  // A marked value equals nothing: `eq` is sameValue with marks.
  // Marked states are rare (a virtual base's): without them a property compares as plain values.
  const plain = marks.base === undefined && marks.source === undefined && marks.target === undefined;
  const resultMarks = plain ? undefined : new Set<string>();
  const rows = { base, source, target };
  type Side = keyof typeof rows;
  const eq = (x: Side, y: Side, p: string): boolean =>
    (plain || (marks[x]?.has(p) !== true && marks[y]?.has(p) !== true)) && sameValue(rows[x][p], rows[y][p]);
  const take = (side: 'source' | 'target', p: string): void => {
    merged[p] = (side === 'source' ? source : target)[p] ?? null;
    if (resultMarks !== undefined && marks[side]?.has(p) === true) resultMarks.add(p);
  };
  for (const p of names) {
    if (eq('source', 'base', p)) take('target', p);
    else if (eq('target', 'base', p) || eq('source', 'target', p)) take('source', p);
    else {
      const [b, s, t] = brief ? ['', '', ''] : [base[p], source[p], target[p]].map((v) => canonicalJson(v ?? null));
      take('target', p);
      conflicts.push({
        kind: 'DivergentUpdate',
        table,
        key,
        property: p,
        base: base[p] ?? null,
        source: source[p] ?? null,
        target: target[p] ?? null,
        message: `${table} ${key}: ${p} changed to ${s} on the source and to ${t} on the target (base ${b}${marks.base?.has(p) === true ? ', on which the common ancestors disagree' : ''})`,
      });
    }
  }
  const withMarks = resultMarks !== undefined && resultMarks.size > 0 ? { marks: resultMarks } : {};
  return conflicts.length > 0 ? { conflicts, merged, ...withMarks } : { row: merged, ...withMarks };
}

/**
 * The table-level rule above the per-entity one: a table unchanged on the
 * source (or changed the same way on both sides) keeps the target's version,
 * a table changed only on the source is adopted from it by reference, and
 * only a table changed on both sides needs a per-key merge.
 */
export function tableMergeAction(
  base: TableVersion,
  source: TableVersion,
  target: TableVersion,
): 'keep_target' | 'adopt_source' | 'prepare' {
  if (sameRuns(source, target) || sameRuns(source, base)) return 'keep_target';
  if (sameRuns(target, base)) return 'adopt_source';
  return 'prepare';
}
