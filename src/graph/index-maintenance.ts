/**
 * Keeping secondary indexes true, at the one place every change passes:
 * the publication loop calls `maintainIndexes` on each plan just before it
 * builds the manifest, so writes, WAL folds, catch-up, merges, cherry-picks,
 * reverts, compactions and schema changes all publish entries whose indexes
 * describe exactly their runs (table/secondary-index.ts).
 *
 * Per table the plan changes, cheapest first:
 * - the plan's entry already carries indexes built for its runs (a merge or
 *   fast-forward adopting the source's table by reference): kept as is;
 * - the head's entry has them: the index delta is derived from the table
 *   delta (the runs the head lacks, table-version.ts `changedStates`), one
 *   index run per index holding only what those keys changed, so the work
 *   follows the change and not the table;
 * - otherwise (a new table, a type whose definition changed, an entry from
 *   before indexes existed): built from the table in one scan.
 * Tables the plan leaves alone are indexed here only when their type
 * changed or they lack an index their type wants (an upgrade, or a schema
 * that added @unique); every other entry carries over untouched.
 *
 * Index runs are the plan's scratch: a publication that does not land
 * deletes them with the rest.
 */
import { canonicalJson } from '../model/canonical.js';
import { findType, schemaHashOf, type Schema, type TableType } from '../model/schema.js';
import type { RunRef, RunRow } from '../table/run.js';
import { buildIndexRows, encodeNodeKey, indexChange, indexSpecs, indexType, runsFingerprint, validIndexes, type IndexedVersion, type IndexSpec, type TableIndexes } from '../table/secondary-index.js';
import { changedStates, EMPTY_TABLE, lookupStates, mergeRuns, type TableVersion } from '../table/table-version.js';
import type { ChangePlan, Snapshot } from './graph.js';
import type { RunReader, RunWriter } from './ports.js';

type Runs = RunReader & RunWriter;

/** `plan` with every table it publishes indexed; index runs written are pushed onto `plan.scratch`. */
export async function maintainIndexes<T>(runs: Runs, head: Snapshot, plan: ChangePlan<T>, signal?: AbortSignal): Promise<ChangePlan<T>> {
  const schema = plan.schema ?? head.schema;
  const schemaChanged = plan.schema !== undefined && schemaHashOf(plan.schema) !== head.manifest.schema;
  const tables: Record<string, TableVersion | null> = { ...plan.tables };
  const todo: [TableType, IndexedVersion][] = [];
  for (const [name, t] of Object.entries(tables)) {
    const type = findType(schema, name);
    if (t !== null && type !== undefined) todo.push([type, t]);
  }
  for (const type of schema.types) {
    const entry = head.manifest.tables[type.name];
    if (entry === undefined || type.name in tables) continue;
    if (typeChanged(head.schema, type, schemaChanged) || !hasAll(entry, indexSpecs(type))) todo.push([type, entry]);
  }
  await Promise.all(
    todo.map(async ([type, t]) => {
      tables[type.name] = await indexed(runs, head, type, t, typeChanged(head.schema, type, schemaChanged), plan.scratch, signal);
    }),
  );
  return { ...plan, tables };
}

/** Did the type's definition change in this publication (so its stored rows may read differently)? */
function typeChanged(before: Schema, type: TableType, schemaChanged: boolean): boolean {
  if (!schemaChanged) return false;
  const old = findType(before, type.name);
  return old === undefined || canonicalJson(old) !== canonicalJson(type);
}

function hasAll(v: IndexedVersion, specs: readonly IndexSpec[]): boolean {
  const ix = validIndexes(v);
  if (specs.length === 0) return v.indexes === undefined;
  return ix !== undefined && Object.keys(ix.sets).length === specs.length && specs.every((s) => ix.sets[s.name] !== undefined);
}

/** `t` with the indexes its type wants, reusing what the plan or the head already holds. */
async function indexed(runs: Runs, head: Snapshot, type: TableType, t: IndexedVersion, rebuild: boolean, scratch: RunRef[], signal?: AbortSignal): Promise<IndexedVersion> {
  const specs = indexSpecs(type);
  if (specs.length === 0) return { runs: t.runs };
  if (!rebuild && hasAll(t, specs)) return t;
  const before: IndexedVersion = head.manifest.tables[type.name] ?? EMPTY_TABLE;
  const beforeSets = rebuild ? undefined : validIndexes(before)?.sets;
  const load = runs.loader(type, signal);
  const write = async (spec: IndexSpec, rows: RunRow[]): Promise<RunRef | undefined> => {
    if (rows.length === 0) return undefined;
    const ref = await runs.write(indexType(type, spec), rows, signal);
    scratch.push(ref);
    return ref;
  };
  const delta = specs.some((s) => beforeSets?.[s.name] !== undefined) ? await indexDeltas(specs, before, t, load) : undefined;
  const sets: TableIndexes['sets'] = {};
  for (const spec of specs) {
    const prior = beforeSets?.[spec.name];
    if (prior !== undefined && delta !== undefined) {
      const ref = await write(spec, delta.get(spec.name) ?? []);
      sets[spec.name] = { runs: ref === undefined ? prior.runs : [...prior.runs, ref] };
    } else {
      const ref = await write(spec, await buildIndexRows(spec, mergeRuns(t.runs, load, undefined)));
      sets[spec.name] = { runs: ref === undefined ? [] : [ref] };
    }
  }
  return { runs: t.runs, indexes: { of: runsFingerprint(t.runs), sets } };
}

/** Per index, the sorted rows that take it from `before`'s table to `after`'s. */
async function indexDeltas(specs: readonly IndexSpec[], before: TableVersion, after: TableVersion, load: Parameters<typeof changedStates>[2]): Promise<Map<string, RunRow[]>> {
  const changed = await changedStates(before, after, load);
  // An edge's `to` is part of its key, so its `in` entry follows from the key; @unique values need the old rows.
  const priors = specs.some((s) => s.kind === 'unique') && changed.size > 0 ? await lookupStates(before, changed.keys(), load) : new Map<string, RunRow>();
  const out = new Map<string, RunRow[]>();
  for (const spec of specs) {
    const rows: RunRow[] = [];
    for (const [key, r] of changed) {
      const after = r === undefined || r.tomb ? null : (r.props as NonNullable<RunRow['props']>);
      if (spec.kind === 'in') {
        const entry = `${encodeNodeKey(edgeTo(key))}\u0000${key}`;
        rows.push(after === null ? { key: entry, tomb: true, hash: '', props: null } : { key: entry, tomb: false, hash: '1', props: {} });
        continue;
      }
      const prior = priors.get(key);
      rows.push(...indexChange(spec, key, prior === undefined || prior.tomb ? null : (prior.props as NonNullable<RunRow['props']>), after));
    }
    out.set(
      spec.name,
      rows.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
    );
  }
  return out;
}

/** The `to` node key inside an edge key (`[from, to, ...]`, see model/values.ts). */
function edgeTo(key: string): string {
  return String((JSON.parse(key) as unknown[])[1]);
}

/** Where a snapshot's published indexes disagree with its tables: for the simulation, the crash sweeps and `check`. */
export async function indexProblems(runs: RunReader, snap: Snapshot, signal?: AbortSignal): Promise<string[]> {
  const out: string[] = [];
  for (const type of snap.schema.types) {
    const entry: IndexedVersion | undefined = snap.manifest.tables[type.name];
    const specs = indexSpecs(type);
    if (entry === undefined || specs.length === 0) continue;
    const ix = validIndexes(entry);
    if (ix === undefined) {
      out.push(`${type.name}: no indexes built for its runs`);
      continue;
    }
    const load = runs.loader(type, signal);
    for (const spec of specs) {
      const set = ix.sets[spec.name];
      if (set === undefined) {
        out.push(`${type.name}: index ${spec.name} is missing`);
        continue;
      }
      const want = (await buildIndexRows(spec, mergeRuns(entry.runs, load, undefined))).map((r) => r.key);
      const have: string[] = [];
      for await (const r of mergeRuns(set.runs, runs.loader(indexType(type, spec), signal), undefined)) have.push(r.key);
      const haveSet = new Set(have);
      const wantSet = new Set(want);
      const missing = want.filter((k) => !haveSet.has(k));
      const extra = have.filter((k) => !wantSet.has(k));
      if (missing.length > 0 || extra.length > 0)
        out.push(`${type.name}: index ${spec.name} lacks ${missing.length} and has ${extra.length} extra entries (first: ${JSON.stringify(missing[0] ?? extra[0])})`);
    }
  }
  return out;
}
