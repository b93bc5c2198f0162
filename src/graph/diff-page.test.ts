import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pageDiff } from './diff-page.js';
import type { TableDiff } from './reads.js';

const diffOf = (tables: Record<string, { ins?: string[]; upd?: string[]; del?: string[] }>): TableDiff[] =>
  Object.entries(tables)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([table, t]) => ({
      table,
      inserted: (t.ins ?? []).sort().map((key) => ({ key, row: { id: key } })),
      updated: (t.upd ?? []).sort().map((key) => ({ key, before: { id: key }, after: { id: key, v: 1 }, changed: ['v'] })),
      deleted: (t.del ?? []).sort().map((key) => ({ key, row: { id: key } })),
    }));

describe('diff pages', () => {
  it('counts the whole diff and pages its changes in (table, key) order', () => {
    const d = diffOf({ A: { ins: ['b', 'd'], upd: ['a'], del: ['c'] }, B: { ins: ['x'] } });
    const p1 = pageDiff(d, { limit: 3 });
    expect(p1.summary).toEqual([
      { table: 'A', inserted: 2, updated: 1, deleted: 1 },
      { table: 'B', inserted: 1, updated: 0, deleted: 0 },
    ]);
    expect(p1.tables).toEqual([
      {
        table: 'A',
        inserted: [{ key: 'b', row: { id: 'b' } }],
        updated: [expect.objectContaining({ key: 'a' })],
        deleted: [{ key: 'c', row: { id: 'c' } }],
      },
    ]);
    const p2 = pageDiff(d, { limit: 3, cursor: p1.nextCursor as string });
    expect(p2.tables.map((t) => [t.table, t.inserted.map((r) => r.key)])).toEqual([
      ['A', ['d']],
      ['B', ['x']],
    ]);
    expect(p2.nextCursor).toBeNull();
    expect(pageDiff(d).tables).toEqual(d);
  });

  it('property: the pages of any diff at any size add up to the diff, once each', () => {
    const keys = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 3 }), { maxLength: 12 });
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('A', 'B', 'C'), fc.record({ ins: keys, upd: keys, del: keys })),
        fc.integer({ min: 1, max: 7 }),
        (tables, limit) => {
          // One change per key within a table, as a real diff has.
          const clean = Object.fromEntries(
            Object.entries(tables).map(([t, x]) => [
              t,
              {
                ins: x.ins,
                upd: x.upd.filter((k) => !x.ins.includes(k)),
                del: x.del.filter((k) => !x.ins.includes(k) && !x.upd.includes(k)),
              },
            ]),
          );
          const d = diffOf(clean).filter((t) => t.inserted.length + t.updated.length + t.deleted.length > 0);
          const seen: string[] = [];
          let cursor: string | undefined;
          do {
            const p = pageDiff(d, { limit, ...(cursor ? { cursor } : {}) });
            const n = p.tables.reduce((s, t) => s + t.inserted.length + t.updated.length + t.deleted.length, 0);
            expect(n).toBeLessThanOrEqual(limit);
            for (const t of p.tables) for (const r of [...t.inserted, ...t.updated, ...t.deleted]) seen.push(`${t.table}/${r.key}`);
            cursor = p.nextCursor ?? undefined;
          } while (cursor !== undefined);
          const all = d.flatMap((t) => [...t.inserted, ...t.updated, ...t.deleted].map((r) => `${t.table}/${r.key}`)).sort();
          expect([...seen].sort()).toEqual(all);
          expect(new Set(seen).size).toBe(seen.length);
        },
      ),
    );
  });

  it('refuses a forged cursor or a bad limit', () => {
    expect(() => pageDiff([], { cursor: 'd1.e30.000000000000' })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(() => pageDiff([], { limit: 0 })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});
