/**
 * A k-way merge of sorted sources that keeps every item: the external sort
 * of a bulk load (graph/streaming-load.ts) merges its sorted chunks with it.
 * Unlike the run merge (merge-walk.ts), which keeps each key's newest row,
 * equal keys all come out, ordered by source, so the caller decides what a
 * repeated key means (an insert's duplicate, an upsert's replacement, a
 * @unique clash).
 *
 * Sources give sorted segments of columns (each with its items' keys), and
 * the merge says where each item is: a segment and a position in it, in two
 * parallel arrays. No object is made per item, since a load merges millions
 * and what it allocates per row is most of what it costs; the caller reads
 * the columns it needs at each position.
 *
 * The merge is synchronous within what the sources hold, with a binary heap
 * of sources ordered by (key, source number), and awaits only when a
 * source's segment runs out. Pure: the sources are whatever async iterables
 * the caller gives.
 */
import { compareKey } from './run.js';

/** A sorted segment of a source: its items' keys, and whatever columns the caller keeps beside them. */
export interface KeyedSegment {
  readonly keys: readonly string[];
}

/** Items in key order: item i is at `at[i]` of `segments[i]`. */
export interface MergedBatch<S extends KeyedSegment> {
  segments: S[];
  at: number[];
}

interface Cursor<S> {
  source: number;
  it: AsyncIterator<S>;
  segment: S;
  pos: number;
  key: string;
}

/** Items in key order, in batches of at most `batch`; items with one key come out in source order. */
export async function* mergeSorted<S extends KeyedSegment>(a: {
  sources: readonly AsyncIterable<S>[];
  batch?: number;
}): AsyncGenerator<MergedBatch<S>> {
  const size = a.batch ?? 4096;
  const heap: Cursor<S>[] = [];
  const before = (x: Cursor<S>, y: Cursor<S>): boolean => {
    const c = compareKey(x.key, y.key);
    return c < 0 || (c === 0 && x.source < y.source);
  };
  // A cursor is in the heap only while it has an item at `pos`.
  const refill = async (c: Cursor<S>): Promise<boolean> => {
    for (;;) {
      const next = await c.it.next();
      if (next.done === true) return false;
      if (next.value.keys.length === 0) continue;
      c.segment = next.value;
      c.pos = 0;
      c.key = next.value.keys[0] as string;
      return true;
    }
  };
  const cursors = a.sources.map((s, source) => ({ source, it: s[Symbol.asyncIterator](), pos: 0, key: '' }) as Cursor<S>);
  for (const c of await Promise.all(cursors.map(async (c) => ((await refill(c)) ? c : undefined))))
    if (c !== undefined) push(heap, c, before);
  let out: MergedBatch<S> = { segments: [], at: [] };
  while (heap.length > 0) {
    const c = heap[0] as Cursor<S>;
    const keys = c.segment.keys;
    // Take this source's items while they sort before every other source's next one.
    const bound = heap.length > 1 ? smallerChild(heap, before) : undefined;
    do {
      out.segments.push(c.segment);
      out.at.push(c.pos);
      c.pos++;
      if (c.pos === keys.length) break;
      c.key = keys[c.pos] as string;
    } while (out.at.length < size && (bound === undefined || before(c, bound)));
    if (c.pos === keys.length && !(await refill(c))) {
      const end = heap.pop() as Cursor<S>;
      if (heap.length > 0) {
        heap[0] = end;
        down(heap, 0, before);
      }
    } else down(heap, 0, before);
    if (out.at.length >= size) {
      yield out;
      out = { segments: [], at: [] };
    }
  }
  if (out.at.length > 0) yield out;
}

function smallerChild<T>(heap: readonly T[], before: (x: T, y: T) => boolean): T {
  const l = heap[1] as T;
  const r = heap[2];
  return r !== undefined && before(r, l) ? r : l;
}

function push<T>(heap: T[], item: T, before: (x: T, y: T) => boolean): void {
  heap.push(item);
  let i = heap.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(heap[i] as T, heap[p] as T)) break;
    [heap[i], heap[p]] = [heap[p] as T, heap[i] as T];
    i = p;
  }
}

function down<T>(heap: T[], from: number, before: (x: T, y: T) => boolean): void {
  let i = from;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < heap.length && before(heap[l] as T, heap[m] as T)) m = l;
    if (r < heap.length && before(heap[r] as T, heap[m] as T)) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m] as T, heap[i] as T];
    i = m;
  }
}
