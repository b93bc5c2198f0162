/**
 * Typed row queries over several runs (rows inserted, changed and deleted
 * in later commits), against the same filter evaluated over a plain map:
 * an equality on a stored property is answered from each run's column
 * index, and must admit exactly what a full scan admits, in every order,
 * page and count.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../store/memory-store.js';
import { BranchgraphService } from '../service/service.js';
import { embeddedApi } from '../service/api.js';
import { Graph } from './graph.js';

type Props = { c: string | null; n: number | null };
const C = fc.constantFrom('a', 'b', 'c', null);
const KEYS = Array.from({ length: 24 }, (_, i) => `k${String(i).padStart(2, '0')}`);

const change = fc.record({ key: fc.constantFrom(...KEYS), del: fc.boolean(), c: C, n: fc.option(fc.integer({ min: 0, max: 3 })) });
const where = fc.oneof(
  C.filter((c) => c !== null).map((c) => ({ c: { eq: c } })),
  // Not unique: an `in` list may repeat a value.
  fc.array(fc.constantFrom('a', 'b', 'c'), { minLength: 1, maxLength: 4 }).map((cs) => ({ c: { in: cs } })),
  fc.tuple(fc.constantFrom('a', 'b'), fc.integer({ min: 0, max: 3 })).map(([c, n]) => ({ _and: [{ c: { eq: c } }, { n: { gte: n } }] })),
  fc.integer({ min: 0, max: 3 }).map((n) => ({ n: { eq: n } })),
);

function admits(w: Record<string, unknown>, r: Props): boolean {
  if ('_and' in w) return (w._and as Record<string, unknown>[]).every((x) => admits(x, r));
  const [[prop, test]] = Object.entries(w) as [[keyof Props, Record<string, unknown>]];
  const x = r[prop];
  if (x === null) return false;
  if ('eq' in test) return x === test.eq;
  if ('in' in test) return (test.in as unknown[]).includes(x);
  return (x as number) >= (test.gte as number);
}

/** The query's order: by `c` (nulls last either way) then the key ascending, or by the key alone. */
function order(q: { desc: boolean; byName: boolean }, [a, x]: [string, string | null], [b, y]: [string, string | null]): number {
  const sign = q.desc ? -1 : 1;
  const byKey = a < b ? -1 : a > b ? 1 : 0;
  if (!q.byName) return sign * byKey;
  if (x === y) return byKey;
  if (x === null || y === null) return x === null ? 1 : -1;
  return sign * (x < y ? -1 : 1);
}

describe('typed row queries', () => {
  it('property: an equality answered from column indexes admits what a scan admits, over runs that change and delete rows', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(change, { minLength: 1, maxLength: 20 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.record({ where, desc: fc.boolean(), byName: fc.boolean(), first: fc.integer({ min: 1, max: 30 }) }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (commits, queries) => {
          const api = embeddedApi(new BranchgraphService(await Graph.open(new MemoryStore()), {}), { transport: 'embedded' });
          await api.applySchema({ branch: 'main', schema: 'node T { id: string @key\n c: string?\n n: int? }' });
          const model = new Map<string, Props>();
          for (const batch of commits) {
            const last = new Map(batch.map((ch) => [ch.key, ch]));
            const ops = [...last.values()].map((ch) =>
              ch.del && model.has(ch.key)
                ? { op: 'delete' as const, table: 'T', values: { id: ch.key } }
                : { op: 'upsert' as const, table: 'T', values: { id: ch.key, c: ch.c, n: ch.n } },
            );
            await api.write({ branch: 'main', ops });
            for (const ch of last.values()) {
              if (ch.del && model.has(ch.key)) model.delete(ch.key);
              else model.set(ch.key, { c: ch.c, n: ch.n });
            }
          }
          for (const q of queries) {
            const direction = q.desc ? ('desc' as const) : ('asc' as const);
            const orderBy = q.byName ? [{ prop: 'c', direction }] : [{ prop: '_key', direction }];
            const page = await api.queryRows({ table: 'T', where: q.where, orderBy, first: q.first, count: true });
            const want = [...model].filter(([, r]) => admits(q.where, r)).sort(([a, ra], [b, rb]) => order(q, [a, ra.c], [b, rb.c]));
            expect(page.totalCount).toBe(want.length);
            expect(page.items.map((i) => [i.key, i.row.c, i.row.n])).toEqual(want.slice(0, q.first).map(([k, r]) => [k, r.c, r.n]));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
