import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  COMPACTION_FANOUT,
  compactionStart,
  INLINE_BOUND,
  INLINE_MAX_ROWS,
  INLINE_MIN_RUNS,
  inlineCompactionStart,
} from './compaction-policy.js';

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

/** Writes with no background compaction: each write folds what `inlineCompactionStart` says, before adding its own run. */
function inlineOnly(writes: readonly number[]): { runs: number[]; mostFolded: number; maxRuns: number } {
  const runs: number[] = [];
  let mostFolded = 0;
  let maxRuns = 0;
  for (const w of writes) {
    const start = inlineCompactionStart(runs);
    if (start !== undefined) {
      const merged = runs.splice(start).reduce((a, b) => a + b, 0);
      mostFolded = Math.max(mostFolded, merged);
      runs.push(merged);
    }
    runs.push(w);
    maxRuns = Math.max(maxRuns, runs.length);
  }
  return { runs, mostFolded, maxRuns };
}

describe('inline compaction policy', () => {
  it('waits for one run past the fanout, where background compaction would have started', () => {
    expect(inlineCompactionStart([1, 1, 1, 1])).toBeUndefined();
    expect(inlineCompactionStart(Array.from({ length: INLINE_MIN_RUNS - 1 }, () => 1))).toBeUndefined();
    expect(inlineCompactionStart([500, ...Array.from({ length: INLINE_MIN_RUNS }, () => 1)])).toBe(1);
    // The due stretch reaches older tiers the fold completes: all of it goes, within the row bound.
    expect(inlineCompactionStart([8, 8, 8, ...Array.from({ length: 5 }, () => 1)])).toBe(0);
  });

  it('never rewrites more than the row bound: a due stretch over it is cut to its newest runs', () => {
    // Four new rows complete every tier up to the oldest: the policy folds all 6,097 rows.
    const tiers = [1500, 400, 100, 25, 6].flatMap((rows) => [rows, rows, rows]);
    const runs = [...tiers, 1, 1, 1, 1];
    expect(compactionStart(runs)).toBe(0);
    // A write takes the newest 3,097 of them; the next 1,500 would pass the bound.
    expect(inlineCompactionStart(runs)).toBe(2);
    expect(inlineCompactionStart([100, 100], { minRuns: 2, maxRows: 150 })).toBeUndefined();
  });

  it('10,000 single-row writes with no background compaction keep runs bounded whatever their number', () => {
    const levels = Math.ceil(Math.log(INLINE_MAX_ROWS) / Math.log(COMPACTION_FANOUT));
    const bound = INLINE_MIN_RUNS + (COMPACTION_FANOUT - 1) * (levels + 1);
    for (const n of [100, 1000, 10_000]) {
      const { maxRuns, mostFolded, runs } = inlineOnly(Array.from({ length: n }, () => 1));
      expect(maxRuns).toBeLessThanOrEqual(bound);
      expect(mostFolded).toBeLessThanOrEqual(INLINE_BOUND.maxRows);
      expect(runs.reduce((a, b) => a + b, 0)).toBe(n);
    }
  });

  it('property: any small writes keep runs bounded, and no write folds more than the row bound', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 600 }), (writes) => {
        const { maxRuns, mostFolded } = inlineOnly(writes);
        const total = writes.reduce((a, b) => a + b, 0);
        const levels = Math.floor(Math.log(total) / Math.log(COMPACTION_FANOUT)) + 1;
        expect(mostFolded).toBeLessThanOrEqual(INLINE_MAX_ROWS);
        // Below the row bound (these writes stay under it), each level keeps fewer than F runs and the due stretch fewer than F + 1.
        expect(maxRuns).toBeLessThanOrEqual(INLINE_MIN_RUNS + COMPACTION_FANOUT * levels);
      }),
      { numRuns: 200 },
    );
  });
});
