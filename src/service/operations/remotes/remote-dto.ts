import type { RemoteRecord } from '../../../graph/remotes.js';
import type { LiveTrackingRef } from '../../../graph/remotes.js';

/** A remote as clients see it, with its tracking refs. */
export function remoteDto(rec: RemoteRecord, tracked: readonly LiveTrackingRef[]) {
  return {
    name: rec.name,
    url: rec.url,
    actor: rec.actor,
    time: rec.time,
    branches: tracked.map((t) => ({ branch: t.branch, commit: t.commit, fetchedAt: t.time })),
  };
}
