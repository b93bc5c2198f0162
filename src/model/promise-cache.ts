/**
 * A cache of values being loaded or loaded: concurrent `get`s of one key
 * share a single load, a failed load is forgotten (the next `get` tries
 * again), and, when bounded, the least recently used entries are evicted
 * once the total weight passes the bound. Every cache of immutable objects
 * (runs, run indexes, generations, manifests, schemas) is one of these.
 */
export interface PromiseCacheOptions<V> {
  /** The most total weight kept; the newest entry stays even when it alone is heavier. Default: unbounded. */
  maxWeight?: number;
  /** A loaded value's weight, when `get` was not told one (default 1). */
  weigh?: (value: V) => number;
}

interface Entry<V> {
  value: Promise<V>;
  weight: number;
}

export class PromiseCache<K, V> {
  private readonly entries = new Map<K, Entry<V>>();
  private total = 0;

  constructor(private readonly opts: PromiseCacheOptions<V> = {}) {}

  /** The cached value of `key`, or the one `load` produces, counted as `weight` (else weighed once loaded). */
  get(key: K, load: () => Promise<V>, weight?: number): Promise<V> {
    const hit = this.entries.get(key);
    if (hit !== undefined) {
      // Map order is recency order: move the hit to the end.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    return this.put(key, load(), weight);
  }

  /** Remember a value known without loading it (one just written). */
  set(key: K, value: V, weight?: number): void {
    this.remove(key);
    this.put(key, Promise.resolve(value), weight ?? this.opts.weigh?.(value) ?? 1);
  }

  /** The cached value of `key`, if any, without making it recent (a one-off read should not keep it). */
  peek(key: K): Promise<V> | undefined {
    return this.entries.get(key)?.value;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  get size(): number {
    return this.entries.size;
  }

  /** The total weight held. */
  get weight(): number {
    return this.total;
  }

  clear(): void {
    this.entries.clear();
    this.total = 0;
  }

  private put(key: K, value: Promise<V>, weight: number | undefined): Promise<V> {
    const entry: Entry<V> = { value, weight: weight ?? 0 };
    this.entries.set(key, entry);
    this.total += entry.weight;
    value.then(
      (v) => {
        if (weight !== undefined || this.entries.get(key) !== entry) return;
        entry.weight = this.opts.weigh?.(v) ?? 1;
        this.total += entry.weight;
        this.evict();
      },
      () => {
        if (this.entries.get(key) === entry) this.remove(key);
      },
    );
    this.evict();
    return value;
  }

  private remove(key: K): void {
    const e = this.entries.get(key);
    if (e === undefined) return;
    this.entries.delete(key);
    this.total -= e.weight;
  }

  private evict(): void {
    const max = this.opts.maxWeight;
    if (max === undefined) return;
    for (const key of this.entries.keys()) {
      if (this.total <= max || this.entries.size <= 1) break;
      this.remove(key);
    }
  }
}
