/**
 * Turns of the event loop. One process serves every request, so work on a
 * large but allowed input (a 15 MB write, a schema of 1,500 tables) must
 * not hold the loop: a health probe or a small read waiting behind it
 * waits for all of it. Long work is cut into slices, and between slices it
 * gives the loop a turn (`setImmediate`, which lets I/O callbacks run, not
 * just promise jobs). Small inputs never pay for this: a slice only ends
 * once it has run for SLICE_MS.
 */
import type { Steps } from './steps.js';

/** How long one slice of work may hold the loop before it gives a turn. */
export const SLICE_MS = 15;

/** Let every callback that is ready run before this continues. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * A running slice. Between units of work, `if (slice.due()) await slice.turn()` gives the loop a
 * turn once the slice has run SLICE_MS; a unit that is not due costs a clock read, not an await
 * (a load checks a million operations through here).
 */
export class Slice {
  private started = performance.now();

  /** Whether this slice has held the loop long enough to give a turn. */
  due(): boolean {
    return performance.now() - this.started >= SLICE_MS;
  }

  /** Give the loop a turn and start a new slice. */
  async turn(): Promise<void> {
    await nextTurn();
    this.started = performance.now();
  }
}

/** The result of `steps` (model/steps.ts), run in slices with turns of the loop between them. */
export async function runStepsInSlices<T>(steps: Steps<T>): Promise<T> {
  const slice = new Slice();
  for (;;) {
    const r = steps.next();
    if (r.done === true) {
      // What the caller does next starts a slice of its own.
      await nextTurn();
      return r.value;
    }
    if (r.value === 'turn' || slice.due()) await slice.turn();
  }
}

/** Bytes of text or data above which one pass over them (parse, encode, inflate) is worth a turn of its own. */
export const LARGE_BYTES = 1024 * 1024;
