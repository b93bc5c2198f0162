/**
 * Appending a write's run to a table, with the write path's inline
 * compaction (table/compaction-policy.ts `inlineCompactionStart`): when the
 * table's newest runs have piled up past the bound, the write folds them
 * into one compacted run, written beside its own run (no round trip before
 * it).
 *
 * The compacted run is the kind background compaction writes: it reads the
 * same in the stretch's place and lists what it replaced, so merges whose
 * base predates it still find their deltas from shared runs. Both runs are
 * the publication's scratch: an attempt that does not land deletes them.
 * Only the branch's own runs are folded: the stretch considered lies above
 * the newest run another lineage published (a run the branch inherited when
 * it was created; what a merge adopted is stamped as the merge's own) and
 * above the newest pending WAL run (the publication folds those). So a
 * branch never folds the runs it shares with the branch it came from, and a
 * merge back finds its base's runs in place on the branch's side. A table's
 * indexes are kept true by index maintenance, as for any change of runs;
 * their own runs (one per change that passes the index tail) fold the same
 * way there, all of them foldable, as merges never align index runs.
 */
import { inlineCompactionStart } from '../table/compaction-policy.js';
import type { TableType } from '../model/schema.js';
import type { RunRef, RunRow } from '../table/run.js';
import { isPendingRun } from '../pending/generation.js';
import type { RunFiles } from './ports.js';
import { originOf } from './run-origin.js';

/** The runs of a branch's table that branch published itself (none when its lineage is unknown). */
export function ownRuns(lineage: string | undefined): (r: RunRef) => boolean {
  return (r) => lineage !== undefined && originOf(r)?.lineage === lineage;
}

/** What appending stores: the write's run, and the compacted run of a tail it folds. */
export type RunAppender = Pick<RunFiles, 'write' | 'delete' | 'writeCompacted' | 'inlineCompaction'>;

/**
 * `runs` with `rows` written as a run on top, and the due tail beneath it folded. Every run
 * written is pushed onto `scratch`, also on failure, once both writes have settled.
 */
export async function appendRun(a: {
  runFiles: RunAppender;
  type: TableType;
  rows: readonly RunRow[];
  runs: readonly RunRef[];
  /** Which runs may be folded: a table's own (`ownRuns`), or any of an index's. */
  foldable: (r: RunRef) => boolean;
  /** The @unique properties the new run's rows left as they were (RunRef.keptUnique). */
  keptUnique?: readonly string[] | undefined;
  scratch: RunRef[];
  signal?: AbortSignal | undefined;
}): Promise<RunRef[]> {
  const { runFiles, type, scratch, signal } = a;
  const [written, below] = await Promise.allSettled([
    runFiles.write(type, a.rows, signal).then((r) => {
      scratch.push(r);
      return r;
    }),
    compactTail(a),
  ]);
  if (written.status === 'rejected') throw written.reason;
  if (below.status === 'rejected') throw below.reason;
  const kept = a.keptUnique ?? [];
  return [...below.value, kept.length > 0 ? { ...written.value, keptUnique: [...kept] } : written.value];
}

/** `runs` with the stretch due for inline compaction replaced by one compacted run (pushed onto `scratch`), or as they were. */
async function compactTail(a: {
  runFiles: RunAppender;
  type: TableType;
  runs: readonly RunRef[];
  foldable: (r: RunRef) => boolean;
  scratch: RunRef[];
  signal?: AbortSignal | undefined;
}): Promise<readonly RunRef[]> {
  const { runs } = a;
  const bound = a.runFiles.inlineCompaction;
  if (bound === false) return runs;
  // Pending WAL runs are never folded here: the publication folds them.
  let floor = runs.length;
  while (floor > 0 && !isPendingRun(runs[floor - 1] as RunRef) && a.foldable(runs[floor - 1] as RunRef)) floor--;
  const at = inlineCompactionStart(
    runs.slice(floor).map((r) => r.rows),
    bound,
  );
  if (at === undefined) return runs;
  const start = floor + at;
  const ref = await a.runFiles.writeCompacted({ type: a.type, refs: runs.slice(start), dropTombstones: start === 0, signal: a.signal });
  if (ref !== undefined) a.scratch.push(ref);
  return [...runs.slice(0, start), ...(ref === undefined ? [] : [ref])];
}
