import { describe, expect, it } from 'vitest';
import { LOAD_HEAP_GROWING_PERCENT, LoadHeap } from './load-heap.js';

describe("a streaming load's heap", () => {
  it('fixes the growing factor while any load runs, and gives it back to V8 when the last ends, failed or not', async () => {
    const set: string[] = [];
    const heap = new LoadHeap((f) => set.push(f), false);
    let finishFirst: () => void = () => undefined;
    const first = heap.during(() => new Promise<void>((r) => (finishFirst = r)));
    const second = heap.during(() => Promise.reject(new Error('refused')));
    await expect(second).rejects.toThrow('refused');
    expect(set).toEqual([`--heap-growing-percent=${LOAD_HEAP_GROWING_PERCENT}`]);
    finishFirst();
    await first;
    expect(set).toEqual([`--heap-growing-percent=${LOAD_HEAP_GROWING_PERCENT}`, '--heap-growing-percent=0']);
    await expect(heap.during(async () => 7)).resolves.toBe(7);
    expect(set).toHaveLength(4);
  });

  it('leaves a factor the process was started with alone', async () => {
    const set: string[] = [];
    await new LoadHeap((f) => set.push(f), true).during(async () => undefined);
    expect(set).toEqual([]);
  });
});
