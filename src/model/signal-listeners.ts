/**
 * Every store call listens on its operation's signal while it is in flight (the S3 client, the
 * file store, the latency wrapper), and releases the listener when it ends. One operation may have
 * many calls in flight at once: a walk reads 16 segments ahead and a lookup 8, over every table a
 * merge prepares. Node warns of a leak past 10 listeners on one signal, so an operation that starts
 * such reads declares its signal's bound here.
 */
import { setMaxListeners } from 'node:events';

/** Store calls one operation may have listening on its signal at once. */
export const STORE_CALLS_PER_SIGNAL = 256;

export function allowStoreCallListeners(signal: AbortSignal | undefined): void {
  if (signal !== undefined) setMaxListeners(STORE_CALLS_PER_SIGNAL, signal);
}
