/**
 * A sort that gives the event loop turns (model/turns.ts). One `Array.prototype.sort` of the
 * 400,000 keys of a large load held the loop for a few hundred milliseconds, and a sort cannot be
 * paused. A large array is instead sorted in runs of RUN_ITEMS, each a native sort that holds the
 * loop a few milliseconds, and the runs are merged pairwise, bottom up, a slice at a time.
 *
 * Stable, as `Array.prototype.sort` is: equal items keep their order (a run's native sort is
 * stable, and a merge takes from the earlier run first). Small arrays are sorted natively at once.
 */
import { Slice } from './turns.js';

/** Items one native sort takes: some milliseconds of the loop for string keys. */
const RUN_ITEMS = 16_384;

/** `items`, sorted by `compare` in place, with turns of the loop between slices of the work. */
export async function sortInTurns<T>(items: T[], compare: (x: T, y: T) => number): Promise<T[]> {
  const n = items.length;
  if (n <= RUN_ITEMS) return items.sort(compare);
  const slice = new Slice();
  for (let from = 0; from < n; from += RUN_ITEMS) {
    if (slice.due()) await slice.turn();
    const run = items.slice(from, from + RUN_ITEMS).sort(compare);
    for (let i = 0; i < run.length; i++) items[from + i] = run[i] as T;
  }
  let src = items;
  let dst = new Array<T>(n);
  for (let width = RUN_ITEMS; width < n; width *= 2) {
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let [i, j, k] = [lo, mid, lo];
      while (k < hi) {
        // A clock read every few thousand items, not every item.
        if ((k & 4095) === 0 && slice.due()) await slice.turn();
        if (j >= hi || (i < mid && compare(src[i] as T, src[j] as T) <= 0)) dst[k++] = src[i++] as T;
        else dst[k++] = src[j++] as T;
      }
    }
    [src, dst] = [dst, src];
  }
  if (src !== items) for (let i = 0; i < n; i++) items[i] = src[i] as T;
  return items;
}
