/**
 * Search is exact at every ref, through every way history moves: random
 * histories of writes, WAL ingests and catch-ups, branches merged both ways,
 * cherry-picks, reverts, resets and compactions, after which every search at
 * random refs (branches, commits and tags) is compared with a brute-force
 * oracle over the rows at that ref, read back through `rows`: BM25 scores
 * equal to 1e-9, exact nearest-neighbour distances equal, the same hits.
 *
 * The oracle scores from scratch, by the definition in table/search-rank.ts
 * (BM25 per field, k1 1.2, b 0.75, statistics over the live rows), sharing
 * only the tokenizer with the engine.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { termsOf } from '../src/model/search-text.js';

const SCHEMA = `
node Doc {
  id: string @key
  title: string? @search
  body: string @search(stem: english)
  kind: enum(note, mail)
  emb: vector(4)? @index(metric: cosine)
  at: vector(3)? @index(metric: l2)
}`;

const WORDS = ['invoice', 'invoices', 'dispute', 'disputed', 'payment', 'late', 'refund', 'order', 'the', 'a', 'Ünïcode', 'naïve'];
const IDS = ['d0', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7'];
const BRANCHES = ['main', 'b1', 'b2'];

type Row = Record<string, unknown>;

const text = fc.array(fc.constantFrom(...WORDS), { minLength: 0, maxLength: 6 }).map((w) => w.join(' '));
const vec = (n: number) => fc.array(fc.integer({ min: -4, max: 4 }), { minLength: n, maxLength: n });
const doc = fc.record({
  id: fc.constantFrom(...IDS),
  title: fc.option(text, { nil: null }),
  body: text,
  kind: fc.constantFrom('note', 'mail'),
  emb: fc.option(vec(4), { nil: null }),
  at: fc.option(vec(3), { nil: null }),
});

type Step =
  | { kind: 'write'; branch: string; op: 'upsert' | 'delete' | 'update'; doc: Row }
  | { kind: 'ingest'; branch: string; docs: Row[] }
  | { kind: 'catchUp'; branch: string }
  | { kind: 'branch'; name: string; from: string }
  | { kind: 'merge'; source: string; into: string }
  | { kind: 'cherryPick'; from: string; into: string }
  | { kind: 'revert'; branch: string }
  | { kind: 'reset'; branch: string; to: string }
  | { kind: 'compact'; branch: string }
  | { kind: 'tag'; branch: string };

const branch = fc.constantFrom(...BRANCHES);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      branch,
      op: fc.constantFrom('upsert' as const, 'delete' as const, 'update' as const),
      doc,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('ingest' as const), branch, docs: fc.array(doc, { minLength: 1, maxLength: 3 }) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('catchUp' as const), branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('branch' as const), name: fc.constantFrom('b1', 'b2'), from: branch }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('merge' as const), source: branch, into: branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cherryPick' as const), from: branch, into: branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('revert' as const), branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('reset' as const), branch, to: branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('compact' as const), branch }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('tag' as const), branch }) },
);

const query = fc.record({
  text: fc.option(
    fc.array(fc.constantFrom(...WORDS, 'absent'), { minLength: 1, maxLength: 3 }).map((w) => w.join(' ')),
    { nil: undefined },
  ),
  near: fc.option(
    fc.oneof(fc.record({ property: fc.constant('emb'), vector: vec(4) }), fc.record({ property: fc.constant('at'), vector: vec(3) })),
    {
      nil: undefined,
    },
  ),
  kind: fc.option(fc.constantFrom('note', 'mail'), { nil: undefined }),
});

type Query = typeof query extends fc.Arbitrary<infer Q> ? Q : never;

/** Ignore the expected refusals of a random history (a missing branch, a conflict, nothing to revert). */
async function tolerant(
  f: () => Promise<unknown>,
  codes = ['not_found', 'branch_exists', 'constraint_violation', 'invalid_input', 'head_moved'],
): Promise<void> {
  try {
    await f();
  } catch (e) {
    if (!codes.includes((e as { code?: string }).code ?? '')) throw e;
  }
}

async function run(api: BranchgraphApi, s: Step, tags: string[]): Promise<void> {
  switch (s.kind) {
    case 'write': {
      const values = s.op === 'delete' ? { id: s.doc.id } : s.op === 'update' ? { id: s.doc.id, body: s.doc.body, emb: s.doc.emb } : s.doc;
      return tolerant(() => api.write({ branch: s.branch, ops: [{ op: s.op, table: 'Doc', values }] }));
    }
    case 'ingest':
      return tolerant(() => api.ingest({ branch: s.branch, ops: s.docs.map((d) => ({ op: 'upsert' as const, table: 'Doc', values: d })) }));
    case 'catchUp':
      return tolerant(() => api.catchUp({ branch: s.branch }));
    case 'branch':
      return tolerant(() => api.createBranch({ name: s.name, from: { branch: s.from } }));
    case 'merge':
      if (s.source === s.into) return;
      return tolerant(() => api.mergeBranch({ source: s.source, into: s.into }));
    case 'cherryPick':
      if (s.from === s.into) return;
      return tolerant(() => api.cherryPick({ branch: s.into, commit: { branch: s.from } }));
    case 'revert':
      return tolerant(() => api.revert({ branch: s.branch, commit: { branch: s.branch } }));
    case 'reset':
      return tolerant(async () => {
        const head = await api.getBranch({ name: s.branch });
        await api.resetBranch({ name: s.branch, to: { branch: s.to }, expectedHead: head.head.id });
      });
    case 'compact':
      return tolerant(() => api.compact({ branch: s.branch, mode: 'full' }));
    case 'tag': {
      const name = `t${tags.length}`;
      await tolerant(async () => {
        await api.createTag({ name, from: { branch: s.branch } });
        tags.push(name);
      });
    }
  }
}

/** BM25 of one row for a query, per the definition, over the live rows `all`. */
function oracleBm25(all: Row[], row: Row, q: string): number {
  let score = 0;
  for (const [field, stem] of [
    ['title', false],
    ['body', true],
  ] as const) {
    const docs = all.map((r) => (typeof r[field] === 'string' ? termsOf(r[field] as string, stem) : [])).filter((t) => t.length > 0);
    if (docs.length === 0) continue;
    const avgdl = docs.reduce((n, t) => n + t.length, 0) / docs.length;
    const mine = typeof row[field] === 'string' ? termsOf(row[field] as string, stem) : [];
    for (const term of new Set(termsOf(q, stem))) {
      const df = docs.filter((t) => t.includes(term)).length;
      const tf = mine.filter((t) => t === term).length;
      if (df === 0 || tf === 0) continue;
      const idf = Math.log(1 + (docs.length - df + 0.5) / (df + 0.5));
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * mine.length) / avgdl));
    }
  }
  return score;
}

function oracleDistance(property: string, a: number[], b: number[]): number {
  if (property === 'at') return Math.sqrt(a.reduce((n, x, i) => n + (x - (b[i] as number)) ** 2, 0));
  const dot = a.reduce((n, x, i) => n + x * (b[i] as number), 0);
  const na = a.reduce((n, x) => n + x * x, 0);
  const nb = b.reduce((n, x) => n + x * x, 0);
  return na === 0 || nb === 0 ? 1 : 1 - dot / Math.sqrt(na * nb);
}

async function rowsAt(api: BranchgraphApi, at: string): Promise<Row[]> {
  const page = await api.rows({ table: 'Doc', at, limit: 1000 });
  return page.items.map((i) => i.row);
}

/** How much the property compared, so a run that compared nothing fails. */
const seen = { searches: 0, hits: 0 };

async function checkSearch(api: BranchgraphApi, at: string, q: Query): Promise<void> {
  if (q.text === undefined && q.near === undefined) return;
  const all = await rowsAt(api, at);
  const where = q.kind === undefined ? undefined : { kind: { eq: q.kind } };
  const admitted = all.filter((r) => q.kind === undefined || r.kind === q.kind);
  const near = q.near === undefined ? undefined : { ...q.near, k: 1000 };
  const r = await api.search({
    table: 'Doc',
    at,
    first: 1000,
    ...(q.text !== undefined ? { text: q.text } : {}),
    ...(near !== undefined ? { near } : {}),
    ...(where !== undefined ? { where } : {}),
  });
  for (let i = 1; i < r.hits.length; i++) expect((r.hits[i - 1]?.score ?? 0) >= (r.hits[i]?.score ?? 0)).toBe(true);
  const got = new Map(r.hits.map((h) => [h.key, h]));
  if (q.text !== undefined) {
    const expected = new Map(
      admitted.map((row): [string, number] => [row.id as string, oracleBm25(all, row, q.text as string)]).filter(([, s]) => s > 0),
    );
    const textHits = r.hits.filter((h) => h.bm25 !== null);
    expect(new Set(textHits.map((h) => h.key))).toEqual(new Set(expected.keys()));
    for (const h of textHits) expect(Math.abs((h.bm25 as number) - (expected.get(h.key) as number))).toBeLessThan(1e-9);
  }
  if (q.near !== undefined) {
    const prop = q.near.property;
    const expected = new Map(
      admitted
        .filter((row) => Array.isArray(row[prop]))
        .map((row) => [row.id as string, oracleDistance(prop, q.near?.vector as number[], row[prop] as number[])]),
    );
    const nearHits = r.hits.filter((h) => h.distance !== null);
    expect(new Set(nearHits.map((h) => h.key))).toEqual(new Set(expected.keys()));
    for (const h of nearHits) expect(Math.abs((h.distance as number) - (expected.get(h.key) as number))).toBeLessThan(1e-9);
  }
  for (const h of r.hits) expect(h.row).toEqual(all.find((row) => row.id === h.key));
  seen.searches++;
  seen.hits += r.hits.length;
  expect(got.size).toBe(r.hits.length);
}

describe('search is exact at every ref, through every way history moves', () => {
  it('matches a brute-force oracle over the rows at random refs of random histories', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(doc, { minLength: 2, maxLength: 5 }),
        fc.array(step, { minLength: 4, maxLength: 24 }),
        fc.array(query, { minLength: 3, maxLength: 6 }),
        async (seeds, steps, queries) => {
          const service = await serviceOnStore(new MemoryStore(), {
            actor: 'oracle',
            shard: 'oracle',
            compaction: { background: false, delayMs: 0 },
          });
          const api = embeddedApi(service, { transport: 'embedded' });
          await api.applySchema({ branch: 'main', schema: SCHEMA });
          // Every history starts from rows on main and both branches forked from it.
          await api.write({ branch: 'main', ops: seeds.map((d) => ({ op: 'upsert' as const, table: 'Doc', values: d })) });
          for (const name of ['b1', 'b2']) await api.createBranch({ name, from: { branch: 'main' } });
          const tags: string[] = [];
          const commits: string[] = [];
          for (const s of steps) {
            await run(api, s, tags);
            // Each step's head is a ref the searches may read later, as a commit.
            const touched =
              'branch' in s ? s.branch : s.kind === 'branch' ? s.name : s.kind === 'merge' || s.kind === 'cherryPick' ? s.into : 'main';
            await tolerant(async () => commits.push((await api.getBranch({ name: touched })).head.id));
          }
          // Branches, tags and commits in turn, each kind's pick spread over its refs.
          const kinds = [BRANCHES, tags.map((t) => `tag:${t}`), commits.map((c) => `commit:${c}`)].filter((k) => k.length > 0);
          for (const [i, q] of queries.entries()) {
            const refs = kinds[i % kinds.length] as string[];
            await checkSearch(api, refs[(i * 7919 + steps.length) % refs.length] as string, q);
          }
          await service.close();
        },
      ),
      { numRuns: 40, seed: 20261205 },
    );
    expect(seen.searches).toBeGreaterThan(60);
    expect(seen.hits).toBeGreaterThan(200);
  }, 600_000);
});
