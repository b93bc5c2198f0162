import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { longestChain } from './round-trips.js';

describe('longestChain', () => {
  it('counts calls one after another, and overlapping calls once', () => {
    expect(longestChain([])).toBe(0);
    expect(
      longestChain([
        [0, 10],
        [10, 20],
        [20, 30],
      ]),
    ).toBe(3);
    // A wave of four calls at once, then one after them all: two round trips.
    expect(
      longestChain([
        [0, 10],
        [1, 11],
        [2, 9],
        [0, 12],
        [12, 20],
      ]),
    ).toBe(2);
    // A call that waits on only the short one of two still follows it.
    expect(
      longestChain([
        [0, 5],
        [0, 30],
        [6, 10],
        [11, 15],
      ]),
    ).toBe(3);
  });

  it('is the longest chain a brute force finds', () => {
    const span = fc.tuple(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 10 })).map(([s, d]) => [s, s + d] as const);
    fc.assert(
      fc.property(fc.array(span, { maxLength: 9 }), (spans) => {
        const longestFrom = (last: readonly [number, number] | undefined, left: (readonly [number, number])[]): number =>
          Math.max(
            0,
            ...left.map((s, i) =>
              last === undefined || last[1] <= s[0]
                ? 1 +
                  longestFrom(
                    s,
                    left.filter((_, j) => j !== i),
                  )
                : 0,
            ),
          );
        expect(longestChain(spans)).toBe(longestFrom(undefined, spans));
      }),
      { numRuns: 300 },
    );
  });
});
