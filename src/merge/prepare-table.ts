/**
 * Preparing one table changed on both sides: the per-key three-way merge,
 * reading only the changes since the base.
 *
 * Layout of the result. When the base's runs are shared by both sides (the
 * usual case), the merged version is
 *     target runs ++ source delta runs (those the target lacks) ++ [fix run]
 * so the source's changes are adopted by reference, without rewriting rows.
 * The fix run holds every key whose state under that layout would differ
 * from the merge result: keys changed on both sides (resolved three-way) and
 * any key a shared run would otherwise shadow. Because the source's runs stay
 * in order inside the result, a later merge from the source's branch still
 * finds its delta by run keys alone.
 *
 * How much is read depends on the plan by size (merge-plan.ts `planBySize`),
 * in the usual layout: with one side much bigger, only the other side's keys
 * are merged, each looked up on the big side and at the base
 * (`prepareOneSide`); otherwise both deltas are streamed once in key order
 * and only keys both sides changed are decoded (`prepareStreaming`). Every
 * plan gives the same rows and conflicts as reading both deltas whole, the
 * fallback below, which also serves histories whose sharing was lost.
 *
 * When sharing is lost (compaction), both deltas come from a full sorted
 * comparison and the result is target runs ++ [fix run with every source
 * change].
 */
import type { Conflict, ConflictCollector } from '../model/conflict.js';
import type { TableType } from '../model/schema.js';
import { BranchgraphError } from '../model/errors.js';
import { checkRow, entityKey, rowHash, type Row } from '../model/values.js';
import type { RunData, RunRef, RunRow } from '../table/run.js';
import { compareKey } from '../table/run.js';
import { alignForDelta, deltaRuns } from '../table/table-delta.js';
import { changedStates } from '../table/table-compare.js';
import { lookupEntries, lookupStates, newestRows } from '../table/table-lookup.js';
import { type LoadRun, type TableVersion } from '../table/table-version.js';
import { HeadCursor } from '../table/head-cursor.js';
import type { Resolver } from './resolutions.js';
import { divergentColumns, divergentProperties, isMarkedHash, markedHash, marksOf, mergeEntity, type ColumnRow } from './three-way.js';
import type { SizePlan } from './merge-plan.js';
import type { ProgressSink } from '../model/progress.js';

export interface PrepareInput {
  type: TableType;
  base: TableVersion;
  source: TableVersion;
  target: TableVersion;
  load: LoadRun;
  /** Persist the fix run (or, in a dry run, only stage it for reads). */
  writeRun: (rows: RunRow[]) => Promise<RunRef>;
  /** The request's conflict resolutions (none for a virtual base's inner merges). */
  resolver?: Resolver;
  /** Which side to walk key by key (merge-plan.ts `planBySize`); both, and nothing streamed, when absent. */
  bySize?: SizePlan;
  /** Validation needs nothing from the rows only the source changed (merge-plan.ts `sourceRowsTrusted`). */
  sourceTrusted?: boolean;
  /** Where conflicts go (bounded to a page, counted whole); returned with the table when absent. */
  conflicts?: ConflictCollector;
  /** Where rows walked are reported, and how many were planned for this table (all reported by the end). */
  progress?: { sink: ProgressSink; plannedRows: number };
  /** Keep each conflict in the result as marked properties instead of reporting it: a virtual base's inner merges (three-way.ts `Marks`). */
  keepConflicts?: boolean;
}

/** Where a preparation's conflicts go: the merge's collector when it has one, else a list returned with the table. */
class Found {
  count = 0;
  readonly list: Conflict[] = [];
  constructor(private readonly sink?: ConflictCollector) {}
  push(...cs: Conflict[]): void {
    this.count += cs.length;
    if (this.sink !== undefined) for (const c of cs) this.sink.add(c);
    else this.list.push(...cs);
  }
}

/** Reports walked keys in steps, then makes the table's plan whole when it is done. */
class Walked {
  private reported = 0;
  private pending = 0;
  constructor(private readonly p: PrepareInput['progress']) {}
  step(): void {
    if (this.p === undefined || ++this.pending < 1024) return;
    this.p.sink.advance(this.pending);
    this.reported += this.pending;
    this.pending = 0;
  }
  done(): void {
    if (this.p !== undefined) this.p.sink.advance(Math.max(0, this.p.plannedRows - this.reported));
  }
}

export interface PreparedTable {
  table: string;
  version: TableVersion;
  /** Runs this preparation wrote; the merge owns them until publication. */
  scratch: RunRef[];
  /** The table's conflicts, when the merge gave no collector (else they went there); `conflictCount` counts them either way. */
  conflicts: Conflict[];
  conflictCount: number;
  /** Keys whose merged state may differ from the target's, with the merged state (null = absent). */
  changes: Map<string, Row | null>;
  /** Keys changed on both sides: their merged rows are new, where every other change is the source's own row. */
  merged: Set<string>;
  stats: { sourceKeys: number; targetKeys: number; bothKeys: number; fixRows: number; adoptedRuns: number };
}

const stateRow = (r: RunRow | undefined): Row | null => (r === undefined || r.tomb ? null : (r.props as Row));

/** A row a resolution gave a value for: checked and normalized as a write's row is, and still the entity it resolves. */
function suppliedRow(type: TableType, key: string, row: Row | null): Row | null {
  if (row === null) return null;
  const checked = checkRow({ table: type, input: row, mode: 'full', path: `resolutions ${type.name} ${key}` });
  if (checked.issues.length > 0)
    throw new BranchgraphError(
      'constraint_violation',
      `the resolution of ${type.name} ${key} is not a valid row: ${checked.issues[0]?.message}`,
      { issues: checked.issues },
    );
  if (entityKey(type, checked.row) !== key)
    throw new BranchgraphError(
      'invalid_input',
      `the resolution of ${type.name} ${key} changes its key to ${entityKey(type, checked.row)}`,
      {
        issues: [{ path: 'resolutions', message: 'a resolution cannot change the key' }],
      },
    );
  return checked.row;
}
const stateHash = (r: Row | null): string => (r === null ? '' : rowHash(r));

const NO_MARKS = {};
/** Whether a stored state carries marks (three-way.ts `markedHash`). */
const isMarked = (r: RunRow | undefined): boolean => r !== undefined && isMarkedHash(r.hash);

/** Stored hashes of three live states, none marked, all different: both sides updated the row, and not the same way. */
function updatedApart(hb: string, hs: string, ht: string): boolean {
  if (isMarkedHash(hb) || isMarkedHash(hs) || isMarkedHash(ht)) return false;
  return hs !== hb && ht !== hb && hs !== ht;
}

/** `updatedApart` for three states as rows. */
function bothUpdatedDifferently(b: RunRow | undefined, s: RunRow | undefined, t: RunRow | undefined): boolean {
  if (b === undefined || s === undefined || t === undefined || b.tomb || s.tomb || t.tomb) return false;
  return updatedApart(b.hash, s.hash, t.hash);
}

/** A state's content hash: '' for absent or deleted. */
export const hashOf = (r: RunRow | undefined): string => (r === undefined || r.tomb ? '' : r.hash);

export async function prepareTable(input: PrepareInput): Promise<PreparedTable> {
  if (input.bySize !== undefined) {
    const planned =
      input.bySize === 'both'
        ? await prepareStreaming(input)
        : await prepareOneSide(input, input.bySize === 'source-big' ? 'target' : 'source');
    if (planned !== undefined) return planned;
  }
  const { base, source, target, load } = input;
  const [sourceStates, targetStates] = await Promise.all([changedStates(base, source, load), changedStates(base, target, load)]);
  // Sides compacted since the base still share its runs once unfolded (see alignForDelta).
  const [alignedSource, alignedTarget] = await Promise.all([alignForDelta(base, source, load), alignForDelta(base, target, load)]);
  const shared = alignedSource !== undefined && alignedTarget !== undefined;
  const targetKeys = new Set(target.runs.map((r) => r.key));
  const sourceDelta = shared ? (deltaRuns(base, alignedSource) as RunRef[]) : [];
  const adopted = sourceDelta.filter((r) => !targetKeys.has(r.key));
  // The usual case: every source delta run is adopted and sits above the base's runs, so a key the
  // source changed reads, under `target ++ adopted`, exactly as the source has it; nothing to read.
  const adoptsAll =
    adopted.length > 0 && adopted.length === sourceDelta.length && base.runs.every((r, i) => alignedSource?.runs[i]?.key === r.key);

  // What each key reads as under `target ++ adopted`, for keys the adopted runs hold.
  const adoptedState = new Map<string, RunRow>();
  if (adopted.length > 0 && !adoptsAll) for (const r of await newestRows(adopted, load)) adoptedState.set(r.key, r);
  const underLayout = (key: string): RunRow | undefined | null =>
    adoptsAll ? (sourceStates.has(key) ? sourceStates.get(key) : null) : adoptedState.has(key) ? adoptedState.get(key) : null;

  const both = [...sourceStates.keys()].filter((k) => targetStates.has(k));
  const baseStates = await lookupStates(base, both, load);

  const km = new KeyMerge(input);
  const allKeys = [...new Set([...sourceStates.keys(), ...targetStates.keys()])].sort(compareKey);
  for (const key of allKeys) {
    km.walked.step();
    const inSource = sourceStates.has(key);
    const inTarget = targetStates.has(key);
    const layout = underLayout(key);
    if (inSource && inTarget) {
      km.merged.add(key);
      km.key({
        key,
        b: baseStates.get(key),
        s: sourceStates.get(key),
        t: targetStates.get(key),
        layout: layout !== null ? layout : targetStates.get(key),
        changed: true,
      });
      continue;
    }
    // One side changed the key: the result is that side's stored row. A key only the source changed
    // still has the base's state on the target, unknown here without a read, so it is written.
    const own = inSource ? sourceStates.get(key) : targetStates.get(key);
    const result = stateRow(own);
    if (inSource) km.changes.set(key, result);
    const effective = layout !== null ? hashOf(layout) : inSource ? undefined : hashOf(own);
    // A stored hash may predate a property added since; a row written now carries its own.
    if (effective !== hashOf(own))
      km.fix.push(
        result === null ? { key, tomb: true, hash: '', props: null } : { key, tomb: false, hash: rowHash(result), props: result },
      );
  }
  return km.finish(adopted, { sourceKeys: sourceStates.size, targetKeys: targetStates.size });
}

/** The usual layout: every source delta run adoptable and above the base's runs on both sides; undefined otherwise. */
async function usualLayout(input: PrepareInput): Promise<{ sourceDelta: RunRef[]; targetDelta: RunRef[] } | undefined> {
  const { base, source, target, load } = input;
  const [alignedSource, alignedTarget] = await Promise.all([alignForDelta(base, source, load), alignForDelta(base, target, load)]);
  if (alignedSource === undefined || alignedTarget === undefined) return undefined;
  const targetKeys = new Set(target.runs.map((r) => r.key));
  const sourceDelta = deltaRuns(base, alignedSource) as RunRef[];
  const baseFirst = (v: TableVersion): boolean => base.runs.every((r, i) => v.runs[i]?.key === r.key);
  if (sourceDelta.length === 0 || sourceDelta.some((r) => targetKeys.has(r.key)) || !baseFirst(alignedSource) || !baseFirst(alignedTarget))
    return undefined;
  return { sourceDelta, targetDelta: deltaRuns(base, alignedTarget) as RunRef[] };
}

/** What a walk over keys collects: conflicts, changes for validation, keys both sides changed, fix rows. */
class KeyMerge {
  readonly conflicts: Found;
  readonly changes = new Map<string, Row | null>();
  readonly merged = new Set<string>();
  readonly fix: RunRow[] = [];
  readonly walked: Walked;
  constructor(private readonly input: PrepareInput) {
    this.conflicts = new Found(input.conflicts);
    this.walked = new Walked(input.progress);
  }

  /**
   * A key both sides updated differently, whose conflicts fall past the report's page, counted
   * from its runs' columns without building its rows (as `key` would count it from them): true
   * when counted, false when the caller must merge the key from its rows.
   */
  countedInPlace(key: string, at: KeyPlaces): boolean {
    const { base: b, source: s, target: t } = at;
    if (b.data === undefined || s.data === undefined || t.data === undefined) return false;
    if (b.data.tombs[b.at] || s.data.tombs[s.at] || t.data.tombs[t.at]) return false;
    // Marked states (a virtual base's) and rows updated alike on one side go the whole way.
    if (!updatedApart(b.data.hashes[b.at] as string, s.data.hashes[s.at] as string, t.data.hashes[t.at] as string)) return false;
    const cb = b.data.propertyColumns();
    const cs = s.data.propertyColumns();
    const ct = t.data.propertyColumns();
    if (cb === undefined || cs === undefined || ct === undefined || !this.brief(key)) return false;
    const rows = this.columnRows;
    rows.base.columns = cb;
    rows.base.at = b.at;
    rows.source.columns = cs;
    rows.source.at = s.at;
    rows.target.columns = ct;
    rows.target.at = t.at;
    return this.countDivergent(divergentColumns(rows.base, rows.source, rows.target));
  }

  /** Reused by every key `countedInPlace` compares: a batch of 100,000 conflicts allocates nothing per key there. */
  private readonly columnRows = { base: columnRow(), source: columnRow(), target: columnRow() };

  /** Whether `key`'s conflicts are past the report's page with nothing to resolve them: only counted. */
  private brief(key: string): boolean {
    const { input } = this;
    return input.conflicts !== undefined && input.resolver?.empty !== false && !input.conflicts.wants(input.type.name, key);
  }

  /** Count `n` DivergentUpdates of a brief key; false when there are none (the key merges cleanly). */
  private countDivergent(n: number): boolean {
    if (n === 0) return false;
    for (let i = 0; i < n; i++) (this.input.conflicts as ConflictCollector).count('DivergentUpdate');
    this.conflicts.count += n;
    return true;
  }

  /**
   * Merge one key from its three states; `layout` is what it reads as under `target ++ source
   * delta` (a fix row is written when the result differs), `changed` whether the result may differ
   * from the target's (a change validation looks at).
   */
  key(k: {
    key: string;
    b: RunRow | undefined;
    s: RunRow | undefined;
    t: RunRow | undefined;
    layout: RunRow | undefined;
    changed: boolean;
  }): void {
    const { key, b, s, t, layout, changed } = k;
    const { input } = this;
    const sides = { base: stateRow(b), source: stateRow(s), target: stateRow(t) };
    // Conflicts past the report's page, with nothing to resolve them, are only counted.
    const brief = this.brief(key);
    // Only a virtual base's staged rows carry marks: the common case allocates nothing for them.
    const marked = isMarked(b) || isMarked(s) || isMarked(t);
    // Both sides updated the row, differently: if some property conflicts, a brief key is only counted.
    if (
      brief &&
      bothUpdatedDifferently(b, s, t) &&
      this.countDivergent(divergentProperties(b?.props as Row, s?.props as Row, t?.props as Row))
    )
      return;
    const marks = marked ? { base: marksOf(hashOf(b)), source: marksOf(hashOf(s)), target: marksOf(hashOf(t)) } : NO_MARKS;
    const m = mergeEntity({ table: input.type.name, key, base: sides.base, source: sides.source, target: sides.target }, { brief, marks });
    let result: Row | null;
    let resultMarks = m.marks;
    if (!('conflicts' in m)) result = m.row;
    else if (input.keepConflicts === true) {
      // The conflicting properties (every property, for a row conflict) become marked: the outer merge decides them.
      const rowConflict = m.merged === undefined;
      result = m.merged ?? sides.target ?? sides.source;
      const conflicted = m.conflicts.flatMap((c) =>
        rowConflict ? [...Object.keys(sides.source ?? {}), ...Object.keys(sides.target ?? {})] : [c.property as string],
      );
      resultMarks = new Set([...(m.marks ?? []), ...conflicted]);
    } else if (brief) {
      for (const c of m.conflicts) (input.conflicts as ConflictCollector).count(c.kind);
      this.conflicts.count += m.conflicts.length;
      return;
    } else {
      const resolved = input.resolver?.resolve(m.conflicts, sides, m.merged);
      if (resolved === undefined) {
        this.conflicts.push(...m.conflicts);
        return;
      }
      result = resolved.supplied ? suppliedRow(input.type, key, resolved.row) : resolved.row;
      resultMarks = undefined;
    }
    if (hashOf(s) !== hashOf(b) && hashOf(t) !== hashOf(b)) this.merged.add(key);
    if (changed) this.changes.set(key, result);
    const hash = result !== null && resultMarks !== undefined ? markedHash(result, resultMarks) : stateHash(result);
    if (hashOf(layout) !== hash)
      this.fix.push(result === null ? { key, tomb: true, hash: '', props: null } : { key, tomb: false, hash, props: result });
  }

  /** The prepared table: `target ++ source delta ++ [fix]`, or the target with the conflicts. */
  async finish(sourceDelta: RunRef[], counts: { sourceKeys: number; targetKeys: number }): Promise<PreparedTable> {
    const { input, conflicts, changes, merged, fix } = this;
    this.walked.done();
    const stats = { ...counts, bothKeys: merged.size, fixRows: fix.length, adoptedRuns: sourceDelta.length };
    const table = input.type.name;
    if (conflicts.count > 0)
      return {
        table,
        version: input.target,
        scratch: [],
        conflicts: conflicts.list,
        conflictCount: conflicts.count,
        changes,
        merged,
        stats,
      };
    const runs = [...input.target.runs, ...sourceDelta];
    const scratch: RunRef[] = [];
    if (fix.length > 0) {
      const ref = await input.writeRun(fix);
      scratch.push(ref);
      runs.push(ref);
    }
    return { table, version: { runs }, scratch, conflicts: [], conflictCount: 0, changes, merged, stats };
  }
}

/**
 * The merge by the smaller side's keys only: `walk` names the side whose changed keys are merged one
 * by one, each looked up on the other side and at the base. The source's delta runs are adopted
 * whole, as above, so the other side's own changes cost nothing here. Only in the usual layout;
 * undefined otherwise, and the caller merges both sides key by key.
 */
async function prepareOneSide(input: PrepareInput, walk: 'source' | 'target'): Promise<PreparedTable | undefined> {
  const { base, source, target, load } = input;
  const layout = await usualLayout(input);
  if (layout === undefined) return undefined;
  const { sourceDelta, targetDelta } = layout;
  const walked = await changedStates(base, walk === 'source' ? source : target, load);
  const keys = [...walked.keys()].sort(compareKey);
  const [other, baseStates, inSourceDelta] = await Promise.all([
    lookupStates(walk === 'source' ? target : source, keys, load),
    lookupStates(base, keys, load),
    walk === 'source' ? Promise.resolve(undefined) : lookupStates({ runs: sourceDelta }, keys, load),
  ]);
  const km = new KeyMerge(input);
  for (const key of keys) {
    km.walked.step();
    const s = walk === 'source' ? walked.get(key) : other.get(key);
    const t = walk === 'source' ? other.get(key) : walked.get(key);
    // Under `target ++ source delta`, a key the source's delta holds reads as the source has it.
    const fromSource = walk === 'source' || inSourceDelta?.has(key) === true;
    km.key({ key, b: baseStates.get(key), s, t, layout: fromSource ? s : t, changed: fromSource });
  }
  const rows = (runs: RunRef[]): number => runs.reduce((n, r) => n + r.rows, 0);
  return km.finish(sourceDelta, {
    sourceKeys: walk === 'source' ? keys.length : rows(sourceDelta),
    targetKeys: walk === 'target' ? keys.length : rows(targetDelta),
  });
}

/** Where a key's state is: its decoded run (none when no run holds the key) and the position in it. */
interface Place {
  data: RunData | undefined;
  at: number;
}

/** Where a key's three states are; one is filled in place per key. */
interface KeyPlaces {
  base: Place;
  source: Place;
  target: Place;
}

const place = (): Place => ({ data: undefined, at: -1 });
const columnRow = (): ColumnRow => ({ columns: [], at: -1 });

/** Keys both sides changed, awaiting their base states: where each side's entry is, in parallel arrays (no object per key). */
class BothChanged {
  readonly keys: string[] = [];
  private readonly runs: RunData[] = [];
  private readonly pos: number[] = [];

  push(s: HeadCursor, t: HeadCursor): void {
    this.keys.push(s.key);
    this.runs.push(s.data, t.data);
    this.pos.push(s.pos, t.pos);
  }

  /** Set `into` to where key `i`'s entry is on `side`. */
  place(i: number, side: 'source' | 'target', into: Place): void {
    const j = 2 * i + (side === 'source' ? 0 : 1);
    into.data = this.runs[j] as RunData;
    into.at = this.pos[j] as number;
  }

  at(i: number, side: 'source' | 'target'): RunRow {
    const j = 2 * i + (side === 'source' ? 0 : 1);
    return (this.runs[j] as RunData).rowAt(this.pos[j] as number);
  }
}

/** Keys both sides changed are merged in batches of this many, each batch's base states read at once. */
const BOTH_BATCH = 4096;

/**
 * Both sides big: one streaming pass over the two deltas in key order (`HeadCursor`, which decodes
 * nothing), merging a key only where both sides changed it, their base states read in batches. A
 * key one side alone changed reads right under the layout as it is, so it is only counted, or, for
 * a source whose rows validation must see, decoded into the changes. Memory is a segment per run
 * and a batch, not the deltas. Only in the usual layout; undefined otherwise.
 */
/** Merge a batch of keys both sides changed, given where each base entry is (absent: no base row). */
function mergeBothChanged(
  a: { km: KeyMerge; places: KeyPlaces; keys: BothChanged },
  base: { data: (RunData | undefined)[]; pos: number[] },
): void {
  const { km, places, keys } = a;
  for (let i = 0; i < keys.keys.length; i++) {
    const key = keys.keys[i] as string;
    const baseData = base.data[i];
    const baseAt = base.pos[i] as number;
    places.base.data = baseData;
    places.base.at = baseAt;
    keys.place(i, 'source', places.source);
    keys.place(i, 'target', places.target);
    if (km.countedInPlace(key, places)) continue;
    const s = keys.at(i, 'source');
    const bRow = baseData === undefined ? undefined : baseData.rowAt(baseAt);
    km.key({ key, b: bRow, s, t: keys.at(i, 'target'), layout: s, changed: true });
  }
}

async function prepareStreaming(input: PrepareInput): Promise<PreparedTable | undefined> {
  const layout = await usualLayout(input);
  if (layout === undefined) return undefined;
  const { sourceDelta, targetDelta } = layout;
  const km = new KeyMerge(input);
  const counts = { sourceKeys: 0, targetKeys: 0 };
  // Where each side's entry is, not its decoded row: each row is decoded just before it is merged
  // and dies young (see lookupEntries).
  let batch = new BothChanged();
  // The base is read in key order too, each segment by a batch or two: not kept in the run cache.
  const baseLoad: LoadRun = Object.assign((ref: RunRef) => (input.load.uncached ?? input.load)(ref), input.load);
  const places: KeyPlaces = { base: place(), source: place(), target: place() };
  // A full batch's base entries are read while the walk fills the next one; batches are merged in
  // order, and at most two are held.
  let merging: Promise<void> = Promise.resolve();
  const flush = (): void => {
    const full = batch;
    batch = new BothChanged();
    const found = lookupEntries(input.base, full.keys, baseLoad);
    const before = merging;
    merging = (async () => {
      const b = await found;
      await before;
      mergeBothChanged({ km, places, keys: full }, b);
    })();
    // Observed where it is awaited (the next full batch, or the end); never unhandled meanwhile.
    merging.catch(() => undefined);
  };
  const [sc, tc] = await Promise.all([
    HeadCursor.open({ runs: sourceDelta, load: input.load, opts: { readAhead: true } }),
    HeadCursor.open({ runs: targetDelta, load: input.load, opts: { readAhead: true } }),
  ]);
  while (!sc.done || !tc.done) {
    km.walked.step();
    const c = sc.done ? 1 : tc.done ? -1 : compareKey(sc.key, tc.key);
    if (c < 0) {
      counts.sourceKeys++;
      if (input.sourceTrusted !== true) km.changes.set(sc.key, stateRow(sc.data.rowAt(sc.pos)));
      const wait = sc.step();
      if (wait !== undefined) await wait;
    } else if (c > 0) {
      counts.targetKeys++;
      const wait = tc.step();
      if (wait !== undefined) await wait;
    } else {
      counts.sourceKeys++;
      counts.targetKeys++;
      batch.push(sc, tc);
      const waits = [sc.step(), tc.step()].filter((w) => w !== undefined);
      if (waits.length > 0) await Promise.all(waits);
      if (batch.keys.length >= BOTH_BATCH) {
        await merging;
        flush();
      }
    }
  }
  if (batch.keys.length > 0) flush();
  await merging;
  return km.finish(sourceDelta, counts);
}
