/**
 * Merge requests in the object store: each request is a sequence of
 * create-only versions, `requests/<id>/<seq>.json`, each the whole request
 * (model/merge-request.ts). The newest version is the request. Changing one
 * writes the next version with `putIfAbsent`; a writer that loses the race
 * reads the new newest and applies its change again, so concurrent reviews
 * on two servers both land and neither is lost. Versions are never
 * rewritten or deleted, which also makes the sequence the request's audit
 * trail.
 */
import { canonicalJson } from '../model/canonical.js';
import type { EventKind, EventLog } from './event-log.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { MergeRequestDocZ, type MergeRequestDoc } from '../model/merge-request.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { newId } from '../model/new-id.js';

export const REQUESTS_PREFIX = 'requests/';
const ID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;
const versionKey = (id: string, seq: number): string => `${REQUESTS_PREFIX}${id}/${String(seq).padStart(8, '0')}.json`;
const VERSION_RE = /^requests\/([0-9A-HJKMNP-TV-Z]{26})\/(\d{8})\.json$/;
/** Requests whose newest version a process remembers. */
const MAX_KNOWN = 10_000;
/** Lost races one change retries before giving up with publish_contention. */
const MAX_ATTEMPTS = 20;

export class MergeRequests {
  /** The newest version this process has seen of each request: versions are create-only and numbered without gaps. */
  private readonly known = new Map<string, MergeRequestDoc>();

  constructor(
    private readonly store: ObjectStore,
    private readonly clock: () => number,
    private readonly events: EventLog,
  ) {}

  /** Write one version, with its event before it (event-log.ts). */
  private async put(doc: MergeRequestDoc, kind: EventKind, signal?: AbortSignal): Promise<void> {
    const key = versionKey(doc.id, doc.seq);
    const bytes = encodeJson(MergeRequestDocZ.parse(doc));
    const actor = doc.merged?.by ?? doc.closed?.by ?? doc.reviews.at(-1)?.author ?? doc.author;
    // A check result is the checks' doing, not the last reviewer's.
    const by = kind === 'request_opened' ? doc.author : kind === 'request_checked' ? 'checks' : actor;
    const draft = { kind, actor: by, branch: doc.target, request: doc.id };
    await this.events.around({ draft, key, bytes, signal }, () => this.store.putIfAbsent(key, bytes, { signal }));
  }

  private remember(doc: MergeRequestDoc): void {
    this.known.delete(doc.id);
    this.known.set(doc.id, doc);
    // Bounded: the least recently stored go first.
    for (const id of this.known.keys()) {
      if (this.known.size <= MAX_KNOWN) break;
      this.known.delete(id);
    }
  }

  /** Store a new request (its first version); the id is chosen here. */
  async create(doc: Omit<MergeRequestDoc, 'id' | 'seq' | 'format'>, signal?: AbortSignal): Promise<MergeRequestDoc> {
    const full: MergeRequestDoc = { format: 1, id: newId(this.clock()), seq: 1, ...doc };
    await this.put(full, 'request_opened', signal);
    this.remember(full);
    return full;
  }

  /** The request as its newest version says; not_found for an id no request has. */
  async get(id: string, signal?: AbortSignal): Promise<MergeRequestDoc> {
    if (!ID_RE.test(id))
      throw new BranchgraphError('invalid_input', `${JSON.stringify(id)} is not a merge request id`, {
        issues: [{ path: 'id', message: 'not a request id' }],
      });
    // A newer version than the one known exists exactly when the next number does: one small request.
    const cached = this.known.get(id);
    if (cached !== undefined && (await this.store.head(versionKey(id, cached.seq + 1), { signal })) === undefined) return cached;
    let newest: string | undefined;
    const startAfter = cached === undefined ? undefined : versionKey(id, cached.seq);
    for await (const o of this.store.list(`${REQUESTS_PREFIX}${id}/`, { signal, ...(startAfter ? { startAfter } : {}) }))
      if (VERSION_RE.test(o.key)) newest = o.key;
    if (newest === undefined) throw new BranchgraphError('not_found', `merge request ${id} does not exist`, { details: { key: id } });
    const doc = await this.read(newest, signal);
    this.remember(doc);
    return doc;
  }

  private async read(key: string, signal?: AbortSignal): Promise<MergeRequestDoc> {
    const doc = decodeJson(MergeRequestDocZ, await this.store.get(key, { signal }), key);
    const m = VERSION_RE.exec(key) as RegExpExecArray;
    if (doc.id !== m[1] || doc.seq !== Number(m[2]))
      throw new BranchgraphError('corrupt_object', `${key} holds another request's version`, { details: { key } });
    return doc;
  }

  /**
   * Apply `change` to the newest version and store the result as the next one; a lost race applies
   * it again to the version that won. `change` answers undefined to store nothing.
   */
  async update(
    id: string,
    change: (doc: MergeRequestDoc) => Promise<MergeRequestDoc | undefined>,
    signal?: AbortSignal,
  ): Promise<MergeRequestDoc> {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const doc = await this.get(id, signal);
      const next = await change(doc);
      if (next === undefined) return doc;
      const stored = await this.replace(doc, next, signal);
      if (stored !== undefined) return stored;
    }
    throw new BranchgraphError('publish_contention', `merge request ${id} is being changed concurrently; retry`);
  }

  /**
   * Store `next` as the version after `read`, create-only, without reading again: for a caller that
   * computed the change from `read` outside any retry. Undefined when another version took that
   * place first (the caller reads the request again and decides anew).
   */
  async replace(read: MergeRequestDoc, next: MergeRequestDoc, signal?: AbortSignal): Promise<MergeRequestDoc | undefined> {
    const stored: MergeRequestDoc = MergeRequestDocZ.parse({
      ...next,
      id: read.id,
      seq: read.seq + 1,
      updatedAt: new Date(this.clock()).toISOString(),
    });
    try {
      await this.put(stored, changeKind(read, stored), signal);
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) return undefined;
      throw e;
    }
    this.remember(stored);
    return stored;
  }

  /**
   * Up to `limit` requests that `keep` accepts, newest request first (ids are time-ordered), each as
   * its newest version; `after` continues after an id, and `next` is where the next page starts.
   */
  async list(page: {
    after?: string | undefined;
    limit: number;
    keep: (doc: MergeRequestDoc) => boolean;
    signal?: AbortSignal | undefined;
  }): Promise<{ requests: MergeRequestDoc[]; next: string | undefined }> {
    const newest = new Map<string, string>();
    for await (const o of this.store.list(REQUESTS_PREFIX, { signal: page.signal })) {
      const m = VERSION_RE.exec(o.key);
      if (m !== null) newest.set(m[1] as string, o.key);
    }
    const ids = [...newest.keys()]
      .sort()
      .reverse()
      .filter((id) => page.after === undefined || id < page.after);
    const requests: MergeRequestDoc[] = [];
    for (const [i, id] of ids.entries()) {
      const doc = await this.read(newest.get(id) as string, page.signal);
      if (!page.keep(doc)) continue;
      requests.push(doc);
      if (requests.length === page.limit) return { requests, next: i + 1 < ids.length ? id : undefined };
    }
    return { requests, next: undefined };
  }
}

/** What a new version of a request changed, as its event names it. */
function changeKind(before: MergeRequestDoc, after: MergeRequestDoc): EventKind {
  if (after.state === 'merged' && before.state !== 'merged') return 'request_merged';
  if (after.state === 'closed' && before.state !== 'closed') return 'request_closed';
  if (after.reviews.length > before.reviews.length) return 'request_reviewed';
  if (after.merging !== undefined && before.merging === undefined) return 'request_merge_started';
  if (canonicalJson(after.resolutions ?? null) !== canonicalJson(before.resolutions ?? null)) return 'request_resolutions';
  if (after.revisions.length === before.revisions.length) return 'request_checked';
  return 'request_revised';
}
