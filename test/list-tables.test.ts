/**
 * `listTables`: every table at a ref with its shape and stored size, the
 * same over the embedded API, REST and GraphQL, read at any ref.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { testServer, type TestServer } from './support/test-server.js';

let s: TestServer;
let api: BranchgraphApi;

beforeAll(async () => {
  s = await testServer();
  api = embeddedApi(s.service, { transport: 'embedded' });
  await api.applySchema({
    branch: 'main',
    schema: 'node Person { id: string @key\n name: string? }\nnode City { id: string @key }\nedge LivesIn: Person -> City { since: date? }',
  });
  await api.write({ branch: 'main', ops: [1, 2, 3].map((i) => ({ op: 'insert', table: 'Person', values: { id: `p${i}` } })) });
  await api.createTag({ name: 'three', from: 'main' });
  await api.write({ branch: 'main', ops: [{ op: 'update', table: 'Person', values: { id: 'p1', name: 'Ann' } }] });
});
afterAll(() => s.close());

describe('listTables', () => {
  it('lists every table with its kind, ends, key and properties, and counts what is stored', async () => {
    const r = await api.listTables({});
    // In the schema's order (by name); an edge's from and to are its ends, not properties.
    expect(r.tables.map((t) => [t.name, t.kind, t.from, t.to, t.key, t.properties])).toEqual([
      ['City', 'node', null, null, ['id'], 1],
      ['LivesIn', 'edge', 'Person', 'City', ['from', 'to'], 1],
      ['Person', 'node', null, null, ['id'], 2],
    ]);
    const person = r.tables.find((t) => t.name === 'Person');
    // Two runs: the insert's and the update's, which stores p1's new version beside the old one.
    expect(person).toMatchObject({ runs: 2, storedRows: 4 });
    expect(person?.bytes).toBeGreaterThan(0);
    expect(r.tables[0]).toMatchObject({ name: 'City', runs: 0, storedRows: 0, bytes: 0 });
    expect(r.commit).toBe((await api.getBranch({ name: 'main' })).head.id);
  });

  it('reads at any ref', async () => {
    const at = await api.listTables({ at: 'tag:three' });
    expect(at.tables.find((t) => t.name === 'Person')).toMatchObject({ runs: 1, storedRows: 3 });
    expect(at.commit).toBe((await api.getTag({ name: 'three' })).commit);
  });

  it('answers the same over REST and GraphQL', async () => {
    const embedded = await api.listTables({ at: 'main' });
    const rest = await fetch(`${s.url}/tables?at=main`).then((r) => r.json());
    expect(rest).toEqual(embedded);
    const gql = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: '{ tables(at: "main") { commit tables { name kind from to key properties runs storedRows bytes } } }',
      }),
    }).then((r) => r.json());
    expect(gql).toEqual({ data: { tables: embedded } });
  });

  it('refuses a ref that names nothing with not_found, on every transport', async () => {
    await expect(api.listTables({ at: 'tag:nope' })).rejects.toMatchObject({ code: 'not_found' });
    const rest = await fetch(`${s.url}/tables?at=tag:nope`);
    expect(rest.status).toBe(404);
    expect(await rest.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
