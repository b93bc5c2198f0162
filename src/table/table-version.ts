/**
 * Table versions: an ordered list of runs, oldest first; the newest run that holds a key decides its
 * state (a row or a tombstone). This file holds the version itself; its algorithms have files of their
 * own: deltas (table-delta.ts), point lookups (table-lookup.ts), the merge walk (merge-walk.ts),
 * comparison (table-compare.ts) and prefix scans (table-prefix.ts).
 *
 * Everything here is pure: run bytes arrive through a `LoadRun` function.
 */
import type { RunData, RunRef } from './run.js';

export interface TableVersion {
  runs: RunRef[];
}

export const EMPTY_TABLE: TableVersion = { runs: [] };

/**
 * Reads runs for the algorithms here: `load` decodes one unsegmented run or
 * segment; `segments` lists what to load for a run (itself, or its segments).
 */
export type LoadRun = ((ref: RunRef) => Promise<RunData>) & {
  segments: (ref: RunRef) => Promise<RunRef[]>;
  /** Load without keeping the run in a cache (a walk that reads each segment once); `load` when absent. */
  uncached?: (ref: RunRef) => Promise<RunData>;
  /**
   * `uncached`, decoding only when the returned function is called: what a walk reads ahead stays
   * bytes (outside the JavaScript heap) until the walk reaches it, so its decoded rows are not
   * carried through collections while they wait.
   */
  raw?: (ref: RunRef) => Promise<() => RunData>;
  /** The runs a compacted run replaced, oldest first. */
  replaced?: (ref: RunRef) => Promise<RunRef[]>;
};

export function sameRuns(a: TableVersion | undefined, b: TableVersion | undefined): boolean {
  const ra = a?.runs ?? [];
  const rb = b?.runs ?? [];
  return ra.length === rb.length && ra.every((r, i) => r.key === rb[i]?.key);
}

/** Total rows and bytes of a version, from run stats alone. */
export function versionStats(v: TableVersion): { runs: number; rows: number; bytes: number } {
  return v.runs.reduce((acc, r) => ({ runs: acc.runs + 1, rows: acc.rows + r.rows, bytes: acc.bytes + r.bytes }), {
    runs: 0,
    rows: 0,
    bytes: 0,
  });
}
