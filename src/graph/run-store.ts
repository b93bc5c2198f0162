/**
 * Reading and writing runs through the object store, with a byte-bounded
 * cache of decoded runs. Runs are immutable, so a cached run never goes
 * stale; the cache only bounds memory. Concurrent loads of one run share a
 * single read.
 */
import { ulid } from 'ulid';
import type { TableType } from '../model/schema.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeRun, encodeRun, runRefOf, type RunData, type RunRef, type RunRow } from '../table/run.js';
import type { LoadRun } from '../table/table-version.js';
import { keys } from './keys.js';

export const DEFAULT_RUN_CACHE_BYTES = 256 * 1024 * 1024;

export class RunStore {
  private readonly cache = new Map<string, { data: Promise<RunData>; bytes: number }>();
  private cachedBytes = 0;

  constructor(
    private readonly store: ObjectStore,
    private readonly cacheBytes = DEFAULT_RUN_CACHE_BYTES,
  ) {}

  /** Write `rows` (sorted, unique keys) as a new run of `table`. */
  async write(table: TableType, rows: readonly RunRow[], signal?: AbortSignal): Promise<RunRef> {
    const key = keys.run(table.name, ulid());
    const bytes = encodeRun(table, rows);
    await this.store.putIfAbsent(key, bytes, { signal });
    return runRefOf(key, rows, bytes.length);
  }

  load(table: TableType, ref: RunRef, signal?: AbortSignal): Promise<RunData> {
    // Decoding depends on the table's properties, so the schema shape is part of the cache key.
    const cacheKey = `${ref.key}\u0000${table.props.map((p) => p.name).join(',')}`;
    const hit = this.cache.get(cacheKey);
    if (hit !== undefined) {
      this.cache.delete(cacheKey);
      this.cache.set(cacheKey, hit);
      return hit.data;
    }
    const data = this.store.get(ref.key, { signal }).then((bytes) => decodeRun(table, bytes, ref.key));
    const entry = { data, bytes: ref.bytes };
    this.cache.set(cacheKey, entry);
    this.cachedBytes += ref.bytes;
    // A failed load must not poison the cache.
    data.catch(() => {
      if (this.cache.get(cacheKey) === entry) {
        this.cache.delete(cacheKey);
        this.cachedBytes -= entry.bytes;
      }
    });
    this.evict();
    return data;
  }

  loader(table: TableType, signal?: AbortSignal): LoadRun {
    return (ref) => this.load(table, ref, signal);
  }

  async delete(refs: readonly RunRef[], signal?: AbortSignal): Promise<void> {
    if (refs.length > 0) await this.store.deleteMany(refs.map((r) => r.key), { signal });
  }

  clear(): void {
    this.cache.clear();
    this.cachedBytes = 0;
  }

  private evict(): void {
    for (const [k, v] of this.cache) {
      if (this.cachedBytes <= this.cacheBytes || this.cache.size <= 1) break;
      this.cache.delete(k);
      this.cachedBytes -= v.bytes;
    }
  }
}
