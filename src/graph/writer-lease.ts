/**
 * Writer leases: how a reader of the event log tells a writer that is
 * still publishing from one that is gone.
 *
 * A reader stops at an event whose source has not landed (event-log.ts):
 * its writer may still be publishing. Without more, it must wait out a
 * publication's whole deadline (MAX_PUBLICATION_MS, five minutes) before
 * calling the event an orphan, so one kill -9 mid-publication stalls every
 * feed reader for minutes. So a server process holds a lease,
 * `leases/<id>.json`: its writer id (its WAL shard, stable across
 * restarts) and an incarnation (new at each start), rewritten every
 * LEASE_RENEW_MS. Each event it appends names the writer and incarnation.
 * A reader decides an undecided event at once when the lease names another
 * incarnation (the process restarted: the new one settles the old one's
 * events by starting), is missing (the process closed), or was last
 * renewed more than LEASE_TTL_MS ago by the store's clock. So the stall
 * after a crash is at most LEASE_TTL_MS when the process stays down, and
 * ends at its restart when it comes back.
 *
 * Soundness: a reader that passes an event must never see its source land
 * afterwards. A writer writes a source only while its lease is fresh: it
 * renews first if its last renewal was sent more than LEASE_TTL_MS / 3 ago
 * (`ensureFresh`), so the source is written well within the TTL readers
 * grant it, measured from a renewal the store stamped after it was sent.
 * Processes without a lease (embedded use, tools) keep the deadline rule.
 */
import { z } from 'zod';
import { isBranchgraphError } from '../model/errors.js';
import { newId } from '../model/new-id.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';

/** How long a lease holds after its last renewal, by the store's clock: the longest a crash stalls the feed. */
export const LEASE_TTL_MS = 15_000;
/** How often a live process renews its lease. */
export const LEASE_RENEW_MS = 3_000;

const LeaseZ = z.object({ format: z.literal(1), id: z.string(), incarnation: z.string() });

/** Who appended an event: a writer id and the incarnation of the process. */
export interface EventWriter {
  id: string;
  incarnation: string;
}

const leaseKey = (id: string): string => `leases/${encodeURIComponent(id)}.json`;

/** A writer's lease as a reader finds it: whether it still holds for `writer`'s events. */
export async function leaseHolds(a: {
  store: ObjectStore;
  writer: EventWriter;
  now: number;
  signal?: AbortSignal | undefined;
}): Promise<boolean> {
  const key = leaseKey(a.writer.id);
  const info = await a.store.head(key, { signal: a.signal });
  if (info === undefined) return false;
  if (info.lastModified !== undefined && a.now - info.lastModified > LEASE_TTL_MS) return false;
  try {
    const lease = decodeJson(LeaseZ, await a.store.get(key, { signal: a.signal }), key);
    return lease.incarnation === a.writer.incarnation;
  } catch (e) {
    if (isBranchgraphError(e, 'object_not_found')) return false;
    throw e;
  }
}

/** This process's lease as a writer of the event log. */
export class WriterLease {
  readonly writer: EventWriter;
  /** When the last renewal that landed was sent (monotonic ms); -Infinity before the first. */
  private sentAt = Number.NEGATIVE_INFINITY;
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;

  constructor(
    private readonly store: ObjectStore,
    id: string,
  ) {
    this.writer = { id, incarnation: newId() };
  }

  /** Take the lease (ending any earlier incarnation's at once) and keep it renewed. */
  async start(): Promise<void> {
    await this.renew();
    this.timer = setInterval(() => void this.renew().catch(() => undefined), LEASE_RENEW_MS);
    this.timer.unref();
  }

  /** Before a source is written: renew first unless the last renewal is recent enough. */
  async ensureFresh(signal?: AbortSignal): Promise<void> {
    // A renewal already in flight may have been sent long ago: look again after it.
    for (let i = 0; i < 3 && performance.now() - this.sentAt > LEASE_TTL_MS / 3; i++) await this.renew(signal);
  }

  /**
   * End the lease: readers decide this incarnation's undecided events at once. The lease object is
   * deleted rather than marked, so a process closing a graph that was deleted under it leaves
   * nothing behind.
   */
  async end(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.renewing?.catch(() => undefined);
    await this.store.deleteMany([leaseKey(this.writer.id)]).catch(() => undefined);
  }

  private renew(signal?: AbortSignal): Promise<void> {
    this.renewing ??= (async () => {
      const sent = performance.now();
      await this.write(signal);
      this.sentAt = Math.max(this.sentAt, sent);
    })().finally(() => {
      this.renewing = undefined;
    });
    return this.renewing;
  }

  private write(signal?: AbortSignal): Promise<void> {
    const body = encodeJson({ format: 1, id: this.writer.id, incarnation: this.writer.incarnation });
    return this.store.putOverwrite(leaseKey(this.writer.id), body, { signal });
  }
}
