/**
 * Stored bytes as a damaged store or disk hands them back, for tests that hold two codecs of one
 * format (a synchronous one and one in slices) to the same answer on each: what they decode, or
 * the code they refuse with.
 */
import { isBranchgraphError } from '../../src/model/errors.js';

/** `bytes` cut to each of `lengths`, and with the byte at each of `flips` changed by `mask`. */
export function damagedCopies(bytes: Uint8Array, o: { lengths: number[]; flips: number[]; mask: number }): Uint8Array[] {
  const out = o.lengths.map((n) => bytes.subarray(0, n));
  for (const at of o.flips) {
    const bad = bytes.slice();
    bad[at] = (bad[at] as number) ^ o.mask;
    out.push(bad);
  }
  return out;
}

/** What `decode` gives, as `describe` tells it, or the code of the typed error it refuses with. */
export async function outcomeOf<T>(decode: () => T | Promise<T>, describe: (value: T) => string): Promise<string> {
  try {
    return describe(await decode());
  } catch (e) {
    return isBranchgraphError(e) ? e.code : `not a BranchgraphError: ${String(e)}`;
  }
}
