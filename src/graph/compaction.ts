/**
 * Compaction as a publication: which stretches of runs to merge, merged
 * into runs that record what they replaced, published as one `compact`
 * commit.
 *
 * The plan reads the manifest's tables only (pending WAL rows stay
 * pending, catch-up folds them) and replaces, per table, a contiguous
 * stretch of runs ending at the newest with one run that reads the same in
 * its place. Writers are never blocked: if the head moves while the
 * compacted runs are written, the publication loop plans again, and runs
 * already compacted for a stretch that is still there are reused, so a
 * busy branch costs retries of a manifest write, not of the compaction.
 * A table's indexes are compacted by the same policy beside it: they are
 * runs too, one more per change.
 * Compacted runs list what they replaced (RunStore.writeCompacted), so a
 * merge whose base predates the compaction still finds its delta from
 * shared runs (table-version.ts `alignForDelta`).
 */
import { BranchgraphError } from '../model/errors.js';
import { findType, type TableType } from '../model/schema.js';
import { indexSpecs, indexType, runsFingerprint, validIndexes, type IndexedVersion } from '../table/secondary-index.js';
import { compactionStart } from '../table/compaction-policy.js';
import type { RunRef } from '../table/run.js';
import type { TableVersion } from '../table/table-version.js';
import type { ChangeOptions, ChangeResult, PlanResult } from './change.js';
import type { GraphPorts } from './ports.js';
import type { Snapshot } from './snapshot.js';

export interface CompactOptions {
  /** Tables to consider (default: every table). */
  tables?: readonly string[];
  /** `tiered` (default): what the size-tiered policy says is due. `full`: each table as one run. */
  mode?: 'tiered' | 'full';
}

export interface CompactionResult {
  /** Per compacted table: runs before and after. */
  tables: { table: string; runsBefore: number; runsAfter: number; runsMerged: number; indexRunsMerged: number }[];
}

/** Where the stretch to compact starts in `runs`, or undefined when nothing is due. */
function stretchStart(runs: readonly RunRef[], mode: 'tiered' | 'full'): number | undefined {
  if (mode === 'full') return runs.length > 1 || runs.some((r) => r.tombstones > 0) ? 0 : undefined;
  return compactionStart(runs.map((r) => r.rows));
}

/** Where `stretch` sits in `runs` as a contiguous block, or -1. */
function indexOfStretch(runs: readonly RunRef[], stretch: readonly RunRef[]): number {
  const first = stretch[0];
  if (first === undefined) return -1;
  const i = runs.findIndex((r) => r.key === first.key);
  return i >= 0 && stretch.every((r, k) => runs[i + k]?.key === r.key) ? i : -1;
}

type Chosen = Map<string, { stretch: RunRef[]; fromOldest: boolean; ref: RunRef | null }>;

/** One compaction's state across attempts: the stretches chosen and the runs written, and how to write them. */
interface Round {
  runFiles: GraphPorts['runFiles'];
  mode: 'tiered' | 'full';
  chosen: Chosen;
  written: RunRef[];
  signal?: AbortSignal | undefined;
}

/**
 * One stretch of `runs` compacted under `unit` (a table, or one of its indexes): the runs after, and
 * how many were merged; undefined when nothing is due. A stretch chosen by an earlier attempt is
 * reused while it is still in place.
 */
async function compactUnit(
  round: Round,
  target: { unit: string; type: TableType; runs: RunRef[] },
): Promise<{ after: RunRef[]; merged: number } | undefined> {
  const { mode, chosen, written, signal } = round;
  const { unit, type, runs } = target;
  let pick = chosen.get(unit);
  let at = pick === undefined ? -1 : indexOfStretch(runs, pick.stretch);
  // Tombstones were dropped only because the stretch began at the oldest run; it still must.
  if (pick !== undefined && (at < 0 || (pick.fromOldest && at !== 0))) pick = undefined;
  if (pick === undefined) {
    const start = stretchStart(runs, mode);
    if (start === undefined) return undefined;
    const stretch = runs.slice(start);
    const ref = (await round.runFiles.writeCompacted({ type, refs: stretch, dropTombstones: start === 0, signal })) ?? null;
    if (ref !== null) written.push(ref);
    pick = { stretch, fromOldest: start === 0, ref };
    chosen.set(unit, pick);
    at = start;
  }
  return {
    after: [...runs.slice(0, at), ...(pick.ref === null ? [] : [pick.ref]), ...runs.slice(at + pick.stretch.length)],
    merged: pick.stretch.length,
  };
}

/** Compact one table and its indexes; undefined when nothing is due. */
async function compactTable(round: Round, type: TableType, entry: IndexedVersion) {
  const name = type.name;
  const own = await compactUnit(round, { unit: name, type, runs: entry.runs });
  const runs = own?.after ?? entry.runs;
  // Indexes are compacted when they describe every run; with a tail of writes above them, the
  // publication folds the tail in first (index-maintenance.ts) and a later round compacts them.
  const valid = validIndexes(entry);
  const ix = valid?.covers === entry.runs.length ? valid : undefined;
  const sets: Record<string, TableVersion> = {};
  let indexRunsMerged = 0;
  for (const spec of indexSpecs(type)) {
    const set = ix?.sets[spec.name];
    if (set === undefined) continue;
    const done = await compactUnit(round, { unit: `${name}\u0000${spec.name}`, type: indexType(type, spec), runs: set.runs });
    sets[spec.name] = done === undefined ? set : { runs: done.after };
    indexRunsMerged += done?.merged ?? 0;
  }
  if (own === undefined && indexRunsMerged === 0) return undefined;
  // The table's rows read the same, so its indexes still hold: they now describe the compacted runs.
  const version: IndexedVersion = ix === undefined ? { runs } : { runs, indexes: { of: runsFingerprint(runs), covers: runs.length, sets } };
  return {
    version,
    line: { table: name, runsBefore: entry.runs.length, runsAfter: runs.length, runsMerged: own?.merged ?? 0, indexRunsMerged },
  };
}

export async function compactBranch(
  ports: Pick<GraphPorts, 'publication' | 'runFiles' | 'clock' | 'heads'>,
  branch: string,
  opts: ChangeOptions & CompactOptions,
): Promise<ChangeResult<CompactionResult>> {
  // Per table and index, the stretch chosen and the run it became: kept across attempts, because
  // writers only append, so the same stretch stays in place and one compacted run serves every re-plan.
  const round: Round = { runFiles: ports.runFiles, mode: opts.mode ?? 'tiered', chosen: new Map(), written: [], signal: opts.signal };
  const { written } = round;
  // Reused runs were written after this: the publication deadline counts from here (see gc.ts).
  const startedAt = ports.clock();
  // The compacted runs are written first, on the head as it is now. Only then does the compaction
  // take this process's turn on the branch, where writes and merges take theirs
  // (publication-lanes.ts): its turn plans again reusing those runs and hands its manifest on, so
  // writers queue behind a plan, never behind the writing of a tier, and a stream of writes cannot
  // beat it to every version (it used to lose race after race, falling a hundred runs behind).
  const first = await ports.heads.branchHead(branch, opts.signal, { withoutPending: true });
  await planCompaction(round, first, { tables: opts.tables, readAt: startedAt });
  return ports.publication
    .commitChange<CompactionResult>(branch, { ...opts, withoutPending: true, chained: true, firstHead: first }, (head) =>
      planCompaction(round, head, { tables: opts.tables, readAt: startedAt }),
    )
    .then(async (r) => {
      // Every attempt before the one that published certainly did not land (a lost race, or the loop
      // would have thrown), so what only they used can go. On a failure nothing is deleted: the last
      // manifest may have landed unseen (a lost response), and GC removes what nothing references.
      const used = new Set(r.status === 'published' ? Object.values(r.manifest.tables).flatMap((t) => entryRuns(t).map((x) => x.key)) : []);
      await ports.runFiles.delete(written.filter((w) => !used.has(w.key))).catch(() => undefined);
      return r;
    });
}

/** What compacting `head` publishes: the tables with a stretch due, each reusing the run `round` already wrote for it. */
async function planCompaction(
  round: Round,
  head: Snapshot,
  opts: { tables: readonly string[] | undefined; readAt: number },
): Promise<PlanResult<CompactionResult>> {
  for (const name of opts.tables ?? [])
    if (findType(head.schema, name) === undefined)
      throw new BranchgraphError('not_found', `table ${name} does not exist`, { details: { table: name } });
  const tables: Record<string, TableVersion> = {};
  const result: CompactionResult = { tables: [] };
  for (const name of (opts.tables ?? Object.keys(head.manifest.tables)).slice().sort()) {
    const type = findType(head.schema, name);
    const entry = head.manifest.tables[name];
    if (type === undefined || entry === undefined) continue;
    const done = await compactTable(round, type, entry);
    if (done === undefined) continue;
    tables[name] = done.version;
    result.tables.push(done.line);
  }
  if (result.tables.length === 0) return { unchanged: result };
  const names = result.tables.map((t) => t.table).join(', ');
  // Compacted runs are kept across attempts; those no publication took are deleted after it.
  return {
    kind: 'compact',
    relays: true,
    tables,
    keepPending: true,
    scratch: [],
    result,
    message: `compact ${names}`,
    readAt: opts.readAt,
  };
}

/** A table entry's runs and its indexes' runs. */
function entryRuns(t: IndexedVersion): RunRef[] {
  return [...t.runs, ...Object.values(t.indexes?.sets ?? {}).flatMap((ix) => ix.runs)];
}

/** Whether the policy has any compaction due on `head`'s tables (cheap: run sizes only). */
export function compactionDue(head: Snapshot): boolean {
  const due = (runs: readonly RunRef[]): boolean => compactionStart(runs.map((r) => r.rows)) !== undefined;
  return Object.values(head.manifest.tables).some((t) => due(t.runs) || Object.values(t.indexes?.sets ?? {}).some((ix) => due(ix.runs)));
}
