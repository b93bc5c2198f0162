/**
 * Identifiers: ULIDs (time-ordered, 26 characters) whose random part comes
 * from secure random bytes drawn 4 KiB at a time. The ulid package's own
 * source asks for one byte per character, sixteen calls into the system's
 * generator per id, which showed in the profiles of writes and merges
 * (several ids each) and of every HTTP request (its request id).
 */
import { monotonicFactory, ulid, type PRNG, type ULIDFactory } from 'ulid';

/** Random fractions in [0, 1) from a pool refilled by `crypto.getRandomValues`. */
const POOLED_RANDOM: PRNG = (() => {
  const pool = new Uint8Array(4096);
  let at = pool.length;
  return () => {
    if (at === pool.length) {
      crypto.getRandomValues(pool);
      at = 0;
    }
    return (pool[at++] as number) / 256;
  };
})();

/** A new ULID, for `time` (milliseconds) when given, else now. */
export function newId(time?: number): string {
  return ulid(time, POOLED_RANDOM);
}

/** ULIDs that sort in the order they were made, even within one millisecond. */
export function monotonicIds(): ULIDFactory {
  return monotonicFactory(POOLED_RANDOM);
}
