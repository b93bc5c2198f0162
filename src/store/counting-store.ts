import { STORE_OPS, type ObjectStore, type StoreOp } from './object-store.js';
import { StoreWrapper, type CallContext } from './store-wrapper.js';
import { longestChain } from './round-trips.js';

export interface OpCounts {
  calls: number;
  bytesRead: number;
  bytesWritten: number;
}

/**
 * Calls and bytes per store operation, their total, and `cached`: reads a cache of this process
 * answered instead of the store (`calls` hits, `bytesRead` the stored bytes they stood for). A
 * merge on a warm server reads its runs from memory, so its store `bytesRead` is rightly 0; the
 * cached figure says how much it read all the same. `total` counts the store only.
 */
export type StoreCounts = Record<StoreOp, OpCounts> & { total: OpCounts; cached: OpCounts };

/** Where a cache notes the reads it answered for the request being counted. */
export interface CacheReads {
  cached(bytes: number): void;
}

function zero(): OpCounts {
  return { calls: 0, bytesRead: 0, bytesWritten: 0 };
}

export function emptyCounts(): StoreCounts {
  const counts = { total: zero(), cached: zero() } as StoreCounts;
  for (const op of STORE_OPS) counts[op] = zero();
  return counts;
}

/** `after - before`, per operation: the cost of what happened in between. */
export function diffCounts(after: StoreCounts, before: StoreCounts): StoreCounts {
  const out = emptyCounts();
  for (const op of [...STORE_OPS, 'total', 'cached'] as const) {
    out[op] = {
      calls: after[op].calls - before[op].calls,
      bytesRead: after[op].bytesRead - before[op].bytesRead,
      bytesWritten: after[op].bytesWritten - before[op].bytesWritten,
    };
  }
  return out;
}

/**
 * Counts calls and bytes per operation. Counting happens when a call
 * completes or fails, so a failed call still costs one call.
 */
export class CountingStore extends StoreWrapper implements CacheReads {
  private counts = emptyCounts();
  /** When each call started and ended (performance.now), for `dependentRoundTrips`. */
  private spans: [start: number, end: number][] = [];

  constructor(inner: ObjectStore) {
    super(inner);
  }

  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const c = this.counts[ctx.op];
    c.calls++;
    this.counts.total.calls++;
    c.bytesWritten += ctx.bytesOut;
    this.counts.total.bytesWritten += ctx.bytesOut;
    const start = performance.now();
    try {
      const result = await call();
      if (result instanceof Uint8Array) {
        c.bytesRead += result.length;
        this.counts.total.bytesRead += result.length;
      }
      return result;
    } finally {
      this.spans.push([start, performance.now()]);
    }
  }

  /** The critical path of the calls counted so far: the longest chain of calls each started after the one before it ended. */
  dependentRoundTrips(): number {
    return longestChain(this.spans);
  }

  cached(bytes: number): void {
    this.counts.cached.calls++;
    this.counts.cached.bytesRead += bytes;
  }

  snapshot(): StoreCounts {
    return structuredClone(this.counts);
  }

  reset(): void {
    this.counts = emptyCounts();
    this.spans = [];
  }
}
