/**
 * Idempotency records: what a merge sent with an `Idempotency-Key`
 * published, so a retry of the same request returns the first result
 * instead of merging twice or answering "already up to date".
 *
 * A record is one create-only object, `idempotency/<day>/<hash>.json`,
 * holding the key's hash, a fingerprint of the request and the result. It
 * is written once the merge has published. Lookups read the buckets of
 * today and yesterday (UTC), so a key is honoured for at least
 * IDEMPOTENCY_LIFETIME_MS and at most twice that. GC deletes whole buckets
 * older than that, plus its grace, without reading them.
 *
 * The record is written after the commit, so a crash or a lost response
 * in between loses it. So a merge writes a `started` marker beside its
 * commit's other objects, before the manifest that publishes it, and its
 * commit carries the key's hash: a retry that finds the marker but no
 * record looks for that commit among the target's recent commits
 * (idempotent-merge.ts). A first attempt finds neither and pays no search,
 * and a request refused before it could publish (a branch that does not
 * exist, a conflict) writes no marker at all.
 */
import { contentHash } from '../model/canonical.js';
import { isBranchgraphError } from '../model/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { z } from 'zod';

export const IDEMPOTENCY_LIFETIME_MS = 24 * 60 * 60 * 1000;
export const IDEMPOTENCY_PREFIX = 'idempotency/';

const RecordZ = z.object({ format: z.literal(1), keyHash: z.string(), fingerprint: z.string(), created: z.string(), result: z.unknown() });
export type IdempotencyRecord = z.infer<typeof RecordZ>;

/** A client's key as stored: its hash, so a client's key text is never written anywhere. */
export function idempotencyKeyHash(key: string): string {
  return contentHash(`idempotency-key:${key}`);
}

/**
 * The key a merge request's revision merges under. Hashed from another prefix than any client key,
 * so no `Idempotency-Key` a client sends can claim it (and block or replay a request's merge).
 */
export function requestRevisionKeyHash(request: string, revision: number): string {
  return contentHash(`merge-request-revision:${request}:${revision}`);
}

function day(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10).replace(/-/g, '');
}

function recordKey(keyHash: string, ms: number, which: { started?: boolean } = {}): string {
  const started = which.started === true;
  return `${IDEMPOTENCY_PREFIX}${day(ms)}/${keyHash}${started ? '.started' : ''}.json`;
}

/** The UTC day a record key's bucket names (for GC), or undefined for a key outside the layout. */
export function idempotencyBucketTime(key: string): number | undefined {
  const m = /^idempotency\/(\d{4})(\d{2})(\d{2})\/[0-9a-f]{32}(?:\.started)?\.json$/.exec(key);
  return m === null ? undefined : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
}

export class IdempotencyRecords {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: () => number = Date.now,
  ) {}

  /** The record of an earlier attempt with this key, and whether one was started at all. */
  async find(keyHash: string, signal?: AbortSignal): Promise<{ record: IdempotencyRecord | undefined; started: boolean }> {
    const now = this.clock();
    const exists = async (k: string): Promise<boolean> => (await this.store.head(k, { signal })) !== undefined;
    const read = async (k: string): Promise<IdempotencyRecord | undefined> => {
      try {
        const parsed = RecordZ.safeParse(JSON.parse(new TextDecoder().decode(await this.store.get(k, { signal }))));
        // A record that cannot be read is as good as none: the commit search still finds the merge.
        return parsed.success && parsed.data.keyHash === keyHash ? parsed.data : undefined;
      } catch (e) {
        if (isBranchgraphError(e, 'object_not_found') || e instanceof SyntaxError) return undefined;
        throw e;
      }
    };
    const before = now - IDEMPOTENCY_LIFETIME_MS;
    const [today, yesterday, startedToday, startedBefore] = await Promise.all([
      read(recordKey(keyHash, now)),
      read(recordKey(keyHash, before)),
      exists(recordKey(keyHash, now, { started: true })),
      exists(recordKey(keyHash, before, { started: true })),
    ]);
    return { record: today ?? yesterday, started: startedToday || startedBefore };
  }

  /** Mark that a merge with this key is about to run (see the file header). */
  async start(keyHash: string, signal?: AbortSignal): Promise<void> {
    await this.put(recordKey(keyHash, this.clock(), { started: true }), { format: 1, keyHash }, signal);
  }

  private async put(key: string, body: unknown, signal?: AbortSignal): Promise<void> {
    try {
      await this.store.putIfAbsent(key, new TextEncoder().encode(JSON.stringify(body)), { signal });
    } catch (e) {
      if (!isBranchgraphError(e, 'object_exists')) throw e;
    }
  }

  /** Store a record; one already there (a concurrent retry's) wins. */
  async save(record: Omit<IdempotencyRecord, 'format' | 'created'>, signal?: AbortSignal): Promise<void> {
    const now = this.clock();
    await this.put(
      recordKey(record.keyHash, now),
      { format: 1, created: new Date(now).toISOString(), ...record } satisfies IdempotencyRecord,
      signal,
    );
  }
}
