/**
 * Comparing two table versions key by key when they share no runs to take a delta from: a
 * streaming comparison of their merged rows, content hashes deciding equality.
 *
 * Pure: run bytes arrive through a `LoadRun` function.
 */
import type { RunRow } from './run.js';
import { compareKey } from './run.js';
import type { LoadRun, TableVersion } from './table-version.js';
import { mergeRuns } from './merge-walk.js';
import { alignForDelta, deltaRuns } from './table-delta.js';
import { lookupStates, newestRows } from './table-lookup.js';

export interface KeyChange {
  key: string;
  before: RunRow | undefined;
  after: RunRow | undefined;
}

/**
 * Keys whose live state differs between `a` and `b`, in key order, by a full
 * streaming comparison (content hashes decide equality). Used when sharing
 * between the versions is lost.
 */
export async function* compareVersions(a: TableVersion, b: TableVersion, load: LoadRun): AsyncGenerator<KeyChange> {
  const ia = mergeRuns({ runs: a.runs, load })[Symbol.asyncIterator]();
  const ib = mergeRuns({ runs: b.runs, load })[Symbol.asyncIterator]();
  let ra = await ia.next();
  let rb = await ib.next();
  while (ra.done !== true || rb.done !== true) {
    const c = ra.done === true ? 1 : rb.done === true ? -1 : compareKey(ra.value.key, rb.value.key);
    if (c < 0 && ra.done !== true) {
      yield { key: ra.value.key, before: ra.value, after: undefined };
      ra = await ia.next();
    } else if (c > 0 && rb.done !== true) {
      yield { key: rb.value.key, before: undefined, after: rb.value };
      rb = await ib.next();
    } else if (ra.done !== true && rb.done !== true) {
      if (ra.value.hash !== rb.value.hash) yield { key: ra.value.key, before: ra.value, after: rb.value };
      ra = await ia.next();
      rb = await ib.next();
    }
  }
}

/**
 * Keys whose state may differ between `base` and `v`, with their state in
 * `v` (undefined when absent). Uses the delta runs when sharing holds,
 * otherwise a full comparison; either way the result is exact about `v`'s
 * state but may include keys whose state did not really change.
 */
export async function changedStates(base: TableVersion, v: TableVersion, load: LoadRun): Promise<Map<string, RunRow | undefined>> {
  const out = new Map<string, RunRow | undefined>();
  // Across a compaction, the runs it replaced give the delta back.
  const aligned = (await alignForDelta(base, v, load)) ?? v;
  const delta = deltaRuns(base, aligned);
  if (delta !== undefined) {
    if (delta.length === 0) return out;
    const rows = await newestRows(delta, load);
    // When the base's runs all come first, the newest delta row is the state.
    if (base.runs.every((r, i) => aligned.runs[i]?.key === r.key)) {
      for (const r of rows) out.set(r.key, r);
      return out;
    }
    // Otherwise a base run may sit after a delta run and shadow it: resolve each key, in the
    // aligned version (it reads as `v` does, and its newest runs are the small delta runs,
    // where `v` may hold one compacted run as large as the table).
    const states = await lookupStates(
      aligned,
      rows.map((r) => r.key),
      load,
    );
    for (const r of rows) out.set(r.key, states.get(r.key));
    return out;
  }
  for await (const ch of compareVersions(base, v, load)) out.set(ch.key, ch.after);
  return out;
}
