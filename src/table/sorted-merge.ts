/**
 * A k-way merge of sorted sources that keeps every item: the external sort
 * of a bulk load (graph/streaming-load.ts) merges its sorted chunks with it.
 * Unlike the run merge (merge-walk.ts), which keeps each key's newest row,
 * equal keys all come out, ordered by source, so the caller decides what a
 * repeated key means (an insert's duplicate, an upsert's replacement, a
 * @unique clash).
 *
 * Each source gives sorted batches asynchronously; the merge itself is
 * synchronous within what the sources hold, with a binary heap of sources
 * ordered by (key, source number), and awaits only when a source's batch
 * runs out. Pure: the sources are whatever async iterables the caller gives.
 */
import { compareKey } from './run.js';

/** One item of the merge and the source it came from (its position in the sources given). */
export interface Sourced<T> {
  item: T;
  source: number;
}

interface Cursor<T> {
  source: number;
  it: AsyncIterator<readonly T[]>;
  batch: readonly T[];
  pos: number;
  key: string;
}

/** Items in key order, in batches of at most `batch`; items with one key come out in source order. */
export async function* mergeSorted<T>(a: {
  sources: readonly AsyncIterable<readonly T[]>[];
  keyOf: (item: T) => string;
  batch?: number;
}): AsyncGenerator<Sourced<T>[]> {
  const { keyOf } = a;
  const size = a.batch ?? 4096;
  const heap: Cursor<T>[] = [];
  const before = (x: Cursor<T>, y: Cursor<T>): boolean => {
    const c = compareKey(x.key, y.key);
    return c < 0 || (c === 0 && x.source < y.source);
  };
  // A cursor is in the heap only while it has an item at `pos`.
  const refill = async (c: Cursor<T>): Promise<boolean> => {
    for (;;) {
      const next = await c.it.next();
      if (next.done === true) return false;
      if (next.value.length === 0) continue;
      c.batch = next.value;
      c.pos = 0;
      c.key = keyOf(next.value[0] as T);
      return true;
    }
  };
  const cursors = a.sources.map((s, source) => ({ source, it: s[Symbol.asyncIterator](), batch: [], pos: 0, key: '' }) as Cursor<T>);
  for (const c of await Promise.all(cursors.map(async (c) => ((await refill(c)) ? c : undefined))))
    if (c !== undefined) push(heap, c, before);
  let out: Sourced<T>[] = [];
  while (heap.length > 0) {
    const c = heap[0] as Cursor<T>;
    // Take this source's items while they sort before every other source's next one.
    const bound = heap.length > 1 ? smallerChild(heap, before) : undefined;
    do {
      out.push({ item: c.batch[c.pos] as T, source: c.source });
      c.pos++;
      if (c.pos === c.batch.length) break;
      c.key = keyOf(c.batch[c.pos] as T);
    } while (out.length < size && (bound === undefined || before(c, bound)));
    if (c.pos === c.batch.length && !(await refill(c))) {
      const end = heap.pop() as Cursor<T>;
      if (heap.length > 0) {
        heap[0] = end;
        down(heap, 0, before);
      }
    } else down(heap, 0, before);
    if (out.length >= size) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
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
