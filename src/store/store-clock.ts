/**
 * The store's clock: the time the store stamps on an object written now.
 *
 * Processes sharing a store may disagree about the time by minutes (the
 * simulation tries up to an hour either way); the store's own timestamps
 * (`lastModified`) are the one clock they share. Whatever decides safety
 * from ages, garbage collection above all, reads "now" here and ages from
 * listings, so no writer's clock enters the decision. One probe object is
 * written, read back and deleted: three small calls per GC run.
 */
import { BranchgraphError } from '../model/errors.js';
import type { ObjectStore } from './object-store.js';
import { newId } from '../model/new-id.js';

export const CLOCK_PROBE_PREFIX = 'clock/';

export async function storeTime(store: ObjectStore, signal?: AbortSignal): Promise<number> {
  const key = `${CLOCK_PROBE_PREFIX}${newId()}.probe`;
  await store.putIfAbsent(key, new Uint8Array(0), { signal });
  try {
    const info = await store.head(key, { signal });
    if (info?.lastModified === undefined)
      throw new BranchgraphError('store_error', `the ${store.kind} store does not report when objects were written; ages cannot be judged`);
    return info.lastModified;
  } finally {
    await store.deleteMany([key]).catch(() => undefined);
  }
}
