/** Which runs keep their origin through each kind of publication, and when a table counts as replaced. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RunRef } from '../table/run.js';
import type { TableEntry } from './manifest.js';
import { originOf, stampOrigins } from './run-origin.js';

const run = (key: string, extra: Partial<RunRef> = {}): RunRef => ({
  key,
  rows: 1,
  tombstones: 0,
  bytes: 1,
  minKey: 'a',
  maxKey: 'z',
  checksum: '0'.repeat(32),
  ...extra,
});
const HERE = { lineage: 'L', version: 9 };
const origins = (e: TableEntry): (string | undefined)[] => e.runs.map((r) => r.origin);

describe('stampOrigins', () => {
  const parent: TableEntry = { runs: [run('a', { origin: 'L:1' }), run('b', { origin: 'L:4' })], replacedAt: 'L:1' };

  it('keeps origins and replacedAt when runs are appended, and stamps the new runs', () => {
    const e = stampOrigins({ runs: [...parent.runs, run('c')] }, parent, { origin: HERE, compaction: false });
    expect(origins(e)).toEqual(['L:1', 'L:4', 'L:9']);
    expect(e.replacedAt).toBe('L:1');
  });

  it('keeps the origins of runs older than a range this publication compacted', () => {
    const before: TableEntry = { runs: [...parent.runs, run('c', { origin: 'L:6' }), run('d', { origin: 'L:7' })], replacedAt: 'L:1' };
    const e = stampOrigins({ runs: [before.runs[0] as RunRef, run('cd', { compacted: true })] }, before, {
      origin: HERE,
      compaction: true,
    });
    expect(origins(e)).toEqual(['L:1', 'L:9']);
    expect(e.replacedAt).toBe('L:1');
  });

  it('stamps a run whose newer runs were dropped, and counts the table as replaced', () => {
    // A revert adopting an older table: `b`'s keys were superseded by `n`, which is gone.
    const head: TableEntry = { runs: [...parent.runs, run('n', { origin: 'L:8' })], replacedAt: 'L:1' };
    const e = stampOrigins({ runs: parent.runs }, head, { origin: HERE, compaction: false });
    expect(origins(e)).toEqual(['L:9', 'L:9']);
    expect(e.replacedAt).toBe('L:9');
  });

  it("counts a merge that adopts a side's compacted runs as a replacement, not a compaction", () => {
    const before: TableEntry = { runs: [...parent.runs, run('n', { origin: 'L:6' })], replacedAt: 'L:1' };
    const adopted = { runs: [run('sc', { compacted: true, origin: 'M:2' })] };
    expect(stampOrigins(adopted, before, { origin: HERE, compaction: false })).toMatchObject({
      replacedAt: 'L:9',
      runs: [{ origin: 'L:9' }],
    });
    expect(stampOrigins(adopted, before, { origin: HERE, compaction: true }).replacedAt).toBe('L:1');
  });

  it('stamps runs adopted from a merge side the first parent did not hold, and ignores origins the plan brings', () => {
    const e = stampOrigins({ runs: [parent.runs[0] as RunRef, run('s', { origin: 'M:3' })] }, parent, { origin: HERE, compaction: false });
    expect(origins(e)).toEqual(['L:9', 'L:9']);
    expect(e.replacedAt).toBe('L:9');
  });

  it('stamps a run that an adopted table orders below a run its parent held older', () => {
    const head: TableEntry = {
      runs: [run('a', { origin: 'L:1' }), run('b', { origin: 'L:4' }), run('c', { origin: 'L:6' })],
      replacedAt: 'L:1',
    };
    const e = stampOrigins({ runs: [run('a'), run('c'), run('b')] }, head, { origin: HERE, compaction: false });
    expect(origins(e)).toEqual(['L:1', 'L:9', 'L:9']);
  });

  it('a new table is replaced here; a run without an origin stays without one while carried', () => {
    expect(stampOrigins({ runs: [] }, undefined, { origin: HERE, compaction: false }).replacedAt).toBe('L:9');
    const legacy: TableEntry = { runs: [run('old')] };
    const e = stampOrigins({ runs: [run('old'), run('new')] }, legacy, { origin: HERE, compaction: false });
    expect(origins(e)).toEqual([undefined, 'L:9']);
    expect(e.replacedAt).toBeUndefined();
    expect(originOf(e.runs[1] as RunRef)).toEqual(HERE);
  });
});

describe('stampOrigins at any shape', () => {
  /** The rule as the header states it, one run at a time: quadratic, and obviously so. */
  function soundByScan(entry: readonly RunRef[], parent: readonly RunRef[], i: number): boolean {
    const j = parent.findIndex((p) => p.key === entry[i]?.key);
    if (j < 0) return false;
    const keepsNewer = parent.slice(j + 1).every((p) => entry.findIndex((q) => q.key === p.key) > i);
    const promotesNone = entry.slice(i + 1).every((q) => {
      const k = parent.findIndex((p) => p.key === q.key);
      return k < 0 || k > j;
    });
    return keepsNewer && promotesNone;
  }

  it('property: a run keeps its origin exactly when the rule, checked run by run, says so', () => {
    const keys = fc.uniqueArray(fc.constantFrom(...'abcdefghij'), { maxLength: 10 });
    fc.assert(
      fc.property(keys, keys, (parentKeys, entryKeys) => {
        const parent: TableEntry = { runs: parentKeys.map((k, n) => run(k, { origin: `P:${n}` })) };
        const entry = entryKeys.map((k) => run(k));
        const e = stampOrigins({ runs: entry }, parent, { origin: HERE, compaction: false });
        const expected = entry.map((r, i) => (soundByScan(entry, parent.runs, i) ? `P:${parentKeys.indexOf(r.key)}` : 'L:9'));
        expect(origins(e)).toEqual(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
