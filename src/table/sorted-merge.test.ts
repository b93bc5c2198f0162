import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergeSorted } from './sorted-merge.js';

interface Segment {
  keys: string[];
  source: number;
  /** The position of the segment's first key in its source. */
  first: number;
}

async function* segments(keys: readonly string[], source: number, cuts: readonly number[]): AsyncGenerator<Segment> {
  let at = 0;
  for (const c of cuts) {
    yield { keys: keys.slice(at, at + c), source, first: at };
    at += c;
  }
  yield { keys: keys.slice(at), source, first: at };
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
        for await (const b of mergeSorted({ sources: sources.map(([ks, cuts], s) => segments(ks, s, cuts)), batch })) {
          expect(b.at.length).toBeLessThanOrEqual(batch);
          expect(b.segments.length).toBe(b.at.length);
          b.at.forEach((at, i) => {
            const seg = b.segments[i] as Segment;
            out.push(`${seg.keys[at]}/${seg.source}/${seg.first + at}`);
          });
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
