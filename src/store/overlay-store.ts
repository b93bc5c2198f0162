/**
 * A store seen with some objects laid over it, read-only: reads find the
 * laid objects first, then the store beneath. A pushed pack is checked
 * through one (graph/pack-check.ts): its manifests decode and resolve
 * exactly as they would once written, while nothing is written yet, so a
 * refused push leaves the store as it was.
 */
import { BranchgraphError } from '../model/errors.js';
import {
  compareKeys,
  resolveRange,
  type CallOptions,
  type GetOptions,
  type ListOptions,
  type ObjectInfo,
  type ObjectStore,
} from './object-store.js';

export class OverlayStore implements ObjectStore {
  readonly kind: string;

  constructor(
    private readonly under: ObjectStore,
    private readonly laid: ReadonlyMap<string, Uint8Array>,
  ) {
    this.kind = under.kind;
  }

  async get(key: string, opts?: GetOptions): Promise<Uint8Array> {
    const mine = this.laid.get(key);
    if (mine === undefined) return this.under.get(key, opts);
    const [start, end] = resolveRange(opts?.range, mine.byteLength);
    return mine.subarray(start, end);
  }

  async head(key: string, opts?: CallOptions): Promise<ObjectInfo | undefined> {
    const mine = this.laid.get(key);
    return mine !== undefined ? { key, size: mine.byteLength } : this.under.head(key, opts);
  }

  async *list(prefix: string, opts: ListOptions = {}): AsyncIterable<ObjectInfo> {
    const mine = [...this.laid.entries()]
      .filter(([k]) => k.startsWith(prefix) && (opts.startAfter === undefined || compareKeys(k, opts.startAfter) > 0))
      .map(([key, b]) => ({ key, size: b.byteLength }));
    const all = new Map<string, ObjectInfo>();
    for await (const o of this.under.list(prefix, opts)) all.set(o.key, o);
    for (const o of mine) all.set(o.key, o);
    yield* [...all.values()].sort((x, y) => compareKeys(x.key, y.key));
  }

  putIfAbsent(key: string): Promise<void> {
    return readOnly(key);
  }

  putOverwrite(key: string): Promise<void> {
    return readOnly(key);
  }

  deleteMany(keys: readonly string[]): Promise<void> {
    return readOnly(keys[0] ?? '');
  }
}

function readOnly(key: string): Promise<never> {
  return Promise.reject(new BranchgraphError('internal', `an overlay is read-only (${key})`));
}
