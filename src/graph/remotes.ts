/**
 * Remotes and remote-tracking refs: where other copies of the graph are,
 * and what each of their branches held when it was last fetched.
 *
 * - A remote is a name for a URL (a directory, `s3://bucket/prefix`, or a
 *   server), kept as `remotes/<name>/<seq>.json`.
 * - A remote-tracking ref (`remote:origin/main` in the ref grammar) is the
 *   commit and manifest a remote's branch held when a fetch last read it,
 *   kept as `remote-refs/<remote>/<branch>/<seq>.json`. Only a fetch moves
 *   it; nothing writes on it. Garbage collection keeps what it names.
 *
 * Both are create-only records, numbered per name like branch records: the
 * newest one holds, a deletion is a record too, and two writers racing for
 * the same number meet at the create-only write, where one loses and reads
 * again. Nothing is ever overwritten.
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { getIfPresent, listAll, type ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { decodeBranchSegment, encodeBranch } from './keys.js';
import { ManifestRefZ } from './manifest.js';

/** A remote's name: one path segment, as `remote:<name>/<branch>` needs. */
export const REMOTE_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export const RemoteRecordZ = z.object({
  format: z.literal(1),
  name: z.string(),
  seq: z.number().int().min(1),
  url: z.string(),
  deleted: z.boolean(),
  time: z.string(),
  actor: z.string(),
});
export type RemoteRecord = z.infer<typeof RemoteRecordZ>;

export const TrackingRefZ = z.object({
  format: z.literal(1),
  remote: z.string(),
  branch: z.string(),
  seq: z.number().int().min(1),
  /** The remote branch's head commit and manifest when fetched; absent once pruned. */
  commit: z.string().optional(),
  manifest: ManifestRefZ.optional(),
  time: z.string(),
});
export type TrackingRef = z.infer<typeof TrackingRefZ>;
/** A tracking ref that names a head (not a pruned one). */
export type LiveTrackingRef = TrackingRef & Required<Pick<TrackingRef, 'commit' | 'manifest'>>;

const REMOTES = 'remotes/';
const TRACKING = 'remote-refs/';
const seqKey = (prefix: string, seq: number): string => `${prefix}${String(seq).padStart(8, '0')}.json`;
const remotePrefix = (name: string): string => `${REMOTES}${name}/`;
const trackingPrefix = (remote: string, branch?: string): string =>
  `${TRACKING}${remote}/${branch === undefined ? '' : `${encodeBranch(branch)}/`}`;

export function validateRemoteName(name: string): void {
  if (!REMOTE_NAME_RE.test(name))
    throw new BranchgraphError(
      'invalid_input',
      `invalid remote name ${JSON.stringify(name)}: letters, digits, '.', '_' and '-', up to 64`,
      {
        issues: [{ path: 'name', message: 'invalid remote name' }],
      },
    );
}

export class Remotes {
  constructor(
    private readonly store: ObjectStore,
    private readonly clock: () => number,
  ) {}

  /** Every remote that exists, by name. */
  async list(signal?: AbortSignal): Promise<RemoteRecord[]> {
    const newest = await this.newestPerName(REMOTES, RemoteRecordZ, signal);
    return newest.filter((r) => !r.deleted);
  }

  async get(name: string, signal?: AbortSignal): Promise<RemoteRecord> {
    validateRemoteName(name);
    const rec = await this.newest(remotePrefix(name), RemoteRecordZ, signal);
    if (rec === undefined || rec.deleted)
      throw new BranchgraphError('not_found', `remote ${name} does not exist`, { details: { remote: name } });
    return rec;
  }

  /** Add a remote, or point an existing one at a new URL. */
  async set(a: { name: string; url: string; actor: string; signal?: AbortSignal | undefined }): Promise<RemoteRecord> {
    validateRemoteName(a.name);
    return this.append({ prefix: remotePrefix(a.name), schema: RemoteRecordZ, signal: a.signal }, (seq) => ({
      format: 1 as const,
      name: a.name,
      seq,
      url: a.url,
      deleted: false,
      time: this.now(),
      actor: a.actor,
    }));
  }

  /** Remove a remote and forget its tracking refs; the objects they named stay until GC finds them unreachable. */
  async remove(a: { name: string; actor: string; signal?: AbortSignal | undefined }): Promise<void> {
    const rec = await this.get(a.name, a.signal);
    for (const t of await this.trackingRefs(a.name, a.signal)) await this.prune(t, a.signal);
    await this.append({ prefix: remotePrefix(a.name), schema: RemoteRecordZ, signal: a.signal }, (seq) => ({
      ...rec,
      seq,
      deleted: true,
      time: this.now(),
      actor: a.actor,
    }));
  }

  /** The remote's branches as last fetched (pruned ones left out), by branch name. */
  async trackingRefs(remote: string, signal?: AbortSignal): Promise<LiveTrackingRef[]> {
    const newest = await this.newestPerName(trackingPrefix(remote), TrackingRefZ, signal);
    return newest.filter((t): t is LiveTrackingRef => t.manifest !== undefined && t.commit !== undefined);
  }

  /** Every remote's tracking refs: garbage collection's roots beside branches and tags. */
  async allTrackingRefs(signal?: AbortSignal): Promise<LiveTrackingRef[]> {
    const out: LiveTrackingRef[] = [];
    for (const r of await this.list(signal)) out.push(...(await this.trackingRefs(r.name, signal)));
    return out;
  }

  async trackingRef(remote: string, branch: string, signal?: AbortSignal): Promise<LiveTrackingRef> {
    validateRemoteName(remote);
    const t = await this.newest(trackingPrefix(remote, branch), TrackingRefZ, signal);
    if (t?.manifest === undefined || t.commit === undefined)
      throw new BranchgraphError('not_found', `remote:${remote}/${branch} does not exist: fetch ${remote} first`, {
        details: { remote, branch },
      });
    return t as LiveTrackingRef;
  }

  /** Move a tracking ref to what a fetch found (a fetch is the only writer). */
  async track(a: {
    remote: string;
    branch: string;
    commit: string;
    manifest: { lineage: string; version: number };
    signal?: AbortSignal | undefined;
  }): Promise<TrackingRef> {
    return this.append({ prefix: trackingPrefix(a.remote, a.branch), schema: TrackingRefZ, signal: a.signal }, (seq) => ({
      format: 1 as const,
      remote: a.remote,
      branch: a.branch,
      seq,
      commit: a.commit,
      manifest: a.manifest,
      time: this.now(),
    }));
  }

  /** Forget a tracking ref whose branch the remote no longer has. */
  async prune(t: TrackingRef, signal?: AbortSignal): Promise<void> {
    await this.append({ prefix: trackingPrefix(t.remote, t.branch), schema: TrackingRefZ, signal }, (seq) => ({
      format: 1 as const,
      remote: t.remote,
      branch: t.branch,
      seq,
      time: this.now(),
    }));
  }

  private now(): string {
    return new Date(this.clock()).toISOString();
  }

  private async newest<T extends { seq: number }>(prefix: string, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T | undefined> {
    const listed = await listAll(this.store, prefix, { signal });
    const last = listed.filter((o) => /^\d{8}\.json$/.test(o.key.slice(prefix.length))).at(-1);
    if (last === undefined) return undefined;
    const bytes = await getIfPresent(this.store, last.key, { signal });
    return bytes === undefined ? undefined : decodeJson(schema, bytes, last.key);
  }

  /** The newest record of every name under `prefix` (`<prefix><name>/<seq>.json`). */
  private async newestPerName<T extends { seq: number }>(prefix: string, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T[]> {
    const last = new Map<string, string>();
    for (const o of await listAll(this.store, prefix, { signal })) {
      const m = /^([^/]+)\/\d{8}\.json$/.exec(o.key.slice(prefix.length));
      if (m !== null && decodeBranchSegment(m[1] as string) !== undefined) last.set(m[1] as string, o.key);
    }
    const out = await Promise.all(
      [...last.values()].map(async (key) => {
        const bytes = await getIfPresent(this.store, key, { signal });
        return bytes === undefined ? undefined : decodeJson(schema, bytes, key);
      }),
    );
    return out.filter((r): r is Awaited<T> => r !== undefined);
  }

  /** Write the record after the newest under `prefix`, create-only; a racer that took the number first makes it read again. */
  private async append<T extends { seq: number }>(
    at: { prefix: string; schema: z.ZodType<T>; signal: AbortSignal | undefined },
    make: (seq: number) => T,
  ): Promise<T> {
    const { prefix, schema, signal } = at;
    for (let attempt = 0; attempt < 8; attempt++) {
      const seq = ((await this.newest(prefix, schema, signal))?.seq ?? 0) + 1;
      const rec = make(seq);
      try {
        await this.store.putIfAbsent(seqKey(prefix, seq), encodeJson(rec), { signal });
        return rec;
      } catch (e) {
        if (!isBranchgraphError(e, 'object_exists')) throw e;
      }
    }
    throw new BranchgraphError('publish_contention', `${prefix} is being changed concurrently; retry`);
  }
}
