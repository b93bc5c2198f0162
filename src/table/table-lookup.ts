/**
 * Point lookups in a table version: the newest state of given keys, reading only the runs whose
 * key range may hold one of them, with read-ahead of the small runs and segments a batch will need.
 *
 * Pure: run bytes arrive through a `LoadRun` function.
 */
import { BranchgraphError } from '../model/errors.js';
import type { RunData, RunRef, RunRow } from './run.js';
import { compareKey, rangeMayHold, runEndsBefore } from './run.js';
import type { LoadRun, TableVersion } from './table-version.js';
import { firstIndex, mergeRuns } from './merge-walk.js';
import { early, READ_AHEAD_BYTES, READ_AHEAD_RUN_BYTES } from './read-ahead.js';
import { sortInTurns } from '../model/sort-in-turns.js';
import { Slice } from '../model/turns.js';

/**
 * The state of each key in `v`: its newest row (tombstones included), or
 * absent from the map, in key order. Runs whose key range excludes every
 * wanted key are never loaded.
 */
export async function lookupStates(v: TableVersion, keys: Iterable<string>, base: LoadRun): Promise<Map<string, RunRow>> {
  // An empty table holds none of them: a load into a new table does not sort its keys to learn that.
  if (v.runs.length === 0) return new Map();
  // A large batch's keys (a load's) are gathered, sorted, and their rows decoded, with turns of the loop between slices.
  const slice = new Slice();
  const distinct = new Set<string>();
  for (const k of keys) {
    if ((distinct.size & 1023) === 0 && slice.due()) await slice.turn();
    distinct.add(k);
  }
  const sorted = await sortInTurns([...distinct], compareKey);
  const at = await lookupEntries(v, sorted, base);
  const out = new Map<string, RunRow>();
  for (let i = 0; i < sorted.length; i++) {
    if ((i & 1023) === 0 && slice.due()) await slice.turn();
    const data = at.data[i];
    if (data !== undefined) out.set(sorted[i] as string, data.rowAt(at.pos[i] as number));
  }
  return out;
}

/**
 * Where each of `keys` (sorted, distinct) has its newest entry in `v`, tombstones included: the
 * decoded run and the position in it, aligned with `keys`, or no run where no run holds the key.
 * For callers that decode each row just before they use it: rows decoded for a whole batch would
 * all outlive young collections, and V8 would then allocate every row decoded anywhere straight
 * into the old generation.
 */
export async function lookupEntries(
  v: TableVersion,
  keys: readonly string[],
  base: LoadRun,
): Promise<{ data: (RunData | undefined)[]; pos: number[] }> {
  for (let i = 1; i < keys.length; i++)
    if (compareKey(keys[i - 1] as string, keys[i] as string) >= 0)
      throw new BranchgraphError('internal', 'lookupEntries takes sorted, distinct keys');
  const data = new Array<RunData | undefined>(keys.length);
  const pos = new Array<number>(keys.length).fill(-1);
  // The keys not found yet, and where each sits in `keys`.
  let pending: readonly string[] = keys;
  let at: readonly number[] = keys.map((_, i) => i);
  const load = readAhead(v, pending, base);
  for (let r = v.runs.length - 1; r >= 0 && pending.length > 0; r--) {
    const run = v.runs[r] as RunRef;
    if (candidates(run, pending).length === 0) continue;
    let found = 0;
    // Probes come in key order, so one found in a run's data is after the last found there.
    let last: RunData | undefined;
    let lastPos = 0;
    await visitHolders({
      parts: run.segmented ? await load.segments(run) : [run],
      probes: pending,
      load,
      mayHold: rangeMayHold,
      visit: (k, d, j) => {
        const p = d.find(k, d === last ? lastPos + 1 : 0);
        if (p < 0) return false;
        last = d;
        lastPos = p;
        const i = at[j] as number;
        data[i] = d;
        pos[i] = p;
        found++;
        return true;
      },
    });
    if (found > 0) {
      at = at.filter((i) => data[i] === undefined);
      pending = at.map((i) => keys[i] as string);
    }
  }
  return { data, pos };
}

/**
 * `load`, with the small runs a lookup of `keys` may need already being read, and the segment
 * lists of the segmented ones. A lookup visits runs newest first and stops at the first that holds
 * a key, so without this each candidate run costs a round trip after the one before: a branch
 * forked many times, each fork with a small write, answers a point read of an old row only after
 * a round trip per fork. Small runs (a few writes' rows) are read at once instead, at the price
 * of reading one the lookup turns out not to need, bounded by READ_AHEAD_BYTES; big runs are
 * still read only when reached.
 */
function readAhead(v: TableVersion, keys: readonly string[], load: LoadRun): LoadRun {
  const wanted = v.runs.filter((r) => candidates(r, keys).length > 0);
  if (wanted.length < 2) return load;
  const ahead = new Map<string, Promise<RunData>>();
  const lists = new Map<string, Promise<RunRef[]>>();
  let budget = READ_AHEAD_BYTES;
  for (let i = wanted.length - 1; i >= 0; i--) {
    const run = wanted[i] as RunRef;
    if (run.segmented === true) lists.set(run.key, early(load.segments(run)));
    else if (run.bytes <= Math.min(READ_AHEAD_RUN_BYTES, budget)) {
      budget -= run.bytes;
      ahead.set(run.key, early(load(run)));
    }
  }
  if (ahead.size + lists.size === 0) return load;
  return Object.assign((ref: RunRef) => ahead.get(ref.key) ?? load(ref), load, {
    segments: (ref: RunRef) => lists.get(ref.key) ?? load.segments(ref),
  });
}

/** The newest state of `key` in `v` (a tombstone included) and the run that holds it, or undefined. */
export async function locateState(v: TableVersion, key: string, load: LoadRun): Promise<{ state: RunRow; run: RunRef } | undefined> {
  for (let i = v.runs.length - 1; i >= 0; i--) {
    const run = v.runs[i] as RunRef;
    const state = (await lookupStates({ runs: [run] }, [key], load)).get(key);
    if (state !== undefined) return { state, run };
  }
  return undefined;
}

/**
 * Each of sorted `probes` (keys or key prefixes) in the segments of one run that may hold it, in
 * order, each segment loaded once. Segments are disjoint and sorted, and so are the probes: each
 * probe's first segment is a binary search past the previous probe's, so a batch costs its
 * probes' searches and the segments they land in, never a walk over the segments between them.
 * A probe goes on to the next segment while that one may hold it too (a prefix's keys can run on;
 * segments whose keys were cut to a recorded prefix can share one at their boundary), until
 * `visit` says it is done with it.
 */
export async function visitHolders(a: {
  parts: readonly RunRef[];
  probes: readonly string[];
  load: LoadRun;
  mayHold: (segment: RunRef, probe: string) => boolean;
  /** `index` is the probe's position in `probes`. */
  visit: (probe: string, data: RunData, index: number) => boolean | undefined;
}): Promise<void> {
  const { parts, load, mayHold, visit } = a;
  // The parts the probes may need are known before any is read: each is read a few parts ahead of
  // the visit that needs it, so a batch spread over many segments waits about one round trip per
  // LOOKUP_PARTS_AHEAD segments rather than one per segment.
  const needed = partsNeeded(a);
  const rank = new Map(needed.map((t, r) => [t, r]));
  const reads = new Map<number, Promise<RunData>>();
  let started = 0;
  const read = (t: number): Promise<RunData> => {
    const r = rank.get(t) ?? started;
    for (; started < needed.length && started <= r + LOOKUP_PARTS_AHEAD; started++) {
      const u = needed[started] as number;
      reads.set(u, early(load(parts[u] as RunRef)));
    }
    return reads.get(t) ?? load(parts[t] as RunRef);
  };
  const loaded = new Map<number, RunData>();
  let s = 0;
  const slice = new Slice();
  for (let i = 0; i < a.probes.length; i++) {
    if ((i & 1023) === 0 && slice.due()) await slice.turn();
    const p = a.probes[i] as string;
    s = firstFrom(parts, s, p);
    if (s === parts.length) break;
    for (let t = s; t < parts.length && mayHold(parts[t] as RunRef, p); t++) {
      let data = loaded.get(t);
      if (data === undefined) {
        data = await read(t);
        loaded.set(t, data);
      }
      if (visit(p, data, i) === true) break;
    }
  }
}

/** Segments a lookup reads ahead of the one it visits. */
const LOOKUP_PARTS_AHEAD = 8;

/** The first part from `s` on that does not end before `probe`: a dense batch's next probe is most often in the same part, so only past it is searched. */
function firstFrom(parts: readonly RunRef[], s: number, probe: string): number {
  if (s >= parts.length || !runEndsBefore(parts[s] as RunRef, probe, true)) return s;
  const from = s + 1;
  return from + firstIndex(parts.length - from, (i) => !runEndsBefore(parts[from + i] as RunRef, probe, true));
}

/** Every part `visitHolders` may visit for its probes, ascending (each probe's are a contiguous stretch). */
function partsNeeded(a: {
  parts: readonly RunRef[];
  probes: readonly string[];
  mayHold: (segment: RunRef, probe: string) => boolean;
}): number[] {
  const { parts, mayHold } = a;
  const out: number[] = [];
  let s = 0;
  for (const p of a.probes) {
    s = firstFrom(parts, s, p);
    if (s === parts.length) break;
    for (let t = s; t < parts.length && mayHold(parts[t] as RunRef, p); t++)
      if (out.length === 0 || t > (out.at(-1) as number)) out.push(t);
  }
  return out;
}

/** The stretch of sorted `keys` a run's recorded range may hold. */
function candidates(ref: RunRef, keys: readonly string[]): readonly string[] {
  if (ref.rows === 0) return [];
  // First key not below the least key; first key past the greatest (both monotone over sorted keys).
  const lo = firstWhere(keys, (k) => compareKey(ref.minKey, k) <= 0);
  const hi = firstWhere(keys, (k) => runEndsBefore(ref, k, true));
  return lo < hi ? keys.slice(lo, hi) : [];
}

function firstWhere(keys: readonly string[], pred: (k: string) => boolean): number {
  return firstIndex(keys.length, (i) => pred(keys[i] as string));
}

/** Live rows (no tombstones) for `keys`. */
export async function lookupRows(v: TableVersion, keys: Iterable<string>, load: LoadRun): Promise<Map<string, RunRow>> {
  const states = await lookupStates(v, keys, load);
  for (const [k, r] of states) if (r.tomb) states.delete(k);
  return states;
}

/**
 * Every key's newest row among `runs` (later runs win), tombstones included,
 * sorted by key. This is the content of a delta.
 */
export async function newestRows(runs: readonly RunRef[], load: LoadRun): Promise<RunRow[]> {
  const out: RunRow[] = [];
  for await (const r of mergeRuns({ runs, load, withTombstones: true })) out.push(r);
  return out;
}
