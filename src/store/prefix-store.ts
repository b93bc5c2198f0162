/**
 * One store seen as many: every key is read and written under a fixed
 * prefix, and listings come back without it. A server hosting several
 * graphs in one bucket gives each its own `PrefixStore`, so no graph can
 * name another's objects and each graph's layout is the plain one.
 */
import type { CallOptions, GetOptions, ListOptions, ObjectInfo, ObjectStore, PutOptions } from './object-store.js';

/** A store seen under a key prefix, as each hosted graph sees its own. */
export class PrefixStore implements ObjectStore {
  readonly kind: string;

  constructor(
    private readonly inner: ObjectStore,
    readonly prefix: string,
  ) {
    if (!prefix.endsWith('/')) throw new Error(`a store prefix ends with '/': ${prefix}`);
    this.kind = inner.kind;
  }

  get(key: string, opts?: GetOptions): Promise<Uint8Array> {
    return this.inner.get(this.prefix + key, opts);
  }

  head(key: string, opts?: CallOptions): Promise<ObjectInfo | undefined> {
    return this.inner.head(this.prefix + key, opts).then((i) => (i === undefined ? undefined : { ...i, key }));
  }

  putIfAbsent(key: string, body: Uint8Array, opts?: PutOptions): Promise<void> {
    return this.inner.putIfAbsent(this.prefix + key, body, opts);
  }

  putOverwrite(key: string, body: Uint8Array, opts?: PutOptions): Promise<void> {
    return this.inner.putOverwrite(this.prefix + key, body, opts);
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    const startAfter = opts.startAfter === undefined ? undefined : this.prefix + opts.startAfter;
    for await (const o of this.inner.list(this.prefix + prefix, { ...opts, startAfter }))
      yield { ...o, key: o.key.slice(this.prefix.length) };
  }

  deleteMany(keys: readonly string[], opts?: CallOptions): Promise<void> {
    return this.inner.deleteMany(
      keys.map((k) => this.prefix + k),
      opts,
    );
  }

  /** The inner store is shared: closing one graph's view leaves it open. */
  async close(): Promise<void> {}
}
