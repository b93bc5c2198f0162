import { describe, expect, it } from 'vitest';
import type { RunRef } from '../table/run.js';
import type { TableEntry } from './manifest.js';
import { RunListParts, storedEntry, tailLimit, type RunListPart } from './run-list-parts.js';

const run = (i: number): RunRef => ({
  key: `runs/T/r${String(i).padStart(4, '0')}.rows.json`,
  rows: 1,
  tombstones: 0,
  bytes: 300,
  minKey: `k${i}`,
  maxKey: `k${i}`,
  checksum: '0'.repeat(32),
});

let ids = 0;
const o = { inline: 8, newId: () => `P${++ids}` };
const known = new RunListParts();
const layoutOf = (entry: TableEntry, opts: typeof o) => known.layoutOf(entry, opts);

describe('run-list layout', () => {
  it('keeps a short list inline', () => {
    const runs = Array.from({ length: 8 }, (_, i) => run(i));
    expect(layoutOf({ runs }, o)).toEqual({ tail: runs });
  });

  it('stores a long list as a base, and the writes after it add only to the tail', () => {
    let runs = Array.from({ length: 20 }, (_, i) => run(i));
    const first = layoutOf({ runs }, o);
    expect(first.base?.refs).toBe(runs);
    expect(first.tail).toEqual([]);
    const base = first.base as RunListPart;
    base.stored = true;
    // Each one-row write derives the next list from the last: the same refs, one more at the end.
    for (let w = 1; w <= tailLimit(20 + w) && w < 7; w++) {
      runs = [...runs, run(100 + w)];
      const next = layoutOf({ runs }, o);
      expect(next.base).toBe(base);
      expect(next.tail).toEqual(runs.slice(20));
    }
    // Past the tail limit, a new base holds the whole list.
    while (runs.length - 20 <= tailLimit(runs.length)) runs = [...runs, run(200 + runs.length)];
    const rolled = layoutOf({ runs }, o);
    expect(rolled.base).not.toBe(base);
    expect(rolled.base?.refs).toEqual(runs);
  });

  it('does not name a base whose runs a compaction replaced', () => {
    const runs = Array.from({ length: 12 }, (_, i) => run(300 + i));
    const base = layoutOf({ runs }, o).base as RunListPart;
    base.stored = true;
    // The same keys, new refs (a compaction rewrote the stats): the stored base no longer describes them.
    const compacted = [...runs.slice(0, 5), { ...(runs[5] as RunRef), compacted: true }, ...runs.slice(6), run(400)];
    const next = layoutOf({ runs: compacted }, o);
    expect(next.base).not.toBe(base);
    expect(next.base?.refs).toEqual(compacted);
  });

  it('decides once per entry, so the parts written and the manifest encoded agree', () => {
    const entry: TableEntry = { runs: Array.from({ length: 9 }, (_, i) => run(500 + i)) };
    expect(layoutOf(entry, o)).toBe(layoutOf(entry, o));
  });

  it('round-trips an entry through its stored form, and refuses a base that does not match', () => {
    const runs = Array.from({ length: 15 }, (_, i) => run(600 + i));
    const base: RunListPart = { id: 'B1', refs: runs.slice(0, 12), stored: true };
    const stored = storedEntry({ runs, replacedAt: 'L:3' }, { base, tail: runs.slice(12) });
    expect(stored).toEqual({ runs: runs.slice(12), replacedAt: 'L:3', runBase: { part: 'B1', count: 12, last: run(611).key } });
    expect(known.expand(stored, base)).toEqual({ runs, replacedAt: 'L:3' });
    expect(known.expand(stored, { ...base, refs: runs.slice(0, 11) })).toMatch(/holds 11/);
    expect(known.expand(stored, undefined)).toMatch(/not read/);
  });

  it('tail limit grows as the square root of the list', () => {
    expect([9, 14, 50, 200, 5000].map(tailLimit)).toEqual([4, 5, 10, 20, 100]);
  });
});
