/**
 * Table versions: an ordered list of runs, oldest first; the newest run that
 * holds a key decides its state (a row or a tombstone).
 *
 * Deltas. Runs are immutable and shared between versions, so the difference
 * between a version B and a later version V is usually visible from run keys
 * alone: when B's runs appear in V in the same relative order (B is a
 * subsequence of V), a key can differ between B and V only if a run of V
 * that B lacks holds it. Those added runs are the delta, and nothing else
 * needs reading. When sharing is lost (compaction, reordering), `deltaRuns`
 * returns undefined and callers fall back to a full sorted comparison.
 *
 * Everything here is pure: run bytes arrive through a `LoadRun` function.
 */
import { BranchgraphError } from '../model/errors.js';
import type { RunData, RunRef, RunRow } from './run.js';
import { COMPACT_RUN_ROWS, compareKey, rangeMayHold, runEndsBefore } from './run.js';

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

/**
 * The state of each key in `v`: its newest row (tombstones included), or
 * absent from the map, in key order. Runs whose key range excludes every
 * wanted key are never loaded.
 */
export async function lookupStates(v: TableVersion, keys: Iterable<string>, base: LoadRun): Promise<Map<string, RunRow>> {
  const sorted = [...new Set(keys)].sort(compareKey);
  const at = await lookupEntries(v, sorted, base);
  const out = new Map<string, RunRow>();
  for (let i = 0; i < sorted.length; i++) {
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

/** Runs at most this big are read ahead when a lookup may need several runs. */
export const READ_AHEAD_RUN_BYTES = 64 * 1024;
/** The most bytes one lookup reads ahead. */
const READ_AHEAD_BYTES = 1024 * 1024;

/** A read started ahead of its use: awaited again where it is used, which is where a failure surfaces. */
function early<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
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
  for (let i = 0; i < a.probes.length; i++) {
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

/**
 * A k-way merge of runs in key order; the newest run wins per key.
 * Tombstones are skipped unless `withTombstones`. A segmented run is one
 * source that walks its segments in order (they are disjoint and sorted), so
 * the merge's width is the number of runs, not of segments; a segment is
 * loaded only when the merge reaches its first key and dropped once passed,
 * so a scan holds about one segment per run in memory.
 */
export async function* mergeRuns(a: MergeArgs & { withTombstones?: boolean | undefined }): AsyncGenerator<RunRow> {
  const withTombstones = a.withTombstones === true;
  for await (const batch of mergeSpans(a))
    for (const { data, from, to } of batch) for (let i = from; i < to; i++) if (withTombstones || !data.tombs[i]) yield data.rowAt(i);
}

export interface MergeArgs {
  runs: readonly RunRef[];
  load: LoadRun;
  /** Only keys after this one. */
  startAfter?: string | undefined;
  /**
   * `readAhead` (for walks that will read the whole of their runs) loads each run's next segment
   * while the current one is merged, and keeps what it reads out of the run cache (`uncached`);
   * short scans leave it off, as it costs them a read.
   */
  opts?:
    | {
        readAhead?: boolean;
        /**
         * How many rows the caller expects to take (a page's size and one more): the runs that can
         * hold them are read at once (see `readPageAhead`). Filters that skip rows make it a floor.
         */
        pageRows?: number | undefined;
      }
    | undefined;
}

/**
 * A stretch of one decoded segment that the merge passes whole: each position from `from` to
 * `to - 1` is its key's newest entry (a row or a tombstone).
 */
export interface MergeSpan {
  data: RunData;
  from: number;
  to: number;
}

/** Positions a merge batches before it hands them on (a batch also ends before each load). */
const SPAN_BATCH = 1024;

/**
 * The k-way merge itself, as batches of spans: a caller walks each span with a plain loop, so a
 * scan costs one await per batch rather than one per row. A single run (a compacted table, or
 * the one run a range reaches) is passed a segment at a time with no per-key comparison. Every
 * key of a batch sorts after every key of the batches before it.
 */
export async function* mergeSpans(a: MergeArgs): AsyncGenerator<MergeSpan[]> {
  const sources = await openSources(a);
  // A walk through whole runs reads its small runs at once; any other walk, once it has passed a
  // whole segment of some run (a long walk, not a page).
  let long = false;
  const goLong = (): void => {
    if (!long) readSmallAhead(sources, a.load);
    long = true;
  };
  if (a.opts?.readAhead === true) goLong();
  else if (a.opts?.pageRows !== undefined && sources.length > 1) readPageAhead(sources, a.opts.pageRows, a.load);
  const fill = segmentFiller(a, { sources: sources.length, onLongWalk: goLong });
  if (sources.length === 1) {
    yield* wholeSegments(sources[0] as Source, fill);
    return;
  }
  const advance = (src: Source): void => {
    src.pos++;
    if (src.pos < (src.data as RunData).length) return;
    src.data = null;
    src.at++;
  };
  let batch: MergeSpan[] = [];
  let held = 0;
  let last: MergeSpan | undefined;
  for (;;) {
    const min = nextKey(sources);
    if (min === undefined) break;
    // Load every unloaded source whose next segment starts at or before the smallest key.
    const due = (src: Source): boolean =>
      src.at < src.parts.length && src.data === null && compareKey((src.parts[src.at] as RunRef).minKey, min as string) <= 0;
    if (sources.some(due)) {
      const toLoad = sources.filter(due);
      // What is merged so far goes out first: a caller that stops early never waits on this load.
      if (batch.length > 0) yield batch;
      batch = [];
      held = 0;
      last = undefined;
      // Reaching one of many one-row runs compaction has not gathered yet: read the rest at once.
      if (toLoad.some(isTiny) && sources.filter(isTinyUnread).length > TINY_RUNS_ONE_BY_ONE) goLong();
      await Promise.all(toLoad.map(fill));
      continue;
    }
    let winner: Source | undefined;
    for (const src of sources) {
      if (src.data === null || src.data.keys[src.pos] !== min) continue;
      if (winner === undefined || src.rank > winner.rank) winner = src;
    }
    const w = winner as Source;
    if (last !== undefined && last.data === w.data && last.to === w.pos) last.to++;
    else {
      last = { data: w.data as RunData, from: w.pos, to: w.pos + 1 };
      batch.push(last);
    }
    for (const src of sources) if (src.data !== null && src.data.keys[src.pos] === min) advance(src);
    held += 1 + extendSpan(sources, w, last);
    if (held >= SPAN_BATCH) {
      yield batch;
      batch = [];
      held = 0;
      last = undefined;
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The winner's next keys that sort before every other source's next key need no comparing among
 * sources: they join its span at once (found by bisection). Runs whose key ranges do not overlap
 * (a table written in key order, or tiers that compaction has not merged yet) then cost what one
 * run does. Returns how many positions joined.
 */
function extendSpan(sources: readonly Source[], w: Source, span: MergeSpan): number {
  const data = w.data;
  if (data === null || span.data !== data || span.to !== w.pos) return 0;
  const from = w.pos;
  const bound = nextKey(sources, w);
  const end =
    bound === undefined ? data.length : from + firstIndex(data.length - from, (i) => compareKey(data.keys[from + i] as string, bound) >= 0);
  span.to = end;
  w.pos = end;
  if (end >= data.length) {
    w.data = null;
    w.at++;
  }
  return end - from;
}

/** The least next key of the sources (an unloaded segment's least key), but `except`'s; undefined when none is left. */
function nextKey(sources: readonly Source[], except?: Source): string | undefined {
  let min: string | undefined;
  for (const src of sources) {
    if (src === except || src.at >= src.parts.length) continue;
    const k = src.data === null ? (src.parts[src.at] as RunRef).minKey : (src.data.keys[src.pos] as string);
    if (min === undefined || compareKey(k, min) < 0) min = k;
  }
  return min;
}

/** A single source's segments, each passed whole from where the merge starts in it. */
async function* wholeSegments(only: Source, fill: (src: Source) => Promise<void>): AsyncGenerator<MergeSpan[]> {
  while (only.at < only.parts.length) {
    await fill(only);
    if (only.data === null) continue;
    const span = { data: only.data, from: only.pos, to: only.data.length };
    only.data = null;
    only.at++;
    yield [span];
  }
}

/**
 * A long walk starts reading every small run it will merge at once. The merge loads
 * a run only when its least key comes up, so a table that gathered many small runs with
 * interleaved key ranges (one per merged branch, say) would otherwise cost a round trip per run,
 * one after another. Bounded like a lookup's read-ahead (READ_AHEAD_BYTES); small runs stay cached,
 * since the next merge into the same table reads them again.
 */
function readSmallAhead(sources: Source[], load: LoadRun): void {
  const wholeRuns = sources.filter((src) => src.parts.length === 1);
  readFirstsAhead(
    wholeRuns.map((src) => ({ src, part: src.parts[src.at] as RunRef })),
    { load, maxPart: READ_AHEAD_RUN_BYTES },
  );
}

/** Sources nothing was read or asked for from yet. */
const untouched = (src: Source): boolean => src.filled === 0 && src.ahead.length === 0;

/** Asks at once for the first segment of each untouched source given, within READ_AHEAD_BYTES and `maxPart` bytes a segment. */
function readFirstsAhead(firsts: readonly { src: Source; part: RunRef }[], o: { load: LoadRun; maxPart?: number }): void {
  let budget = READ_AHEAD_BYTES;
  for (const { src, part } of firsts) {
    if (!untouched(src) || part.bytes > Math.min(o.maxPart ?? Number.POSITIVE_INFINITY, budget)) continue;
    budget -= part.bytes;
    src.ahead.push(early(o.load(part).then((d) => () => d)));
  }
}

/**
 * A page of `rows` keys reads at once every run that can hold one of them. Taken in order of their
 * least keys, the first runs that hold `rows` rows between them reach to the last one's greatest
 * key, and every run starting at or before that key may hold part of the page (all of them when
 * the ranges interleave). Without this, runs whose ranges follow one another (tiers compaction has
 * not merged yet, in a table written in key order) were read one after another as the walk reached
 * each: a round trip each. Bounded by READ_AHEAD_BYTES like every read-ahead; what is read stays
 * cached, as the runs a page reads are usually read by the next page too.
 */
function readPageAhead(sources: Source[], rows: number, load: LoadRun): void {
  const firsts = sources
    .map((src) => ({ src, part: src.parts[src.at] as RunRef }))
    .sort((x, y) => compareKey(x.part.minKey, y.part.minKey));
  let held = 0;
  let reach: string | undefined;
  for (const { part } of firsts) {
    held += part.rows;
    if (held >= rows) {
      reach = part.maxKey;
      break;
    }
  }
  const reached = reach === undefined ? firsts : firsts.filter(({ part }) => compareKey(part.minKey, reach) <= 0);
  readFirstsAhead(reached, { load });
}

/**
 * How many runs of a few rows (one write's each) a walk reads one by one, as its keys come up.
 * Settled, size-tiered compaction leaves fewer than nine (three per tier below 64 rows); while it
 * runs behind a stream of one-row writes there are tens, and a walk that met each in turn
 * waited a round trip per run: past this many, a walk that reaches one reads the rest at once.
 * Not before it reaches one: a page that ends below them (they hold the newest keys of a table
 * written in key order) reads none of them.
 */
const TINY_RUNS_ONE_BY_ONE = 8;
const isTiny = (src: Source): boolean => src.parts.length === 1 && (src.parts[0] as RunRef).rows <= COMPACT_RUN_ROWS;
const isTinyUnread = (src: Source): boolean => isTiny(src) && untouched(src);

/** The most segments of one run a walk reads ahead of where it is. */
const MAX_SEGMENTS_AHEAD = 8;
/** The most segments a walk of several runs reads ahead across them, once windows grow past one each. */
const MAX_WALK_AHEAD = 16;

/**
 * How many segments a source reads ahead after its `filled`-th: a walk that set out to read whole
 * runs always reads the next; any other walk reads none until it has passed a whole segment (a
 * page usually ends inside its first), then doubles the window per segment up to
 * MAX_SEGMENTS_AHEAD, so a long scan of a run of n segments waits about log(n) + n/8 round trips
 * instead of n, and a short one reads nothing it does not use. A walk of many runs shares
 * MAX_WALK_AHEAD among them, so what it holds in memory stays bounded whatever its width.
 */
function segmentsAhead(filled: number, o: { readAhead: boolean; sources: number }): number {
  const grown = filled >= 2 ? Math.min(MAX_SEGMENTS_AHEAD, 2 ** (filled - 2), Math.floor(MAX_WALK_AHEAD / o.sources)) : 0;
  return Math.max(o.readAhead ? 1 : 0, grown);
}

/** Loads a source's next segment and places it after `startAfter`, reading the ones after it ahead (see `segmentsAhead`). */
function segmentFiller(a: MergeArgs, walk: { sources: number; onLongWalk: () => void }): (src: Source) => Promise<void> {
  const { load, startAfter, opts = {} } = a;
  // A walk through whole runs reads each segment once, so it does not fill the run cache with
  // them; small runs (see readSmallAhead) are the exception.
  const uncached = load.uncached ?? load;
  const cached = (ref: RunRef): boolean => opts.readAhead !== true || ref.bytes <= READ_AHEAD_RUN_BYTES;
  const fetch = (ref: RunRef): Promise<RunData> => (cached(ref) ? load(ref) : uncached(ref));
  const ahead = (ref: RunRef): Promise<() => RunData> =>
    cached(ref) || load.raw === undefined ? fetch(ref).then((d) => () => d) : load.raw(ref);
  return async (src: Source): Promise<void> => {
    const next = src.ahead.shift();
    const data = next === undefined ? await fetch(src.parts[src.at] as RunRef) : (await next)();
    src.filled++;
    if (src.filled === 2) walk.onLongWalk();
    // A long walk reads the next segments while this one is merged, so it rarely waits on the store.
    const window = segmentsAhead(src.filled, { readAhead: opts.readAhead === true, sources: walk.sources });
    for (let i = src.ahead.length; i < window && src.at + 1 + i < src.parts.length; i++)
      src.ahead.push(early(ahead(src.parts[src.at + 1 + i] as RunRef)));
    src.data = data;
    src.pos = startAfter === undefined ? 0 : data.upperBound(startAfter);
    if (src.pos >= data.length) {
      src.data = null;
      src.at++;
    }
  };
}

/** The runs of a merge as sources (a higher `rank` is a newer run), each from its first segment that may hold a key after `startAfter`. */
async function openSources(a: MergeArgs): Promise<Source[]> {
  const { runs, load, startAfter } = a;
  const sources: Source[] = [];
  const wanted = [...runs.entries()].filter(
    ([, run]) => run.rows > 0 && (startAfter === undefined || !runEndsBefore(run, startAfter, false)),
  );
  // Segmented runs' indexes are read together: a table with several such runs waits one round trip, not one each.
  const segments = await Promise.all(wanted.map(([, run]) => (run.segmented ? load.segments(run) : [run])));
  for (const [at, [rank]] of wanted.entries()) {
    const all = segments[at] as RunRef[];
    // Segments are disjoint and sorted: the first that reaches past `startAfter` is found by bisection.
    const first = startAfter === undefined ? 0 : firstIndex(all.length, (i) => !runEndsBefore(all[i] as RunRef, startAfter, false));
    const parts = all.slice(first).filter((ref) => ref.rows > 0);
    if (parts.length > 0) sources.push({ parts, at: 0, rank, data: null, pos: 0, ahead: [], filled: 0 });
  }
  return sources;
}

/** The least index in 0..n for which `pred` holds (false then true over the range). */
export function firstIndex(n: number, pred: (i: number) => boolean): number {
  let lo = 0;
  let hi = n;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pred(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/** One run in a k-way merge: its segments, the one being read, and the position in it. */
interface Source {
  parts: RunRef[];
  /** Reads of the segments from `at` on, started ahead of the walk; each decodes when called. */
  ahead: Promise<() => RunData>[];
  /** Segments loaded so far. */
  filled: number;
  at: number;
  rank: number;
  data: RunData | null;
  pos: number;
}

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

/** Total rows and bytes of a version, from run stats alone. */
export function versionStats(v: TableVersion): { runs: number; rows: number; bytes: number } {
  return v.runs.reduce((acc, r) => ({ runs: acc.runs + 1, rows: acc.rows + r.rows, bytes: acc.bytes + r.bytes }), {
    runs: 0,
    rows: 0,
    bytes: 0,
  });
}

/** Live rows whose key starts with `prefix`, in key order. */
export async function* scanPrefix(v: TableVersion, load: LoadRun, prefix: string): AsyncGenerator<RunRow> {
  for await (const batch of prefixSpans(v, load, prefix))
    for (const { data, from, to } of batch) for (let i = from; i < to; i++) if (!data.tombs[i]) yield data.rowAt(i);
}

/** Live rows whose key starts with `prefix`, in key order, in one array (a batch reader's form of `scanPrefix`). */
export async function prefixRows(v: TableVersion, load: LoadRun, prefix: string): Promise<RunRow[]> {
  return (await prefixRowsMany({ v, load, prefixes: [prefix] })).get(prefix) ?? [];
}

/**
 * The live rows under each of many prefixes (an edge table's edges of many nodes), in key order
 * per prefix, at most `limit` each. One pass per run over the prefixes in sorted order: each
 * segment is bisected to, loaded once however many prefixes fall in it, and walked from the
 * prefix's first key; the runs' entries are then merged per prefix, the newest run winning. So a
 * batch of nodes costs a load per segment touched and a binary search per node, not a merge per
 * node. With one run the walk stops after `limit` rows (with more, a newer tombstone may
 * hide one of them, so each run gives all its entries).
 */
export async function prefixRowsMany(a: {
  v: TableVersion;
  load: LoadRun;
  prefixes: readonly string[];
  limit?: number | undefined;
}): Promise<Map<string, RunRow[]>> {
  const { v, load, limit = Number.POSITIVE_INFINITY } = a;
  const prefixes = [...new Set(a.prefixes)].sort(compareKey);
  const runs = v.runs.filter((r) => r.rows > 0);
  const perRun: Map<string, RunRow[]>[] = [];
  for (const run of runs) perRun.push(await runPrefixEntries({ run, load, prefixes, limit: runs.length === 1 ? limit : undefined }));
  const out = new Map<string, RunRow[]>();
  for (const prefix of prefixes) {
    const lists = perRun.map((m) => m.get(prefix) ?? []);
    let rows: RunRow[];
    if (lists.length === 1) rows = (lists[0] as RunRow[]).filter((r) => !r.tomb);
    else {
      // Later runs are newer: their entry for a key replaces an older one.
      const byKey = new Map<string, RunRow>();
      for (const list of lists) for (const r of list) byKey.set(r.key, r);
      rows = [...byKey.values()].filter((r) => !r.tomb).sort((x, y) => compareKey(x.key, y.key));
    }
    out.set(prefix, rows.length > limit ? rows.slice(0, limit) : rows);
  }
  return out;
}

/** One run's entries (tombstones too) under each sorted prefix, at most `limit` live ones each. */
async function runPrefixEntries(a: {
  run: RunRef;
  load: LoadRun;
  prefixes: readonly string[];
  limit: number | undefined;
}): Promise<Map<string, RunRow[]>> {
  const { run, load, prefixes, limit = Number.POSITIVE_INFINITY } = a;
  const out = new Map<string, RunRow[]>();
  const holds = (r: RunRef, prefix: string): boolean =>
    !runEndsBefore(r, prefix, true) && compareKey(r.minKey.slice(0, prefix.length), prefix) <= 0;
  const wanted = prefixes.filter((p) => holds(run, p));
  if (wanted.length === 0) return out;
  const parts = run.segmented ? await load.segments(run) : [run];
  const loaded = new Map<number, RunData>();
  const dataAt = async (n: number): Promise<RunData> => {
    let d = loaded.get(n);
    if (d === undefined) {
      d = await load(parts[n] as RunRef);
      loaded.set(n, d);
    }
    return d;
  };
  for (const prefix of wanted) {
    const rows: RunRow[] = [];
    let live = 0;
    // The first segment that reaches the prefix; the prefix's keys may run on into the next ones.
    let n = firstIndex(parts.length, (i) => !runEndsBefore(parts[i] as RunRef, prefix, true));
    walk: for (; n < parts.length && holds(parts[n] as RunRef, prefix); n++) {
      const data = loaded.get(n) ?? (await dataAt(n));
      for (let i = data.lowerBound(prefix); i < data.length; i++) {
        if (!(data.keys[i] as string).startsWith(prefix) || live >= limit) break walk;
        const row = data.rowAt(i);
        if (!row.tomb) live++;
        rows.push(row);
      }
    }
    if (rows.length > 0) out.set(prefix, rows);
  }
  return out;
}

/** The merge's spans cut to the keys that start with `prefix`; the walk stops at the first key past them. */
async function* prefixSpans(v: TableVersion, load: LoadRun, prefix: string): AsyncGenerator<MergeSpan[]> {
  // Every key with the prefix sorts after the prefix minus its last character.
  const runs = v.runs.filter((r) => !runEndsBefore(r, prefix, true) && compareKey(r.minKey.slice(0, prefix.length), prefix) <= 0);
  for await (const batch of mergeSpans({ runs, load, startAfter: prefix.slice(0, -1) })) {
    const cut: MergeSpan[] = [];
    for (const span of batch) {
      const { data, from, to } = span;
      let i = from;
      // Keys before the prefix (between the prefix minus its last character and the prefix) are passed over.
      while (i < to && compareKey(data.keys[i] as string, prefix) < 0) i++;
      let j = i;
      while (j < to && (data.keys[j] as string).startsWith(prefix)) j++;
      if (j > i) cut.push({ data, from: i, to: j });
      if (j < to) {
        if (cut.length > 0) yield cut;
        return;
      }
    }
    if (cut.length > 0) yield cut;
  }
}
