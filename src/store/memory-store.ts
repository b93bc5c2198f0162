import { BranchgraphError, throwIfAborted } from '../model/errors.js';
import {
  compareKeys,
  resolveRange,
  type CallOptions,
  type GetOptions,
  type PutOptions,
  type ListOptions,
  type ObjectInfo,
  type ObjectStore,
} from './object-store.js';

/**
 * An in-process store for tests and simulation. Objects are copied on the way
 * in and out so that a caller mutating a buffer can never change stored data.
 * Its clock stamps each object's `lastModified`, as a real store's does; the
 * simulation gives it the true time and each process a skewed one.
 */
export class MemoryStore implements ObjectStore {
  readonly kind = 'memory';
  private readonly objects = new Map<string, Uint8Array>();
  private readonly modified = new Map<string, number>();

  constructor(private readonly clock: () => number = Date.now) {}

  async get(key: string, opts: GetOptions = {}): Promise<Uint8Array> {
    throwIfAborted(opts.signal);
    const body = this.objects.get(key);
    if (body === undefined) throw BranchgraphError.expected('object_not_found', `no object at ${key}`, { details: { key } });
    const [start, end] = resolveRange(opts.range, body.length);
    return body.slice(start, end);
  }

  async head(key: string, opts: CallOptions = {}): Promise<ObjectInfo | undefined> {
    throwIfAborted(opts.signal);
    const body = this.objects.get(key);
    return body === undefined ? undefined : { key, size: body.length, lastModified: this.modified.get(key) as number };
  }

  async putIfAbsent(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    throwIfAborted(opts.signal);
    if (this.objects.has(key)) throw new BranchgraphError('object_exists', `an object already exists at ${key}`, { details: { key } });
    this.set(key, body);
  }

  async putOverwrite(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    throwIfAborted(opts.signal);
    this.set(key, body);
  }

  private set(key: string, body: Uint8Array): void {
    this.objects.set(key, body.slice());
    this.modified.set(key, this.clock());
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    throwIfAborted(opts.signal);
    const keys = [...this.objects.keys()]
      .filter((k) => k.startsWith(prefix) && (opts.startAfter === undefined || compareKeys(k, opts.startAfter) > 0))
      .sort(compareKeys);
    for (const key of keys) {
      const body = this.objects.get(key);
      if (body !== undefined) yield { key, size: body.length, lastModified: this.modified.get(key) as number };
    }
  }

  async deleteMany(keys: readonly string[], opts: CallOptions = {}): Promise<void> {
    throwIfAborted(opts.signal);
    for (const key of keys) {
      this.objects.delete(key);
      this.modified.delete(key);
    }
  }

  /** Test helper: replace an object's bytes in place, as disk corruption would. */
  corrupt(key: string, body: Uint8Array): void {
    if (!this.objects.has(key)) throw new Error(`no object at ${key}`);
    this.objects.set(key, body.slice());
  }

  get size(): number {
    return this.objects.size;
  }
}
