/**
 * Branch records: a branch name maps to a lineage through create-only
 * records `branches/<name>/<seq>`; the newest record wins. Deleting writes
 * a tombstone record; creating the name again starts a new lineage, so a
 * re-created branch never sees an old branch's versions. A cold process
 * first reads the branch's head hint beside its records (`primeFromHint`):
 * it names the head, the record and a schema too large to ride inline in
 * manifests, so the head is found in two sequential round trips.
 */
import { z } from 'zod';
import { schemaTextOf } from '../model/schema.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { BEST_EFFORT, type ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import type { EventKind, EventLog } from './event-log.js';
import type { HeadVersions } from './head-versions.js';
import { BRANCH_NAME_RE, decodeBranchSegment, encodeBranch, keys, seqOfBranchKey } from './keys.js';
import { ManifestRefZ, refOf, type Manifest, type ManifestRef } from './manifest.js';
import type { ManifestStore } from './manifest-store.js';
import type { SchemaStore } from './schema-store.js';
import { BranchRecordZ, type BranchRecord, type DamagedBranch } from './branch-record.js';

/**
 * Where a branch's head was last published, with a copy of its record; see `primeFromHint`. A
 * `manifest` is the head's manifest as published (its stored bytes, base64), when they are small.
 */
const BranchHintZ = z.object({
  record: BranchRecordZ,
  head: ManifestRefZ,
  schema: z.string().optional(),
  manifest: z.string().optional(),
  /** The schema `schema` names, when the manifest does not carry it and it is small. */
  schemaDoc: z.unknown().optional(),
});

/**
 * The largest manifest (stored, compressed bytes) and schema (canonical text, which compresses to
 * a tenth or so) a hint carries. A hint is rewritten on every publication, so it stays a small
 * object: the manifest of a graph of a few dozen tables fits, and a schema of a few hundred.
 */
export const MAX_HINTED_MANIFEST_BYTES = 16 * 1024;
export const MAX_HINTED_SCHEMA_BYTES = 64 * 1024;

/** A branch's head hint as read: the record copy, the head it names, and that head's manifest when the hint carried it. */
export interface BranchHint {
  record: BranchRecord;
  head: ManifestRef;
  /** The head's manifest, decoded from the hint (rejects when it cannot be). */
  manifest?: Promise<Manifest>;
}

export function validateBranchName(name: string): void {
  const ok = BRANCH_NAME_RE.test(name) && !name.includes('//') && !name.includes('..') && !name.endsWith('/') && !name.endsWith('.');
  if (!ok) {
    throw new BranchgraphError(
      'invalid_input',
      `invalid branch name ${JSON.stringify(name)}: use letters, digits, '.', '_', '-' and '/' separators (no '..' or '//'), up to 200 characters`,
      {
        issues: [{ path: 'branch', message: 'invalid branch name' }],
      },
    );
  }
}

/** The branch a record key belongs to (`branches/<name>/<seq>.json`), or undefined for any other key. */
function recordName(key: string): string | undefined {
  const m = /^branches\/([^/]+)\/\d{8}\.json$/.exec(key);
  return m === null ? undefined : decodeBranchSegment(m[1] as string);
}

function readRecord(bytes: Uint8Array, key: string): BranchRecord {
  const rec = decodeJson(BranchRecordZ, bytes, key);
  if (key !== keys.branchRecord(rec.name, rec.seq)) {
    throw new BranchgraphError('corrupt_object', `${key} holds the record of ${JSON.stringify(rec.name)} #${rec.seq}`, {
      details: { key },
    });
  }
  return rec;
}

/** A branch record, which must name the branch and sequence number its key says. */
export class BranchRecords {
  constructor(
    private readonly store: ObjectStore,
    /** The newest record this process saw of each name (shared by every view of the graph). */
    private readonly cache: Map<string, BranchRecord>,
    private readonly o: { events: EventLog; versions: HeadVersions; manifests: ManifestStore; schemas: SchemaStore },
  ) {}

  /**
   * The newest record of a branch name (possibly a deletion), or undefined.
   * A known record is checked by asking for the next one; otherwise the
   * records after it are listed. `hinted` is a copy of some record of the
   * name (from the branch's head hint): records are create-only, so when
   * the listing shows its sequence number is the newest, it is that record
   * and needs no read.
   */
  async newest(name: string, signal?: AbortSignal, hinted?: Promise<BranchHint | undefined>): Promise<BranchRecord | undefined> {
    const cached = this.cache.get(name);
    // Records are create-only, numbered without gaps and never deleted: a record newer than the one
    // this process knows exists exactly when the next number does. Asking for it by name costs one
    // small request, where a listing costs a directory read (and on S3 the same round trip).
    if (cached !== undefined && (await this.store.head(keys.branchRecord(name, cached.seq + 1), { signal })) === undefined) return cached;
    let latest = cached;
    const startAfter = cached === undefined ? undefined : keys.branchRecord(name, cached.seq);
    let newestKey: string | undefined;
    for await (const o of this.store.list(keys.branchPrefix(name), { signal, startAfter })) {
      if (seqOfBranchKey(o.key) !== undefined) newestKey = o.key;
    }
    if (newestKey !== undefined) {
      const copy = (await hinted)?.record;
      latest =
        copy !== undefined && keys.branchRecord(copy.name, copy.seq) === newestKey
          ? copy
          : readRecord(await this.store.get(newestKey, { signal }), newestKey);
      this.cache.set(name, latest);
    }
    return latest;
  }

  /** The branch record stored at `key` (checked to be the record its key names). */
  async read(key: string, signal?: AbortSignal): Promise<BranchRecord> {
    return readRecord(await this.store.get(key, { signal }), key);
  }

  /**
   * The branch's record as this process last saw it, when it also knows that lineage's latest
   * version (then a head hint would only cost a read).
   */
  known(name: string): BranchRecord | undefined {
    const rec = this.cache.get(name);
    return rec !== undefined && this.o.versions.knows(rec.lineage) ? rec : undefined;
  }

  /**
   * The branch's head hint, read and put to use at once: the head it names
   * is published, so its lineage's listing can start from it and its
   * manifest (and schema) can be read while the branch record is listed.
   * A manifest the hint carries is taken as read: a published version never
   * changes, and the hint is written only after its version landed.
   * Resolves to the hint (undefined when there is no usable one);
   * everything it prefetches goes through the ordinary caches, so a stale
   * hint costs reads, never a wrong head.
   */
  primeFromHint(name: string, signal?: AbortSignal): Promise<BranchHint | undefined> {
    const key = keys.branchHint(name);
    return this.store.get(key, { signal }).then(
      (bytes) => {
        let hint: z.infer<typeof BranchHintZ>;
        try {
          hint = decodeJson(BranchHintZ, bytes, key);
        } catch {
          // A damaged hint is no hint.
          return undefined;
        }
        if (key !== keys.branchHint(hint.record.name)) return undefined;
        if (hint.head.lineage === hint.record.lineage) this.o.versions.hinted(hint.head.lineage, hint.head.version);
        const manifest =
          hint.manifest === undefined
            ? this.o.manifests.read(hint.head, signal)
            : this.o.manifests.adopt(hint.head, Buffer.from(hint.manifest, 'base64'), signal);
        manifest.catch(() => undefined);
        // A schema the hint carries is taken if it is the one its hash names, else read.
        if (hint.schema !== undefined && !this.o.schemas.adopt(hint.schema, hint.schemaDoc))
          void this.o.schemas.read(hint.schema, signal).catch(() => undefined);
        return { record: hint.record, head: hint.head, ...(hint.manifest !== undefined ? { manifest } : {}) };
      },
      () => undefined,
    );
  }

  /**
   * Record where a branch's head is now, with its manifest when that is small and its schema when
   * manifests name it only by hash (best effort: a lost or stale hint only costs round trips).
   */
  async writeHint(record: BranchRecord, head: Manifest): Promise<void> {
    const bytes = this.storedBytes(head);
    const schema = head.schemaDoc === undefined ? head.schema : undefined;
    // From memory only (the publisher just used it): a hint never reads the store.
    const doc = schema === undefined ? undefined : await this.o.schemas.held(schema)?.catch(() => undefined);
    const hint = {
      record,
      head: refOf(head),
      schema,
      manifest: bytes !== undefined && bytes.length <= MAX_HINTED_MANIFEST_BYTES ? Buffer.from(bytes).toString('base64') : undefined,
      schemaDoc: doc !== undefined && schemaTextOf(doc).length <= MAX_HINTED_SCHEMA_BYTES ? doc : undefined,
    };
    await this.store.putOverwrite(keys.branchHint(record.name), encodeJson(hint), BEST_EFFORT).catch(() => undefined);
  }

  /**
   * A manifest's stored bytes as this process can write them again. Only the run lists it laid out
   * or read from a run-list part are known to it (run-list-parts.ts): the manifest a new branch is
   * created on, read from the store, may hold others, and then the hint goes without it.
   */
  private storedBytes(m: Manifest): Uint8Array | undefined {
    try {
      return this.o.manifests.encode(m);
    } catch {
      return undefined;
    }
  }

  async live(name: string, signal?: AbortSignal, hinted?: Promise<BranchHint | undefined>): Promise<BranchRecord> {
    validateBranchName(name);
    const rec = await this.newest(name, signal, hinted);
    if (rec === undefined || rec.deleted)
      throw new BranchgraphError('not_found', `branch ${name} does not exist`, { details: { branch: name } });
    return rec;
  }

  /**
   * Every branch's newest record, deletions included, sorted by name, and
   * the branches whose newest record cannot be read. Damage stays local:
   * one corrupt record never hides the other branches. Keys under
   * `branches/` that no branch name encodes are not branches and are
   * passed over.
   */
  async all(signal?: AbortSignal): Promise<{
    records: BranchRecord[];
    damaged: DamagedBranch[];
    writtenAt: Map<string, number | undefined>;
    /** Each branch's records oldest first, with when the store wrote each (GC keeps what a recent reset replaced). */
    history: Map<string, { key: string; writtenAt: number | undefined }[]>;
  }> {
    const newest = new Map<string, string>();
    // When each newest record was written, by the store's clock (GC judges a deletion's age by it).
    const writtenAt = new Map<string, number | undefined>();
    const history = new Map<string, { key: string; writtenAt: number | undefined }[]>();
    for await (const o of this.store.list(keys.allBranches(), { signal })) {
      const name = recordName(o.key);
      if (name !== undefined) {
        newest.set(name, o.key);
        writtenAt.set(name, o.lastModified);
        const h = history.get(name) ?? [];
        h.push({ key: o.key, writtenAt: o.lastModified });
        history.set(name, h);
      }
    }
    const damaged: DamagedBranch[] = [];
    const records = (await this.readNewest([...newest], damaged, signal)).filter((r): r is BranchRecord => r !== undefined);
    const byName = <T extends { name: string }>(a: T, b: T): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    return { records: records.sort(byName), damaged: damaged.sort(byName), writtenAt, history };
  }

  /**
   * One page of live branch records in key order, after the branch named `after` and among names
   * starting with `prefix` (listed from that prefix's keys alone): the listing starts right after
   * that name's records and stops once the page is full and one more kept name was seen, so a page
   * costs its own names (and any deleted or filtered-out names between them), never the rest of the
   * graph. Deleted names and those `keep` refuses are skipped; unreadable records are reported as
   * damaged. A filter that keeps few names would scan far: a page looks at most `scanLimit` names
   * (a page's worth ten times over, and at least 1,000), and then ends short, with `next` naming
   * the last name it looked at, so the next page goes on from there.
   */
  async page(q: {
    after?: string | undefined;
    limit: number;
    prefix?: string | undefined;
    keep?: ((rec: BranchRecord) => boolean) | undefined;
    signal?: AbortSignal | undefined;
  }): Promise<{ records: BranchRecord[]; damaged: DamagedBranch[]; next: string | undefined }> {
    const { after, limit, signal } = q;
    const scanLimit = q.keep === undefined ? Number.POSITIVE_INFINITY : Math.max(1000, 10 * limit);
    const records: BranchRecord[] = [];
    const damaged: DamagedBranch[] = [];
    // Names whose newest record is known, waiting to be read in one parallel batch.
    let batch: [string, string][] = [];
    let current: [string, string] | undefined;
    let more = false;
    let scanned = 0;
    let lastScanned: string | undefined;
    const flush = async (): Promise<void> => {
      for (const r of await this.readNewest(batch, damaged, signal)) {
        if (r === undefined || r.deleted || (q.keep !== undefined && !q.keep(r))) continue;
        if (records.length < limit) records.push(r);
        else more = true;
      }
      scanned += batch.length;
      lastScanned = batch[batch.length - 1]?.[0] ?? lastScanned;
      batch = [];
    };
    const prefix = keys.allBranches() + (q.prefix === undefined ? '' : encodeBranch(q.prefix));
    const startAfter = after === undefined ? undefined : keys.branchRecord(after, 99_999_999);
    for await (const o of this.store.list(prefix, { signal, startAfter, pageSize: Math.min(1000, 2 * limit + 2) })) {
      const name = recordName(o.key);
      if (name === undefined) continue;
      if (current !== undefined && current[0] !== name) {
        batch.push(current);
        if (batch.length >= Math.min(limit + 1 - records.length, scanLimit - scanned)) await flush();
        if (more) break;
        if (scanned >= scanLimit) return { records, damaged, next: lastScanned };
      }
      current = [name, o.key];
    }
    // The listing ended (no break): the last name is still waiting.
    if (!more) {
      if (current !== undefined) batch.push(current);
      await flush();
    }
    return { records, damaged, next: more ? records[records.length - 1]?.name : undefined };
  }

  /**
   * The records at `[name, key]` pairs, read in parallel and cached; one that cannot be read is
   * undefined in its place and reported in `damaged`.
   */
  private async readNewest(
    pairs: readonly [string, string][],
    damaged: DamagedBranch[],
    signal?: AbortSignal,
  ): Promise<(BranchRecord | undefined)[]> {
    const read = await Promise.all(
      pairs.map(async ([name, key]) => {
        try {
          return readRecord(await this.store.get(key, { signal }), key);
        } catch (e) {
          if (!isBranchgraphError(e, 'corrupt_object')) throw e;
          damaged.push({ name, key, error: e.message });
          return undefined;
        }
      }),
    );
    for (const r of read) if (r !== undefined) this.cache.set(r.name, r);
    return read;
  }

  /**
   * The newest record key of `name` and its sequence number when that
   * record cannot be read: an admin may still delete the branch (a new
   * deletion record above it), after which the name can be used again.
   */
  async damaged(name: string, signal?: AbortSignal): Promise<{ key: string; seq: number } | undefined> {
    let newestKey: string | undefined;
    for await (const o of this.store.list(keys.branchPrefix(name), { signal })) if (seqOfBranchKey(o.key) !== undefined) newestKey = o.key;
    if (newestKey === undefined) return undefined;
    try {
      readRecord(await this.store.get(newestKey, { signal }), newestKey);
      return undefined;
    } catch (e) {
      if (!isBranchgraphError(e, 'corrupt_object')) throw e;
      return { key: newestKey, seq: seqOfBranchKey(newestKey) as number };
    }
  }

  /**
   * Write the next record for `name`, create-only. `expectSeq` is the seq of
   * the record the caller decided on (0 for none); a lost race is reported as
   * `lost` so the caller can re-read and decide again.
   */
  async write(
    rec: Omit<BranchRecord, 'format' | 'seq'>,
    expectSeq: number,
    at: { event: EventKind; signal?: AbortSignal | undefined },
  ): Promise<BranchRecord | 'lost'> {
    const { signal } = at;
    const full: BranchRecord = { format: 1, seq: expectSeq + 1, ...rec };
    const key = keys.branchRecord(rec.name, full.seq);
    const bytes = encodeJson(full);
    try {
      const draft = { kind: at.event, actor: rec.actor, branch: rec.name };
      await this.o.events.around({ draft, key, bytes, signal }, () => this.store.putIfAbsent(key, bytes, { signal }));
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) return 'lost';
      throw e;
    }
    this.cache.set(rec.name, full);
    return full;
  }
}
