/**
 * Run origins: which publication put a run where it is.
 *
 * Entity history (entity-history.ts) jumps from a key's state straight to
 * the commit that set it. That is sound when, for every run a manifest
 * names, the run's `origin` is a commit C such that every commit from C to
 * this one along first parents named the run with the same runs newer than
 * it (or their compaction): then a key's newest state in the run is the
 * state C left, and every commit between left its first parent's state.
 * That is what Git's history simplification follows (a commit that equals
 * its first parent passes to it), so jumping skips exactly what a walk of
 * every commit would pass through.
 *
 * So the publisher keeps a run's origin only where the first parent's
 * entry for the table held it, every run newer than it there is still
 * newer than it here (or was compacted by this publication into a new run
 * newer than it), and no run older than it there is newer than it here (a
 * side's table adopted by a merge may order shared runs differently). Writes, catch-up and the merged delta append runs and
 * compaction replaces a range by its compaction: they keep origins. A run
 * the first parent did not hold (a merge or fast-forward adopting the
 * other side's table, whose rows the walk then follows into that side from
 * here), or one whose newer runs were dropped (a cherry-pick or revert
 * adopting another commit's table), is stamped with this publication.
 *
 * A key no run holds needs the same guarantee for absence. `replacedAt` on
 * the table entry names the last publication whose runs did not extend its
 * first parent's (a table created, adopted or replaced as above); between
 * it and the current commit runs were only added or compacted, so a key
 * absent here was absent there too, unless a compaction of the oldest runs
 * dropped its tombstone, which that compaction's run origin covers.
 *
 * Runs and entries published before origins were recorded have none:
 * readers treat them as "set here or earlier" and walk one commit at a
 * time until compaction and new writes replace them.
 */
import type { RunRef } from '../table/run.js';
import type { ManifestRef, TableEntry } from './manifest.js';

export function originText(ref: ManifestRef): string {
  return `${ref.lineage}:${ref.version}`;
}

export function parseOrigin(text: string | undefined): ManifestRef | undefined {
  if (text === undefined) return undefined;
  const at = text.lastIndexOf(':');
  return { lineage: text.slice(0, at), version: Number(text.slice(at + 1)) };
}

/** The publication that put `run` where it is, when it was recorded. */
export function originOf(run: RunRef): ManifestRef | undefined {
  return parseOrigin(run.origin);
}

/**
 * For each index k of `runs`, the least `at(run)` over the runs after k (`none` after the last).
 * Both soundness tests below are "every run after this one is placed after that one", so one
 * suffix minimum answers each in constant time and a publication stays linear in its runs.
 */
function minAfter(runs: readonly RunRef[], at: (r: RunRef) => number, none: number): number[] {
  const out = new Array<number>(runs.length);
  let least = none;
  for (let k = runs.length - 1; k >= 0; k--) {
    out[k] = least;
    least = Math.min(least, at(runs[k] as RunRef));
  }
  return out;
}

/**
 * `entry` as published by `origin` over `parent` (the same table in the first parent's manifest):
 * each run with its sound origin, and `replacedAt` carried or set. `compaction` says the
 * publication compacts (a compaction, or a write that folded its table's newest runs), so the
 * compacted runs it names first are its own.
 */
export function stampOrigins(
  entry: TableEntry,
  parent: TableEntry | undefined,
  at: { origin: ManifestRef; compaction: boolean },
): TableEntry {
  const text = originText(at.origin);
  const held = new Map((parent?.runs ?? []).map((r, j) => [r.key, j]));
  // The newest run this compaction wrote: runs older than it may have lost newer runs to it. A merge
  // adopting a side's compacted runs compacted nothing.
  let compacted = -1;
  entry.runs.forEach((r, i) => {
    if (at.compaction && r.compacted === true && !held.has(r.key)) compacted = i;
  });
  const position = new Map(entry.runs.map((r, i) => [r.key, i]));
  const older = parent?.runs ?? [];
  const lost = older.some((r) => !position.has(r.key));
  // keepsNewer: every run newer than the parent's run j is still newer than the entry's run i (a run gone counts as -1).
  const newerHere = minAfter(older, (p) => position.get(p.key) ?? -1, Number.POSITIVE_INFINITY);
  // promotesNone: no run the parent held older than its run j sits newer than the entry's run i (a side's table, reordered).
  const newerThere = minAfter(entry.runs, (q) => held.get(q.key) ?? Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);
  const runs = entry.runs.map((r, i) => {
    const { origin: _stale, ...bare } = r;
    const j = held.get(r.key);
    // Carried soundly: the same runs above it, save what this compaction folded into a run above it.
    const sound = j !== undefined && (newerThere[i] as number) > j && ((newerHere[j] as number) > i || compacted > i);
    const origin = sound ? older[j]?.origin : text;
    // An unchanged ref stays the same object: later publications (and run-list parts) recognize it cheaply.
    if (r.origin === origin) return r;
    return origin === undefined ? bare : { ...bare, origin };
  });
  const extended = parent !== undefined && (!lost || compacted >= 0);
  const replacedAt = extended ? parent.replacedAt : text;
  const { replacedAt: _old, ...rest } = entry;
  return { ...rest, runs, ...(replacedAt !== undefined ? { replacedAt } : {}) };
}
