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
import { findType, schemaHashOf, typeText, type Schema, type TableType } from '../model/schema.js';
import { compareKey, type RunRef, type RunRow } from '../table/run.js';
import type { Row } from '../model/values.js';
import {
  buildIndexRows,
  indexRowsOf,
  inChange,
  indexChange,
  indexSpecs,
  indexType,
  runsFingerprint,
  validIndexes,
  type IndexedVersion,
  type IndexSpec,
  type TableIndexes,
} from '../table/secondary-index.js';
import { changedStates } from '../table/table-compare.js';
import { EMPTY_TABLE, type LoadRun, type TableVersion } from '../table/table-version.js';
import { lookupStates } from '../table/table-lookup.js';
import { mergeRuns } from '../table/merge-walk.js';
import type { ChangePlan } from './change.js';
import type { Snapshot } from './snapshot.js';
import type { RunReader } from './ports.js';
import { appendRun, type RunAppender } from './append-run.js';

type Runs = RunReader & RunAppender;

/**
 * The indexes of a table that held no rows before a write, built from the write's own rows (live,
 * sorted by key) and written beside its run: the run just written is not read back, and its
 * encoding and the indexes' overlap. `runs` is the table's runs once the write's run is appended.
 * Undefined when the type keeps no index.
 */
export async function indexesOfNewRows(a: {
  runFiles: RunAppender;
  type: TableType;
  rows: readonly RunRow[];
  runs: Promise<RunRef[]>;
  scratch: RunRef[];
  signal?: AbortSignal | undefined;
}): Promise<TableIndexes | undefined> {
  const { runFiles, type, scratch, signal } = a;
  const specs = indexSpecs(type);
  if (specs.length === 0) return undefined;
  const sets: TableIndexes['sets'] = {};
  await Promise.all(
    specs.map(async (spec) => {
      sets[spec.name] = await builtIndex({ runFiles, type, spec, rows: indexRowsOf(spec, a.rows), scratch, signal });
    }),
  );
  const runs = await a.runs;
  return { of: runsFingerprint(runs), covers: runs.length, sets };
}

/** An index built from scratch: its rows as one run (none when it holds nothing), pushed onto `scratch`. */
async function builtIndex(a: {
  runFiles: RunAppender;
  type: TableType;
  spec: IndexSpec;
  rows: RunRow[];
  scratch: RunRef[];
  signal?: AbortSignal | undefined;
}): Promise<TableVersion> {
  if (a.rows.length === 0) return { runs: [] };
  const ref = await a.runFiles.write(indexType(a.type, a.spec), a.rows, a.signal);
  a.scratch.push(ref);
  return { runs: [ref] };
}

/** `plan` with every table it publishes indexed; index runs written are pushed onto `plan.scratch`. */
export async function maintainIndexes<T>(a: {
  runs: Runs;
  head: Snapshot;
  plan: ChangePlan<T>;
  signal?: AbortSignal | undefined;
}): Promise<ChangePlan<T>> {
  const { runs, head, plan, signal } = a;
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
    // The head's entries were indexed when published: only their index names need checking here.
    if (typeChanged(head.schema, type, schemaChanged) || !sameNames(entry, indexSpecs(type))) todo.push([type, entry]);
  }
  await Promise.all(
    todo.map(async ([type, t]) => {
      tables[type.name] = await indexed({
        runs,
        head,
        type,
        t,
        rebuild: typeChanged(head.schema, type, schemaChanged),
        scratch: plan.scratch,
        signal,
      });
    }),
  );
  return { ...plan, tables };
}

/** Did the type's definition change in this publication (so its stored rows may read differently)? */
function typeChanged(before: Schema, type: TableType, schemaChanged: boolean): boolean {
  if (!schemaChanged) return false;
  const old = findType(before, type.name);
  return old === undefined || (old !== type && typeText(old) !== typeText(type));
}

/** Does `v` carry exactly the indexes `specs` names (none when there are none)? */
function sameNames(v: IndexedVersion, specs: readonly IndexSpec[]): boolean {
  const sets = v.indexes?.sets;
  if (specs.length === 0 || sets === undefined) return specs.length === 0 && sets === undefined;
  return Object.keys(sets).length === specs.length && specs.every((s) => sets[s.name] !== undefined);
}

/** Those indexes, and built for `v`'s runs. */
function hasAll(v: IndexedVersion, specs: readonly IndexSpec[]): boolean {
  return sameNames(v, specs) && (specs.length === 0 || validIndexes(v) !== undefined);
}

/** A tail of at most this many runs and rows above what the indexes describe is left for lookups to read. */
export const INDEX_TAIL_RUNS = 8;
export const INDEX_TAIL_ROWS = 2048;

/** `t` with the indexes its type wants, reusing what the plan or the head already holds. */
async function indexed(a: {
  runs: Runs;
  head: Snapshot;
  type: TableType;
  t: IndexedVersion;
  rebuild: boolean;
  scratch: RunRef[];
  signal?: AbortSignal | undefined;
}): Promise<IndexedVersion> {
  const { runs, head, type, t, rebuild, scratch, signal } = a;
  const specs = indexSpecs(type);
  if (specs.length === 0) return { runs: t.runs };
  if (!rebuild && hasAll(t, specs)) return t;
  const before: IndexedVersion = head.manifest.tables[type.name] ?? EMPTY_TABLE;
  const ix = rebuild ? undefined : validIndexes(before);
  // What the head's indexes describe: its first `covers` runs.
  const described: TableVersion = { runs: before.runs.slice(0, ix?.covers ?? 0) };
  const kept =
    ix !== undefined && specs.every((s) => ix.sets[s.name] !== undefined) && described.runs.every((r, i) => t.runs[i]?.key === r.key);
  const tail = t.runs.slice(described.runs.length);
  // A small tail above unchanged indexes: lookups read it, and no index run is written.
  if (kept && tail.length <= INDEX_TAIL_RUNS && tail.reduce((n, r) => n + r.rows, 0) <= INDEX_TAIL_ROWS) {
    return {
      runs: t.runs,
      indexes: {
        of: ix.of,
        covers: described.runs.length,
        sets: Object.fromEntries(specs.map((s) => [s.name, ix.sets[s.name] as TableVersion])),
      },
    };
  }
  const load = runs.loader(type, signal);
  // An index's delta run goes on top of its runs, folding those that piled up (append-run.ts).
  const append = async (spec: IndexSpec, rows: RunRow[], prior: readonly RunRef[]): Promise<RunRef[]> => {
    if (rows.length === 0) return [...prior];
    return appendRun({ runFiles: runs, type: indexType(type, spec), rows, runs: prior, foldable: () => true, scratch, signal });
  };
  const priorSets = ix?.sets;
  const delta = specs.some((s) => priorSets?.[s.name] !== undefined)
    ? await indexDeltas({ specs, before: described, after: t, load })
    : undefined;
  const sets: TableIndexes['sets'] = {};
  await Promise.all(
    specs.map(async (spec) => {
      const prior = priorSets?.[spec.name];
      if (prior !== undefined && delta !== undefined) {
        sets[spec.name] = { runs: await append(spec, delta.get(spec.name) ?? [], prior.runs) };
      } else {
        const rows = await buildIndexRows(spec, mergeRuns({ runs: t.runs, load }));
        sets[spec.name] = await builtIndex({ runFiles: runs, type, spec, rows, scratch, signal });
      }
    }),
  );
  return { runs: t.runs, indexes: { of: runsFingerprint(t.runs), covers: t.runs.length, sets } };
}

/** Per index, the sorted rows that take it from `before`'s table to `after`'s. */
async function indexDeltas(a: {
  specs: readonly IndexSpec[];
  before: TableVersion;
  after: TableVersion;
  load: LoadRun;
}): Promise<Map<string, RunRow[]>> {
  const { specs, before, after, load } = a;
  const changed = await changedStates(before, after, load);
  // @unique values need the old rows; an edge's `in` entry follows from its key.
  const priors =
    specs.some((s) => s.kind === 'unique') && changed.size > 0
      ? await lookupStates(before, changed.keys(), load)
      : new Map<string, RunRow>();
  const live = (r: RunRow | undefined): Row | null => (r === undefined || r.tomb ? null : (r.props as Row));
  const out = new Map<string, RunRow[]>();
  for (const spec of specs) {
    const rows: RunRow[] = [];
    for (const [key, r] of changed)
      rows.push(
        ...(spec.kind === 'unique'
          ? indexChange({ spec, key, before: live(priors.get(key)), after: live(r) })
          : [inChange(key, live(r) !== null)]),
      );
    out.set(
      spec.name,
      rows.sort((a, b) => compareKey(a.key, b.key)),
    );
  }
  return out;
}

/**
 * Where a snapshot's published indexes disagree with the table runs they describe (a tail above
 * them is read from its rows at lookup), for the simulation and the crash sweeps.
 */
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
      const want = (await buildIndexRows(spec, mergeRuns({ runs: entry.runs.slice(0, ix.covers), load }))).map((r) => r.key);
      const have: string[] = [];
      for await (const r of mergeRuns({ runs: set.runs, load: runs.loader(indexType(type, spec), signal) })) have.push(r.key);
      const haveSet = new Set(have);
      const wantSet = new Set(want);
      const missing = want.filter((k) => !haveSet.has(k));
      const extra = have.filter((k) => !wantSet.has(k));
      if (missing.length > 0 || extra.length > 0)
        out.push(
          `${type.name}: index ${spec.name} lacks ${missing.length} and has ${extra.length} extra entries (first: ${JSON.stringify(missing[0] ?? extra[0])})`,
        );
    }
  }
  return out;
}
