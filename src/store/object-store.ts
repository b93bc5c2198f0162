/**
 * The ObjectStore port: the only way branchgraph touches durable state.
 *
 * It is deliberately small so that an S3 bucket, a local directory and an
 * in-memory map can all honour it exactly. The one atomic primitive is
 * `putIfAbsent` (create-only); everything published is a new immutable object
 * at a new key. `putOverwrite` exists only for best-effort hints whose loss or
 * staleness never changes what a reader sees, only how fast it finds it.
 *
 * Failures are `BranchgraphError`s with store codes:
 * - `object_not_found`: `get` of a missing key;
 * - `object_exists`: `putIfAbsent` lost to an existing object;
 * - `store_unavailable`: transient, the caller may retry;
 * - `aborted`: the signal fired;
 * - `store_error`: anything else.
 */
import { isBranchgraphError } from '../model/errors.js';

/** An object as a listing or a HEAD shows it: its key, size and when the store wrote it. */
export interface ObjectInfo {
  key: string;
  size: number;
  /**
   * When the object was last written, in ms since the epoch, by the store's own clock (S3's
   * `LastModified`, a file's mtime): the one clock every process sharing a store agrees on. GC
   * judges ages by it, never by a writer's clock. Every adapter sets it.
   */
  lastModified?: number;
}

/** A byte range: `{ offset, length? }` from the start, or the last `suffix` bytes. */
export type ByteRange = { offset: number; length?: number } | { suffix: number };

export interface CallOptions {
  signal?: AbortSignal;
}

export interface PutOptions extends CallOptions {
  /**
   * False for a best-effort object whose readers tolerate its loss, or finding it damaged, after a
   * crash (hints, an event's confirmation mark): a store may then skip what only durability costs
   * (a local directory its fsyncs). Every other object is durable once its put resolves.
   */
  durable?: boolean;
}

/** Puts of best-effort objects (see `PutOptions.durable`). */
export const BEST_EFFORT: PutOptions = Object.freeze({ durable: false });

export interface GetOptions extends CallOptions {
  range?: ByteRange;
}

export interface ListOptions extends CallOptions {
  /** Only keys strictly greater than this one. */
  startAfter?: string;
  /** Keys fetched per underlying request; adapters may cap it. */
  pageSize?: number;
}

/** The one way branchgraph touches durable state (see the file header for the contract every adapter honours). */
export interface ObjectStore {
  /** A short name for logs and metrics: `memory`, `fs`, `s3`. */
  readonly kind: string;
  get(key: string, opts?: GetOptions): Promise<Uint8Array>;
  /** Size of the object, or undefined when it does not exist. */
  head(key: string, opts?: CallOptions): Promise<ObjectInfo | undefined>;
  /** Create `key` only if it does not exist; otherwise fail with `object_exists`. */
  putIfAbsent(key: string, body: Uint8Array, opts?: PutOptions): Promise<void>;
  /** Unconditional write, for best-effort hints only. */
  putOverwrite(key: string, body: Uint8Array, opts?: PutOptions): Promise<void>;
  /** Keys with `prefix`, ascending in byte order, lazily paged. */
  list(prefix: string, opts?: ListOptions): AsyncIterable<ObjectInfo>;
  /** Delete keys; missing keys are not an error. */
  deleteMany(keys: readonly string[], opts?: CallOptions): Promise<void>;
  /** Release sockets and handles. */
  close?(): Promise<void>;
  /** Remove scratch a killed process left behind (fs temp files); returns how many. */
  sweepTemps?(olderThanMs?: number, now?: number): Promise<number>;
}

/** The store operations, as named in counters and metrics. */
export const STORE_OPS = ['get', 'head', 'putIfAbsent', 'putOverwrite', 'list', 'deleteMany'] as const;
export type StoreOp = (typeof STORE_OPS)[number];

/** Resolve a range against an object of `size` bytes into [start, end). */
export function resolveRange(range: ByteRange | undefined, size: number): [number, number] {
  if (range === undefined) return [0, size];
  if ('suffix' in range) return [Math.max(0, size - range.suffix), size];
  const start = Math.min(range.offset, size);
  const end = range.length === undefined ? size : Math.min(size, range.offset + range.length);
  return [start, Math.max(start, end)];
}

/** Byte-order comparison of keys, as S3 lists them (UTF-8 code unit order). */
export function compareKeys(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** An object's bytes, or undefined when the store holds no object at `key`. */
export async function getIfPresent(store: ObjectStore, key: string, opts?: GetOptions): Promise<Uint8Array | undefined> {
  try {
    return await store.get(key, opts);
  } catch (e) {
    if (isBranchgraphError(e, 'object_not_found')) return undefined;
    throw e;
  }
}

/** Collect a listing into an array. */
export async function listAll(store: ObjectStore, prefix: string, opts?: ListOptions): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const info of store.list(prefix, opts)) out.push(info);
  return out;
}
