/**
 * Search as users reach it: REST, typed GraphQL, MCP and the embedded API
 * answer the same hits; `where` filters before the top-k; `@embed` vectors
 * are filled as writes land (by the local embedder, or an OpenAI-compatible
 * endpoint), and an embedder's failure refuses the write and changes
 * nothing; bad asks are clear errors with stable codes; a table's segments
 * are stored beside its runs, read back by a fresh process, and collected
 * with them.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { httpEmbedder } from '../src/service/embedders.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { Graph } from '../src/graph/graph.js';
import { observe, sameContents } from './support/observe.js';
import { testServer, type TestServer } from './support/test-server.js';

const SCHEMA = `
node Doc {
  id: string @key
  title: string @search
  body: string @search(stem: english)
  kind: enum(note, mail)
  emb: vector(8)? @index(metric: cosine) @embed(from: body)
}
node Plain { id: string @key }
`;

const DOCS = [
  { id: 'a', title: 'Invoice dispute', body: 'The customer disputes the invoice of March.', kind: 'mail' },
  { id: 'b', title: 'Late payment', body: 'Payment arrived late; no dispute was raised.', kind: 'note' },
  { id: 'c', title: 'Refund', body: 'A refund was issued for the disputed invoices.', kind: 'note' },
  { id: 'd', title: 'Lunch', body: 'Sandwiches for the team.', kind: 'note' },
];

let s: TestServer;

async function rest(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

type Hit = {
  key: string;
  score: number;
  bm25: number | null;
  distance: number | null;
  highlights: { property: string; fragment: string; matches: number[][] }[];
  row: Record<string, unknown>;
};
const keys = (hits: unknown): string[] => (hits as Hit[]).map((h) => h.key);

beforeAll(async () => {
  s = await testServer();
  expect((await rest('/branches/main/schema', { schema: SCHEMA })).status).toBe(200);
  const w = await rest('/branches/main/writes', { ops: DOCS.map((values) => ({ op: 'insert', table: 'Doc', values })) });
  expect(w.status).toBe(200);
});
afterAll(async () => {
  await s?.close();
});

describe('search', () => {
  it('ranks by BM25 over every @search property, stems where asked, and marks what matched', async () => {
    const r = await rest('/tables/Doc/search', { text: 'disputed invoice' });
    expect(r.status).toBe(200);
    const hits = r.body.hits as Hit[];
    // Stemming meets "disputes", "dispute" and "disputed" in the body; the title is not stemmed.
    expect(keys(hits).sort()).toEqual(['a', 'b', 'c']);
    expect(hits[0]?.key).toBe('a');
    for (let i = 1; i < hits.length; i++) expect((hits[i - 1] as Hit).score).toBeGreaterThanOrEqual((hits[i] as Hit).score);
    const a = hits[0] as Hit;
    expect(a.bm25).toBe(a.score);
    expect(a.distance).toBeNull();
    const title = a.highlights.find((h) => h.property === 'title');
    // The title is not stemmed: "disputed" does not meet its "dispute".
    expect(title?.matches.map(([x, y]) => title.fragment.slice(x, y))).toEqual(['Invoice']);
    const body = a.highlights.find((h) => h.property === 'body');
    expect(body?.matches.map(([x, y]) => body.fragment.slice(x, y))).toEqual(['disputes', 'invoice']);
  });

  it('filters with where before the top-k, not after', async () => {
    const best = await rest('/tables/Doc/search', { text: 'invoice', first: 1 });
    expect(keys(best.body.hits)).toEqual(['a']);
    const notes = await rest('/tables/Doc/search', { text: 'invoice', first: 1, where: { kind: { eq: 'note' } } });
    expect(keys(notes.body.hits)).toEqual(['c']);
  });

  it('fills @embed vectors as writes land and finds neighbours by vector or by text', async () => {
    const row = await fetch(`${s.url}/tables/Doc/rows/a`).then((r) => r.json() as Promise<{ row: { emb: number[] } }>);
    expect(row.row.emb).toHaveLength(8);
    const byText = await rest('/tables/Doc/search', { near: { text: 'Sandwiches for the team.' }, first: 2 });
    expect(byText.status).toBe(200);
    expect((byText.body.hits as Hit[])[0]).toMatchObject({ key: 'd', bm25: null });
    expect((byText.body.hits as Hit[])[0]?.distance).toBeCloseTo(0, 6);
    const byVector = await rest('/tables/Doc/search', { near: { vector: row.row.emb }, first: 1 });
    expect(keys(byVector.body.hits)).toEqual(['a']);
  });

  it('fuses text and vector ranks by reciprocal rank fusion', async () => {
    const r = await rest('/tables/Doc/search', { text: 'invoice', near: { text: 'Sandwiches for the team.', k: 4 }, first: 4 });
    const hits = r.body.hits as Hit[];
    expect(keys(hits)).toContain('d');
    const d = hits.find((h) => h.key === 'd') as Hit;
    expect(d.bm25).toBeNull();
    expect(d.distance).not.toBeNull();
    // Every fused score is a sum of 1/(60 + rank) terms: at most 2/61.
    for (const h of hits) expect(h.score).toBeLessThanOrEqual(2 / 61 + 1e-12);
  });

  it('answers the same hits over typed GraphQL, MCP and the embedded API', async () => {
    const res = await fetch(`${s.url}/branches/main/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query:
          '{ searchDoc(text: "disputed invoice", where: { kind: { eq: note } }) { score bm25 distance highlights { property fragment matches } node { id title } } }',
      }),
    });
    const gql = (await res.json()) as { data: { searchDoc: { score: number; node: { id: string } }[] }; errors?: unknown };
    expect(gql.errors).toBeUndefined();
    const restHits = (await rest('/tables/Doc/search', { text: 'disputed invoice', where: { kind: { eq: 'note' } } })).body.hits as Hit[];
    expect(gql.data.searchDoc.map((h) => h.node.id)).toEqual(keys(restHits));
    expect(gql.data.searchDoc.map((h) => h.score)).toEqual(restHits.map((h) => h.score));

    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
    const tool = (await client.callTool({
      name: 'search',
      arguments: { table: 'Doc', text: 'disputed invoice', where: { kind: { eq: 'note' } } },
    })) as unknown as {
      structuredContent: { hits: Hit[] };
    };
    await client.close();
    expect(keys(tool.structuredContent.hits)).toEqual(keys(restHits));
  });

  it('refuses a bad ask with a stable code on every transport, and publishes nothing', async () => {
    const before = await fetch(`${s.url}/branches/main`).then((r) => r.json() as Promise<{ head: { id: string } }>);
    const cases: [unknown, string][] = [
      [{}, 'invalid_input'],
      [{ text: 'x', first: 0 }, 'invalid_input'],
      [{ near: { vector: [1, 2] } }, 'invalid_input'],
      [{ near: { vector: [1, 2, 3, 4, 5, 6, 7, 'x'] } }, 'invalid_input'],
      [{ near: { vector: [1, 2, 3, 4, 5, 6, 7, 8], text: 'both' } }, 'invalid_input'],
      [{ near: { vector: [1, 2, 3, 4, 5, 6, 7, 8], property: 'title' } }, 'invalid_input'],
      [{ text: 'x', where: { emb: { eq: [1] } } }, 'invalid_input'],
      [{ text: 'x', where: { nope: { eq: 1 } } }, 'invalid_input'],
    ];
    for (const [ask, code] of cases) {
      const r = await rest('/tables/Doc/search', ask);
      expect([r.status, (r.body.error as { code: string }).code], JSON.stringify(ask)).toEqual([400, code]);
    }
    const plain = await rest('/tables/Plain/search', { text: 'x' });
    expect([plain.status, (plain.body.error as { code: string }).code]).toEqual([400, 'invalid_input']);
    const missing = await rest('/tables/Nope/search', { text: 'x' });
    expect(missing.status).toBe(404);
    const bad = await rest('/branches/main/writes', {
      ops: [{ op: 'upsert', table: 'Doc', values: { ...DOCS[0], emb: [1, 2, 3, 4, 5, 6, 7, Number.NaN] } }],
    });
    expect(bad.status).toBe(422);
    const long = await rest('/branches/main/writes', {
      ops: [{ op: 'upsert', table: 'Doc', values: { ...DOCS[0], emb: [1e39, 0, 0, 0, 0, 0, 0, 0] } }],
    });
    expect(long.status).toBe(422);
    const after = await fetch(`${s.url}/branches/main`).then((r) => r.json() as Promise<{ head: { id: string } }>);
    expect(after.head.id).toBe(before.head.id);
  });
});

describe('embedders', () => {
  let endpoint: Server;
  let answer: 'ok' | 'fail' = 'ok';
  const calls: { input: string[]; dimensions: number; auth: string | undefined }[] = [];
  beforeAll(async () => {
    endpoint = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => {
        body += d.toString();
      });
      req.on('end', () => {
        const ask = JSON.parse(body) as { input: string[]; dimensions: number };
        calls.push({ ...ask, auth: req.headers.authorization });
        if (answer === 'fail') {
          res.writeHead(500).end('{"error":"down"}');
          return;
        }
        // A stand-in for a model: the vector says how long each text is.
        const data = ask.input.map((t, index) => ({
          index,
          embedding: Array.from({ length: ask.dimensions }, (_, i) => (i === 0 ? t.length : 1)),
        }));
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ data }));
      });
    });
    await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
  });
  afterAll(() => new Promise<void>((r) => endpoint.close(() => r())));

  it('an OpenAI-compatible endpoint fills @embed vectors; its failure refuses the write and changes nothing', async () => {
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1/embeddings`;
    const store = new MemoryStore();
    const service = await serviceOnStore(store, {
      actor: 't',
      shard: 't',
      graph: { embedder: httpEmbedder({ url, key: 'k1', model: 'm' }) },
    });
    const api = embeddedApi(service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'Doc', values: DOCS[0] as Record<string, unknown> }] });
    expect(calls.at(-1)).toEqual({ model: 'm', input: [DOCS[0]?.body], dimensions: 8, auth: 'Bearer k1' });
    const row = await api.getRow({ table: 'Doc', key: 'a' });
    expect((row.row.emb as number[])[0]).toBe(DOCS[0]?.body.length);
    // An update that changes the text embeds it again; one that gives the vector keeps it.
    await api.write({ branch: 'main', ops: [{ op: 'update', table: 'Doc', values: { id: 'a', body: 'short' } }] });
    expect(((await api.getRow({ table: 'Doc', key: 'a' })).row.emb as number[])[0]).toBe(5);
    answer = 'fail';
    const seen = await observe(store);
    await expect(
      api.write({ branch: 'main', ops: [{ op: 'insert', table: 'Doc', values: DOCS[1] as Record<string, unknown> }] }),
    ).rejects.toMatchObject({
      code: 'embedding_failed',
    });
    await expect(
      api.ingest({ branch: 'main', ops: [{ op: 'insert', table: 'Doc', values: DOCS[1] as Record<string, unknown> }] }),
    ).rejects.toMatchObject({
      code: 'embedding_failed',
    });
    await expect(api.search({ table: 'Doc', near: { text: 'x' } })).rejects.toMatchObject({ code: 'embedding_failed' });
    expect(sameContents(seen, await observe(store))).toBe(true);
    answer = 'ok';
    await service.close();
  });
});

describe('search segments', () => {
  it('read a run stored in pieces as one, and answer each hit with its own row', async () => {
    const service = await serviceOnStore(new MemoryStore(), { actor: 't', shard: 't' });
    const api = embeddedApi(service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    const many = Array.from({ length: 2500 }, (_, i) => ({
      id: `k${String(i).padStart(4, '0')}`,
      title: `item ${i}`,
      body: i % 500 === 7 ? 'rare needle' : 'common hay',
      kind: 'note',
    }));
    for (let at = 0; at < many.length; at += 1000)
      await api.write({
        branch: 'main',
        ops: many.slice(at, at + 1000).map((values) => ({ op: 'insert' as const, table: 'Doc', values })),
      });
    await api.compact({ branch: 'main', mode: 'full' });
    const r = await api.search({ table: 'Doc', text: 'needle', first: 10 });
    expect(r.hits.map((h) => h.key).sort()).toEqual(['k0007', 'k0507', 'k1007', 'k1507', 'k2007']);
    for (const h of r.hits) expect(h.row.title).toBe(`item ${Number(h.key.slice(1))}`);
    // Vectors read back from the run's binary column as written: the nearest to a row's own vector is that row, at distance 0.
    const own = r.hits[0] as (typeof r.hits)[number];
    const self = await api.search({ table: 'Doc', near: { vector: own.row.emb as number[] }, first: 1 });
    expect(self.hits[0]?.key).toBe(own.key);
    expect(self.hits[0]?.distance).toBeLessThan(1e-9);
    expect(own.row.emb).toEqual((own.row.emb as number[]).map(Math.fround));
    const near = await api.search({
      table: 'Doc',
      near: { vector: r.hits[0]?.row.emb as number[] },
      where: { title: { eq: 'item 2007' } },
      first: 1,
    });
    expect(near.hits.map((h) => [h.key, h.row.title])).toEqual([['k2007', 'item 2007']]);
    await service.close();
  });

  it('are stored beside their runs, read back by a fresh process, and collected with them', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, { actor: 't' });
    await g.applySchema('main', SCHEMA);
    await g.write(
      'main',
      DOCS.map((values) => ({ op: 'insert' as const, table: 'Doc', values })),
    );
    const service = await serviceOnStore(store, { actor: 't', shard: 't' });
    const api = embeddedApi(service, { transport: 'embedded' });
    const first = await api.search({ table: 'Doc', text: 'invoice' });
    const stored = await listKeys(store, 'search/');
    expect(stored.length).toBeGreaterThan(0);
    // A fresh process finds the segment stored and builds nothing: the same hits, no new objects.
    const fresh = embeddedApi(await serviceOnStore(store, { actor: 't', shard: 't' }), { transport: 'embedded' });
    expect((await fresh.search({ table: 'Doc', text: 'invoice' })).hits).toEqual(first.hits);
    expect(await listKeys(store, 'search/')).toEqual(stored);
    // A deleted branch's runs are collected once the grace has passed, and their segments with them.
    await g.createBranch('scratch', { branch: 'main' });
    await g.write('scratch', [{ op: 'insert', table: 'Doc', values: { id: 'z', title: 'Scratch invoice', body: 'x', kind: 'note' } }]);
    await api.search({ table: 'Doc', text: 'invoice', at: 'scratch' });
    const withScratch = await listKeys(store, 'search/');
    expect(withScratch.length).toBeGreaterThan(stored.length);
    await g.deleteBranch('scratch');
    const report = await g.gc({ graceMs: 0, now: Date.now() + 24 * 3_600_000 });
    expect(report.deleted.search).toBe(withScratch.length - stored.length);
    expect(await listKeys(store, 'search/')).toEqual(stored);
    expect((await api.search({ table: 'Doc', text: 'invoice' })).hits).toEqual(first.hits);
  });
});

async function listKeys(store: MemoryStore, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of store.list(prefix)) out.push(o.key);
  return out.sort();
}
