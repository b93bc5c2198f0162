/**
 * Deltas between table versions. Runs are immutable and shared between versions, so the difference
 * between a version B and a later version V is usually visible from run keys alone: when B's runs
 * appear in V in the same relative order (B is a subsequence of V), a key can differ between B and
 * V only if a run of V that B lacks holds it. Those added runs are the delta, and nothing else needs
 * reading. When sharing is lost (compaction, reordering), `deltaRuns` returns undefined and callers
 * fall back to a full sorted comparison (table-compare.ts).
 *
 * Pure: run bytes arrive through a `LoadRun` function.
 */
import type { RunRef } from './run.js';
import type { LoadRun, TableVersion } from './table-version.js';

/**
 * The runs of `v` that `base` lacks, when `base`'s runs form a subsequence of
 * `v`'s; otherwise undefined (the delta must be computed by comparison).
 */
export function deltaRuns(base: TableVersion | undefined, v: TableVersion | undefined): RunRef[] | undefined {
  const b = base?.runs ?? [];
  const runs = v?.runs ?? [];
  let i = 0;
  const added: RunRef[] = [];
  for (const r of runs) {
    if (i < b.length && (b[i] as RunRef).key === r.key) i++;
    else added.push(r);
  }
  if (i < b.length) return undefined;
  // A run of `base` appearing twice would make "added" ambiguous; treat as lost sharing.
  const baseKeys = new Set(b.map((r) => r.key));
  return added.some((r) => baseKeys.has(r.key)) ? undefined : added;
}

/** How many levels of compaction a delta search unfolds before it compares whole versions instead. */
const MAX_UNFOLD = 16;

/**
 * `v` with compacted runs unfolded into the runs they replaced, until
 * `base`'s runs appear in it in order (so `deltaRuns` finds the delta), or
 * undefined when that does not happen. The unfolded version reads exactly
 * as `v` does: a compacted run holds the newest state of every key in the
 * runs it replaced. Only compacted runs `base` lacks are unfolded, level by
 * level, so the cost is the compactions between `base` and `v`, not the
 * table. The replaced runs are those of older versions, kept with the
 * history that references them.
 */
export async function alignForDelta(base: TableVersion, v: TableVersion, load: LoadRun): Promise<TableVersion | undefined> {
  if (deltaRuns(base, v) !== undefined) return v;
  const replaced = load.replaced;
  if (replaced === undefined) return undefined;
  const baseKeys = new Set(base.runs.map((r) => r.key));
  let runs = v.runs;
  for (let level = 0; level < MAX_UNFOLD; level++) {
    const unfold = runs.filter((r) => r.compacted === true && !baseKeys.has(r.key));
    if (unfold.length === 0) return undefined;
    const parts = new Map(await Promise.all(unfold.map(async (r) => [r.key, await replaced(r)] as const)));
    runs = runs.flatMap((r) => parts.get(r.key) ?? [r]);
    if (deltaRuns(base, { runs }) !== undefined) return { runs };
  }
  return undefined;
}
