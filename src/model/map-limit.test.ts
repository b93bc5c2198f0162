import { describe, expect, it } from 'vitest';
import { mapLimit } from './map-limit.js';

describe('mapLimit', () => {
  it('keeps order and never has more than `limit` calls in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3], 2, async (x) => {
      peak = Math.max(peak, ++inFlight);
      await new Promise((r) => setTimeout(r, x));
      inFlight--;
      return x * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30]);
    expect(peak).toBe(2);
  });

  it('regression: starts no item after one rejects, and settles only when the calls in flight have', async () => {
    const started: number[] = [];
    let running = 0;
    const p = mapLimit([0, 1, 2, 3, 4, 5, 6, 7], 2, async (i) => {
      started.push(i);
      running++;
      await new Promise((r) => setTimeout(r, i === 0 ? 1 : 10));
      running--;
      if (i === 0) throw new Error('first fails');
      return i;
    });
    await expect(p).rejects.toThrow('first fails');
    expect(running).toBe(0);
    expect(started).toEqual([0, 1]);
  });
});
