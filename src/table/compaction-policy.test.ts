import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMPACTION_FANOUT, compactionStart } from './compaction-policy.js';

/** Apply the policy after every appended run, as background compaction would. */
function simulate(writes: readonly number[]): { runs: number[]; rewritten: number } {
  const runs: number[] = [];
  let rewritten = 0;
  for (const w of writes) {
    runs.push(w);
    const start = compactionStart(runs);
    if (start === undefined) continue;
    const merged = runs.splice(start).reduce((a, b) => a + b, 0);
    rewritten += merged;
    runs.push(merged);
  }
  return { runs, rewritten };
}

describe('compaction policy', () => {
  it('nothing is due below the fanout, and F equal runs become one', () => {
    expect(compactionStart([1, 1, 1])).toBeUndefined();
    expect(compactionStart([1, 1, 1, 1])).toBe(0);
    expect(compactionStart([64, 1, 1, 1, 1])).toBe(1);
    // The merge cascades: four runs of 4 after the new run of 4.
    expect(compactionStart([4, 4, 4, 1, 1, 1, 1])).toBe(0);
  });

  it('10,000 single-row writes leave a logarithmic number of runs and rewrite each row a logarithmic number of times', () => {
    const { runs, rewritten } = simulate(Array.from({ length: 10_000 }, () => 1));
    const levels = Math.ceil(Math.log(10_000) / Math.log(COMPACTION_FANOUT));
    expect(runs.length).toBeLessThanOrEqual(COMPACTION_FANOUT * levels);
    expect(rewritten / 10_000).toBeLessThanOrEqual(levels + 1);
    expect(runs.reduce((a, b) => a + b, 0)).toBe(10_000);
  });

  it('property: any sequence of write sizes keeps runs within F per level', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 5000 }), { minLength: 1, maxLength: 400 }), (writes) => {
        const { runs } = simulate(writes);
        const total = writes.reduce((a, b) => a + b, 0);
        const levels = Math.floor(Math.log(total) / Math.log(COMPACTION_FANOUT)) + 1;
        expect(runs.length).toBeLessThanOrEqual(COMPACTION_FANOUT * levels + 1);
      }),
      { numRuns: 200 },
    );
  });
});
