/**
 * Turns of the event loop. One process serves every request, so work on a
 * large but allowed input (a 15 MB write, a schema of 1,500 tables) must
 * not hold the loop: a health probe or a small read waiting behind it
 * waits for all of it. Long work is cut into slices, and between slices it
 * gives the loop a turn (`setImmediate`, which lets I/O callbacks run, not
 * just promise jobs). Small inputs never pay for this: a slice only ends
 * once it has run for SLICE_MS.
 */

/** How long one slice of work may hold the loop before it gives a turn. */
export const SLICE_MS = 15;

/** Let every callback that is ready run before this continues. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A running slice: `pass()` between units of work gives the loop a turn
 * once the slice has run SLICE_MS, and is free otherwise.
 */
export class Slice {
  private started = performance.now();

  /** Give a turn if this slice has held the loop long enough; resolves at once otherwise. */
  async pass(): Promise<void> {
    if (performance.now() - this.started < SLICE_MS) return;
    await nextTurn();
    this.started = performance.now();
  }
}

/** Bytes of text or data above which one pass over them (parse, encode, inflate) is worth a turn of its own. */
export const LARGE_BYTES = 1024 * 1024;
