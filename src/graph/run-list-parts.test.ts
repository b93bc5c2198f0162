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
const layoutOf = (entry: TableEntry, parent?: TableEntry) => known.layoutOf(entry, { ...o, parent });

describe('run-list layout', () => {
  it('keeps a short list inline', () => {
    const runs = Array.from({ length: 8 }, (_, i) => run(i));
    expect(layoutOf({ runs })).toEqual({ tail: runs });
  });

  it('stores a long list as a base, and the writes after it add only to the tail', () => {
    let parent: TableEntry = { runs: Array.from({ length: 20 }, (_, i) => run(i)) };
    const first = layoutOf(parent);
    expect(first.base?.refs).toBe(parent.runs);
    expect(first.tail).toEqual([]);
    const base = first.base as RunListPart;
    // Each one-row write derives the next list from its parent's: the same refs, one more at the end.
    for (let w = 1; w <= tailLimit(20 + w); w++) {
      const entry = { runs: [...parent.runs, run(100 + w)] };
      const next = layoutOf(entry, parent);
      expect(next.base).toBe(base);
      expect(next.tail).toEqual(entry.runs.slice(20));
      parent = entry;
    }
    // Past the tail limit, a new base holds the whole list.
    const entry = { runs: [...parent.runs, run(200)] };
    const rolled = layoutOf(entry, parent);
    expect(rolled.base).not.toBe(base);
    expect(rolled.base?.refs).toEqual(entry.runs);
  });

  it('names only the base its parent names: never one another list left, though it holds the same runs', () => {
    const runs = Array.from({ length: 12 }, (_, i) => run(700 + i));
    const elsewhere = layoutOf({ runs }).base as RunListPart;
    const unrelated = layoutOf({ runs: [...runs, run(800)] }, { runs: runs.slice(0, 3) });
    expect(unrelated.base).not.toBe(elsewhere);
    expect(unrelated.base?.refs).toHaveLength(13);
  });

  it('does not name a base whose runs a compaction replaced', () => {
    const runs = Array.from({ length: 12 }, (_, i) => run(300 + i));
    const parent = { runs };
    const base = layoutOf(parent).base as RunListPart;
    // The same keys, new refs (a compaction rewrote the stats): the stored base no longer describes them.
    const compacted = [...runs.slice(0, 5), { ...(runs[5] as RunRef), compacted: true }, ...runs.slice(6), run(400)];
    const next = layoutOf({ runs: compacted }, parent);
    expect(next.base).not.toBe(base);
    expect(next.base?.refs).toEqual(compacted);
  });

  it('decides once per entry, so the parts written and the manifest encoded agree', () => {
    const entry: TableEntry = { runs: Array.from({ length: 9 }, (_, i) => run(500 + i)) };
    expect(layoutOf(entry)).toBe(layoutOf(entry));
  });

  it('round-trips an entry through its stored form, and refuses a base that does not match', () => {
    const runs = Array.from({ length: 15 }, (_, i) => run(600 + i));
    const base: RunListPart = { id: 'B1', refs: runs.slice(0, 12), stored: true };
    const stored = storedEntry({ runs, replacedAt: 'L:3' }, { base, tail: runs.slice(12) });
    expect(stored).toEqual({ runs: runs.slice(12), replacedAt: 'L:3', runBase: { part: 'B1', count: 12, last: run(611).key } });
    expect(known.expand(stored, base)).toEqual({ runs, replacedAt: 'L:3' });
    expect(known.expand(stored, { ...base, refs: runs.slice(0, 11) })).toMatch(/holds 11/);
    expect(known.expand(stored, undefined)).toMatch(/not read/);
    // A list built on an entry read back names the same base.
    const read = known.expand(stored, base) as TableEntry;
    expect(layoutOf({ runs: [...runs, run(612)] }, read).base).toBe(base);
  });

  it('tail limit grows as the square root of the list', () => {
    expect([9, 14, 50, 200, 5000].map(tailLimit)).toEqual([4, 5, 10, 20, 100]);
  });
});
