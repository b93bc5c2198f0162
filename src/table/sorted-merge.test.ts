import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeSorted } from './sorted-merge.js';

async function* batches<T>(items: readonly T[], cuts: readonly number[]): AsyncGenerator<T[]> {
  let at = 0;
  for (const c of cuts) {
    yield items.slice(at, at + c);
    at += c;
  }
  yield items.slice(at);
}

describe('mergeSorted', () => {
  it('property: gives every item of every source in key order, equal keys in source order, whatever the batches', async () => {
    const source = fc.tuple(
      fc.array(fc.constantFrom('a', 'b', 'bb', 'c', 'd', 'é', 'z'), { maxLength: 30 }).map((ks) => ks.sort()),
      fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 6 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(source, { maxLength: 6 }), fc.integer({ min: 1, max: 7 }), async (sources, batch) => {
        const out: string[] = [];
        for await (const b of mergeSorted({
          sources: sources.map(([ks, cuts], s) =>
            batches(
              ks.map((k, i) => ({ k, s, i })),
              cuts,
            ),
          ),
          keyOf: (x) => x.k,
          batch,
        })) {
          expect(b.length).toBeLessThanOrEqual(batch);
          for (const { item, source } of b) {
            expect(source).toBe(item.s);
            out.push(`${item.k}/${item.s}/${item.i}`);
          }
        }
        const expected = sources
          .flatMap(([ks], s) => ks.map((k, i) => ({ k, s, i })))
          .sort((x, y) => (x.k < y.k ? -1 : x.k > y.k ? 1 : x.s - y.s || x.i - y.i))
          .map((x) => `${x.k}/${x.s}/${x.i}`);
        expect(out).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });
});
