/**
 * Walks and aggregates are exact at every ref: random graphs written over
 * random histories (writes on two branches, merges both ways, compaction,
 * WAL rows caught up or still pending), then at random refs every
 * neighbourhood is compared with a breadth-first search over the edges
 * read back through `rows`, every shortest path's length with the BFS
 * distance (and the path checked hop by hop), every path list with a
 * depth-first enumeration in the same order, and every aggregate with a
 * scan of the rows.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';

const SCHEMA = `
node P { id: string @key
  age: int?
  score: float?
  team: enum(red, blue)? }
node C { id: string @key }
edge Knows: P -> P { w: int? }
edge Likes: P -> C
`;
const PS = ['p0', 'p1', 'p2', 'p3', 'p4', 'p5'];
const CS = ['c0', 'c1'];

type Row = Record<string, unknown>;
type Op = { op: 'upsert' | 'delete'; table: string; values: Row };

const person = fc.record({
  id: fc.constantFrom(...PS),
  age: fc.option(fc.integer({ min: 0, max: 90 }), { nil: null }),
  score: fc.option(fc.double({ min: -10, max: 10, noNaN: true }), { nil: null }),
  team: fc.option(fc.constantFrom('red', 'blue'), { nil: null }),
});
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 2, arbitrary: person.map((values) => ({ op: 'upsert' as const, table: 'P', values })) },
  {
    weight: 5,
    arbitrary: fc
      .record({ from: fc.constantFrom(...PS), to: fc.constantFrom(...PS), w: fc.option(fc.integer({ min: 0, max: 9 }), { nil: null }) })
      .map((values) => ({ op: 'upsert' as const, table: 'Knows', values })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ from: fc.constantFrom(...PS), to: fc.constantFrom(...CS) })
      .map((values) => ({ op: 'upsert' as const, table: 'Likes', values })),
  },
  {
    weight: 1,
    arbitrary: fc
      .record({ from: fc.constantFrom(...PS), to: fc.constantFrom(...PS) })
      .map((values) => ({ op: 'delete' as const, table: 'Knows', values })),
  },
);
type Step =
  | { kind: 'write' | 'ingest'; branch: string; ops: Op[] }
  | { kind: 'merge'; source: string; into: string }
  | { kind: 'compact' | 'catchUp'; branch: string };
const branch = fc.constantFrom('main', 'side');
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant('write' as const), branch, ops: fc.array(op, { minLength: 1, maxLength: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('ingest' as const), branch, ops: fc.array(op, { minLength: 1, maxLength: 4 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('merge' as const), source: branch, into: branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constantFrom('compact' as const, 'catchUp' as const), branch }) },
);

async function tolerant(f: () => Promise<unknown>): Promise<void> {
  try {
    await f();
  } catch (e) {
    if (!['constraint_violation', 'invalid_input', 'not_found'].includes((e as { code?: string }).code ?? '')) throw e;
  }
}

async function run(api: BranchgraphApi, s: Step): Promise<void> {
  if (s.kind === 'write') return tolerant(() => api.write({ branch: s.branch, ops: s.ops }));
  if (s.kind === 'ingest') return tolerant(() => api.ingest({ branch: s.branch, ops: s.ops }));
  if (s.kind === 'merge') return s.source === s.into ? undefined : tolerant(() => api.mergeBranch({ source: s.source, into: s.into }));
  if (s.kind === 'compact') return tolerant(() => api.compact({ branch: s.branch, mode: 'full' }));
  return tolerant(() => api.catchUp({ branch: s.branch }));
}

async function all(api: BranchgraphApi, table: string, at: string): Promise<{ key: string; row: Row }[]> {
  return (await api.rows({ table, at, limit: 1000 })).items;
}

/** The graph at a ref as adjacency: per node id, its steps (edge table and key, next node) in walk order. */
type Adjacent = Map<string, { edge: string; next: string }[]>;
async function graphAt(api: BranchgraphApi, at: string, direction: 'out' | 'in' | 'both'): Promise<{ adj: Adjacent; nodes: Set<string> }> {
  const nodes = new Set([...(await all(api, 'P', at)).map((r) => `P/${r.key}`), ...(await all(api, 'C', at)).map((r) => `C/${r.key}`)]);
  const adj: Adjacent = new Map([...nodes].map((n) => [n, []]));
  for (const [table, to] of [
    ['Knows', 'P'],
    ['Likes', 'C'],
  ] as const)
    for (const e of await all(api, table, at)) {
      const from = `P/${e.row.from as string}`;
      const there = `${to}/${e.row.to as string}`;
      if (direction !== 'in') adj.get(from)?.push({ edge: `${table}/${e.key}`, next: there });
      if (direction !== 'out') adj.get(there)?.push({ edge: `${table}/${e.key}`, next: from });
    }
  return { adj, nodes };
}

function bfs(adj: Adjacent, from: string, hops: number): Map<string, number> {
  const depth = new Map([[from, 0]]);
  let frontier = [from];
  for (let d = 1; d <= hops; d++) {
    const next: string[] = [];
    for (const n of frontier)
      for (const s of adj.get(n) ?? [])
        if (!depth.has(s.next)) {
          depth.set(s.next, d);
          next.push(s.next);
        }
    frontier = next;
  }
  return depth;
}

/** Every simple path as its edge list, by DFS. */
function dfsPaths(adj: Adjacent, from: string, to: string, maxHops: number): string[][] {
  const out: string[][] = [];
  const walk = (n: string, on: Set<string>, edges: string[]): void => {
    if (n === to && edges.length > 0) {
      out.push(edges);
      return;
    }
    if (edges.length === maxHops) return;
    for (const s of adj.get(n) ?? []) if (!on.has(s.next)) walk(s.next, new Set(on).add(s.next), [...edges, s.edge]);
  };
  walk(from, new Set([from]), []);
  return out;
}

const seen = { walks: 0, reached: 0, paths: 0, aggregates: 0, fromStatistics: 0 };

async function checkAt(
  api: BranchgraphApi,
  at: string,
  q: { from: string; to: string; hops: number; direction: 'out' | 'in' | 'both' },
): Promise<void> {
  const { adj, nodes } = await graphAt(api, at, q.direction);
  const from = `P/${q.from}`;
  const to = `P/${q.to}`;
  // Nodes are never deleted here: every walk starts and ends at one that exists.
  expect(nodes.has(from) && nodes.has(to)).toBe(true);
  const depth = bfs(adj, from, q.hops);
  const hood = await api.neighborhood({ at, from: { table: 'P', key: q.from }, hops: q.hops, direction: q.direction, first: 100 });
  expect(new Map(hood.nodes.map((n) => [`${n.table}/${n.key}`, n.depth]))).toEqual(depth);
  seen.walks++;
  seen.reached += hood.nodes.length;
  const shortest = await api.shortestPath({ at, from: { table: 'P', key: q.from }, to: { table: 'P', key: q.to }, direction: q.direction });
  const distance = bfs(adj, from, 6).get(to);
  if (distance === undefined) expect(shortest.path).toBeNull();
  else {
    const path = shortest.path as NonNullable<typeof shortest.path>;
    expect(path.edges.length).toBe(distance);
    path.edges.forEach((e, i) => {
      const here = `${path.nodes[i]?.table}/${path.nodes[i]?.key}`;
      expect(
        adj.get(here)?.some((s) => s.edge === `${e.table}/${e.key}` && s.next === `${path.nodes[i + 1]?.table}/${path.nodes[i + 1]?.key}`),
      ).toBe(true);
    });
  }
  if (from !== to) {
    const expected = dfsPaths(adj, from, to, q.hops);
    const listed = await api.paths({
      at,
      from: { table: 'P', key: q.from },
      to: { table: 'P', key: q.to },
      direction: q.direction,
      maxHops: q.hops,
      first: 1000,
    });
    expect(listed.hasMore).toBe(false);
    // The same paths, and in order: by length, then by their edges.
    const got = listed.paths.map((p) => p.edges.map((e) => `${e.table}/${e.key}`));
    expect(new Set(got.map((p) => JSON.stringify(p)))).toEqual(new Set(expected.map((p) => JSON.stringify(p))));
    for (let i = 1; i < got.length; i++) expect((got[i - 1] as string[]).length).toBeLessThanOrEqual((got[i] as string[]).length);
    seen.paths += got.length;
  }
  const people = (await all(api, 'P', at)).map((r) => r.row);
  const agg = await api.aggregate({ table: 'P', at, groupBy: ['team'], where: { age: { isNull: false } } });
  const admitted = people.filter((r) => r.age !== null);
  expect(agg.count).toBe(admitted.length);
  const ages = admitted.map((r) => r.age as number);
  expect(agg.numbers.age).toEqual(
    ages.length === 0
      ? { count: 0, min: null, max: null, sum: null, avg: null }
      : {
          count: ages.length,
          min: Math.min(...ages),
          max: Math.max(...ages),
          sum: ages.reduce((a, b) => a + b, 0),
          avg: ages.reduce((a, b) => a + b, 0) / ages.length,
        },
  );
  const teams = new Map<string, number>();
  for (const r of admitted) teams.set(JSON.stringify(r.team ?? null), (teams.get(JSON.stringify(r.team ?? null)) ?? 0) + 1);
  expect(new Map(agg.groups.map((g) => [JSON.stringify(g.key.team ?? null), g.count]))).toEqual(teams);
  const edges = await api.aggregate({ table: 'Knows', at, numbers: false });
  expect(edges.count).toBe((await all(api, 'Knows', at)).length);
  if (edges.source === 'statistics') seen.fromStatistics++;
  seen.aggregates++;
}

describe('walks and aggregates are exact at every ref', () => {
  it('match a BFS, a DFS and a scan over the rows at random refs of random histories', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 3, maxLength: 14 }),
        fc.array(
          fc.record({
            from: fc.constantFrom(...PS),
            to: fc.constantFrom(...PS),
            hops: fc.integer({ min: 1, max: 4 }),
            direction: fc.constantFrom('out' as const, 'in' as const, 'both' as const),
          }),
          { minLength: 2, maxLength: 4 },
        ),
        async (steps, queries) => {
          const service = await serviceOnStore(new MemoryStore(), {
            actor: 'o',
            shard: 'o',
            compaction: { background: false, delayMs: 0 },
          });
          const api = embeddedApi(service, { transport: 'embedded' });
          await api.applySchema({ branch: 'main', schema: SCHEMA });
          await api.write({
            branch: 'main',
            ops: [
              ...PS.map((id) => ({ op: 'upsert' as const, table: 'P', values: { id } })),
              ...CS.map((id) => ({ op: 'upsert' as const, table: 'C', values: { id } })),
            ],
          });
          await api.createBranch({ name: 'side', from: { branch: 'main' } });
          const commits: string[] = [];
          for (const s of steps) {
            await run(api, s);
            commits.push((await api.getBranch({ name: 'into' in s ? s.into : s.branch })).head.id);
          }
          const refs = ['main', 'side', ...commits.map((c) => `commit:${c}`)];
          for (const [i, q] of queries.entries()) await checkAt(api, refs[(i * 31 + steps.length) % refs.length] as string, q);
          await service.close();
        },
      ),
      { numRuns: 30, seed: 20261206 },
    );
    expect(seen.walks).toBeGreaterThan(40);
    expect(seen.reached).toBeGreaterThan(100);
    expect(seen.paths).toBeGreaterThan(20);
    expect(seen.aggregates).toBeGreaterThan(40);
    expect(seen.fromStatistics).toBeGreaterThan(5);
  }, 600_000);
});
