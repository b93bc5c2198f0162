import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { sortInTurns } from './sort-in-turns.js';

describe('sortInTurns', () => {
  it('property: sorts as Array.prototype.sort does, stably, at any length across its runs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 70_000 }), fc.integer({ min: 1, max: 500 }), fc.integer(), async (n, distinct, seed) => {
        // Few distinct keys, so equal keys meet across runs and stability is tested.
        const items = Array.from({ length: n }, (_, i) => ({ key: ((i * 7919 + seed) >>> 0) % distinct, at: i }));
        const byKey = (x: { key: number }, y: { key: number }): number => x.key - y.key;
        const expected = [...items].sort(byKey);
        const sorted = await sortInTurns(items, byKey);
        expect(sorted).toBe(items);
        expect(sorted).toEqual(expected);
      }),
      { numRuns: 12 },
    );
  });
});
