import type { CallOptions, GetOptions, ListOptions, ObjectInfo, ObjectStore, PutOptions, StoreOp } from './object-store.js';

/** What a wrapper knows about one call when it intercepts it. */
export interface CallContext {
  op: StoreOp;
  key: string;
  signal?: AbortSignal;
  /** Bytes sent (puts). */
  bytesOut: number;
}

/**
 * Base for wrappers that observe or disturb calls (counting, latency,
 * faults). Subclasses implement `around`, which runs once per call; for
 * `list` it wraps fetching the first entry, where a real store makes its
 * first request.
 */
export abstract class StoreWrapper implements ObjectStore {
  readonly kind: string;

  constructor(protected readonly inner: ObjectStore) {
    this.kind = inner.kind;
  }

  /** The store this one wraps. */
  get wrapped(): ObjectStore {
    return this.inner;
  }

  protected abstract around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T>;

  get(key: string, opts: GetOptions = {}): Promise<Uint8Array> {
    return this.around({ op: 'get', key, signal: opts.signal, bytesOut: 0 }, () => this.inner.get(key, opts));
  }

  head(key: string, opts: CallOptions = {}): Promise<ObjectInfo | undefined> {
    return this.around({ op: 'head', key, signal: opts.signal, bytesOut: 0 }, () => this.inner.head(key, opts));
  }

  putIfAbsent(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    return this.around({ op: 'putIfAbsent', key, signal: opts.signal, bytesOut: body.length }, () =>
      this.inner.putIfAbsent(key, body, opts),
    );
  }

  putOverwrite(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    return this.around({ op: 'putOverwrite', key, signal: opts.signal, bytesOut: body.length }, () =>
      this.inner.putOverwrite(key, body, opts),
    );
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    const it = this.inner.list(prefix, opts)[Symbol.asyncIterator]();
    let next = await this.around({ op: 'list', key: prefix, signal: opts.signal, bytesOut: 0 }, () => it.next());
    while (next.done !== true) {
      yield next.value;
      next = await it.next();
    }
  }

  deleteMany(keys: readonly string[], opts: CallOptions = {}): Promise<void> {
    return this.around({ op: 'deleteMany', key: keys[0] ?? '', signal: opts.signal, bytesOut: 0 }, () => this.inner.deleteMany(keys, opts));
  }

  async close(): Promise<void> {
    await this.inner.close?.();
  }

  async sweepTemps(olderThanMs?: number, now?: number): Promise<number> {
    return (await this.inner.sweepTemps?.(olderThanMs, now)) ?? 0;
  }
}

/** The store under every wrapper: what a test that tampers with a memory store's objects must reach. */
export function innermostStore(store: ObjectStore): ObjectStore {
  let s = store;
  while (s instanceof StoreWrapper) s = s.wrapped;
  return s;
}
