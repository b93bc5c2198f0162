/**
 * Text pieces as one buffer of UTF-8, written a piece at a time in slices
 * of the event loop. Encoding a 15 MB answer in one call held the loop
 * 40-90 ms here: a first touch of fresh memory costs about 2.6 ms a
 * megabyte on these machines, and one call touches all of it at once. The
 * buffer is sized first and filled piece by piece, so its pages are touched
 * a piece at a time, with turns between.
 */
import { jsonLengthAtLeast, jsonSteps } from './json-steps.js';
import { LARGE_BYTES, runStepsInSlices, Slice } from './turns.js';

/** The UTF-8 of `pieces` joined, as one buffer. */
export async function utf8InSlices(pieces: readonly string[]): Promise<Buffer> {
  const slice = new Slice();
  // Sizing reads every piece too (and flattens one that was built by joining), so it takes turns as well.
  let total = 0;
  for (const p of pieces) {
    total += Buffer.byteLength(p);
    if (slice.due()) await slice.turn();
  }
  // Not zeroed: every byte is written below.
  const out = Buffer.allocUnsafeSlow(total);
  let at = 0;
  for (const p of pieces) {
    at += out.write(p, at, 'utf8');
    if (slice.due()) await slice.turn();
  }
  return out;
}

/**
 * The UTF-8 of `value`'s JSON text when it is large (LARGE_BYTES or more), made a member at a time
 * (json-steps.ts), in slices; undefined for a smaller value, which one `JSON.stringify` serves better.
 */
export async function largeJsonInSlices(value: unknown): Promise<Buffer | undefined> {
  if (!jsonLengthAtLeast(value, LARGE_BYTES)) return undefined;
  const pieces: string[] = [];
  await runStepsInSlices(jsonSteps(value, pieces));
  return utf8InSlices(pieces);
}
