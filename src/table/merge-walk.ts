/**
 * The k-way merge walk over a version's runs: rows (or spans of rows) in key order, the newest run
 * winning per key, each segmented run one source walked segment by segment, with read-ahead sized
 * to what the walk will reach.
 *
 * Pure: run bytes arrive through a `LoadRun` function.
 */
import type { RunData, RunRef, RunRow } from './run.js';
import { compareKey, runEndsBefore } from './run.js';
import { type LoadRun } from './table-version.js';
import { early, READ_AHEAD_BYTES, READ_AHEAD_RUN_BYTES } from './read-ahead.js';

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
/** A run of a few writes' rows: below the size-tiered policy's lowest tiers. */
const TINY_RUN_ROWS = 64;
const isTiny = (src: Source): boolean => src.parts.length === 1 && (src.parts[0] as RunRef).rows <= TINY_RUN_ROWS;
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
