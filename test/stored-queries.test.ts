/**
 * Stored queries: named typed-GraphQL documents kept on a branch, each
 * change a commit, versioned with the branch and merged as the schema is
 * (the same change on both sides merges; different changes to one query
 * conflict); run over REST with variables; and each one an MCP tool whose
 * input schema is its variables, so a branch that changes a query changes
 * its tool.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { testServer, type TestServer } from './support/test-server.js';

const ADMIN = 'root-token-1';
let s: TestServer;
type Answer = { status: number; body: Record<string, unknown> };

async function call(method: string, path: string, a: { body?: unknown; token?: string } = {}): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${a.token ?? ADMIN}`, ...(a.body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(a.body !== undefined ? { body: JSON.stringify(a.body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
const enc = encodeURIComponent;
const headOf = async (branch: string) => ((await call('GET', `/branches/${enc(branch)}`)).body.head as { id: string }).id;

const ADULTS = 'query($min: SafeInt!) { queryP(where: { v: { gte: $min } }, orderBy: { id: ASC }) { nodes { id v } } }';
const ADULTS_BY_NAME = 'query($min: SafeInt!, $first: Int) { queryP(where: { v: { gte: $min } }, first: $first) { nodes { id } } }';

beforeAll(async () => {
  s = await testServer({ tokens: `admin:${ADMIN},read:reader-token-1` });
  expect((await call('POST', '/branches/main/schema', { body: { schema: 'node P { id: string @key\n v: int? }' } })).status).toBe(200);
  await call('POST', '/branches/main/writes', {
    body: { ops: [1, 20, 40].map((v) => ({ op: 'upsert', table: 'P', values: { id: `p${v}`, v } })) },
  });
});
afterAll(() => s.close());

describe('a stored query', () => {
  it('is stored as a commit, listed with its variables, and run with them', async () => {
    const put = await call('PUT', '/branches/main/queries/adults', {
      body: { document: ADULTS, description: 'P rows with v at least min.' },
    });
    expect(put.status, JSON.stringify(put.body)).toBe(200);
    expect(put.body.commit).toMatchObject({ kind: 'schema' });
    expect(await headOf('main')).toBe((put.body.commit as { id: string }).id);
    // The same query again publishes nothing.
    expect(
      (await call('PUT', '/branches/main/queries/adults', { body: { document: ADULTS, description: 'P rows with v at least min.' } })).body
        .commit,
    ).toBeNull();

    const listed = (await call('GET', '/branches/main/queries')).body.queries as Record<string, unknown>[];
    expect(listed).toEqual([
      expect.objectContaining({
        name: 'adults',
        operation: 'query',
        variables: [{ name: 'min', type: 'SafeInt!', required: true }],
        inputSchema: expect.objectContaining({ required: ['min'], properties: { min: expect.objectContaining({ type: 'integer' }) } }),
        problems: [],
      }),
    ]);
    const ran = await call('POST', '/branches/main/queries/adults', { body: { variables: { min: 20 } } });
    expect(ran.body).toMatchObject({
      data: {
        queryP: {
          nodes: [
            { id: 'p20', v: 20 },
            { id: 'p40', v: 40 },
          ],
        },
      },
    });
    expect(ran.body.errors).toBeUndefined();
  });

  it('refuses a document that does not run on the branch, and changes nothing', async () => {
    const head = await headOf('main');
    for (const document of ['{ nope }', 'query { queryP { nodes { id } } } query B { queryP { nodes { id } } }', 'not graphql']) {
      const r = await call('PUT', '/branches/main/queries/bad', { body: { document } });
      expect(r.status, document).toBe(400);
      expect((r.body.error as { code: string }).code).toBe('invalid_input');
    }
    expect((await call('PUT', '/branches/main/queries/9bad', { body: { document: ADULTS } })).status).toBe(400);
    expect(await headOf('main')).toBe(head);
    expect((await call('POST', '/branches/main/queries/missing', { body: {} })).status).toBe(404);
  });

  it('survives a schema change, and reports when the schema no longer runs it', async () => {
    await call('PUT', '/branches/main/queries/byV', { body: { document: 'query { queryP(where: { v: { gte: 0 } }) { nodes { id } } }' } });
    const applied = await call('POST', '/branches/main/schema', { body: { schema: 'node P { id: string @key\n v: int?\n w: string? }' } });
    expect(applied.status).toBe(200);
    const names = ((await call('GET', '/branches/main/queries')).body.queries as { name: string }[]).map((q) => q.name);
    expect(names).toEqual(['adults', 'byV']);
    await call('DELETE', '/branches/main/queries/byV');
  });

  it('is versioned with its branch, and merged as the schema is', async () => {
    expect((await call('POST', '/branches', { body: { name: 'q/one' } })).status).toBe(201);
    expect((await call('POST', '/branches', { body: { name: 'q/two' } })).status).toBe(201);
    // One side changes the query: the merge takes it, and main held its own until then.
    const changed = await call('PUT', `/branches/${enc('q/one')}/queries/adults`, {
      body: { document: ADULTS_BY_NAME, description: 'changed on one' },
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(((await call('GET', '/branches/main/queries')).body.queries as { document: string }[])[0]?.document).toBe(ADULTS);
    const merged = await call('POST', `/branches/${enc('q/one')}/merge`, { body: { into: 'main' } });
    expect(merged.body).toMatchObject({ status: 'success' });
    expect(((await call('GET', '/branches/main/queries')).body.queries as { document: string }[])[0]?.document).toBe(ADULTS_BY_NAME);

    // The same change on both sides merges; different changes to one query conflict.
    const added = { document: 'query { queryP { nodes { id } } }', description: 'all' };
    await call('POST', '/branches', { body: { name: 'q/three' } });
    await call('PUT', '/branches/main/queries/all', { body: added });
    await call('PUT', `/branches/${enc('q/three')}/queries/all`, { body: added });
    expect((await call('POST', `/branches/${enc('q/three')}/merge`, { body: { into: 'main' } })).body).toMatchObject({ status: 'success' });

    await call('PUT', `/branches/${enc('q/two')}/queries/adults`, { body: { document: ADULTS, description: 'changed on two' } });
    const head = await headOf('main');
    const clash = await call('POST', `/branches/${enc('q/two')}/merge`, { body: { into: 'main' } });
    expect(clash.status).toBe(409);
    expect(clash.body).toMatchObject({
      status: 'conflicts',
      report: { total: 1, items: [expect.objectContaining({ kind: 'SchemaConflict', table: '@queries', property: 'adults' })] },
    });
    expect(await headOf('main')).toBe(head);
  });

  it('is deleted as a commit', async () => {
    expect((await call('DELETE', '/branches/main/queries/all')).status).toBe(200);
    expect((await call('DELETE', '/branches/main/queries/all')).status).toBe(404);
  });
});

describe('stored queries as MCP tools', () => {
  const client = async (url: string, token = ADMIN): Promise<Client> => {
    const c = new Client({ name: 'stored', version: '1.0.0' });
    await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return c;
  };

  it("are tools of the endpoint's branch, with their variables as input, changing with the branch", async () => {
    await call('POST', '/branches', { body: { name: 'q/tools' } });
    await call('PUT', `/branches/${enc('q/tools')}/queries/adults`, {
      body: { document: ADULTS, description: 'the tools branch version' },
    });
    const main = await client(`${s.url}/mcp`);
    const branch = await client(`${s.url}/mcp?branch=${enc('q/tools')}`);
    try {
      const onMain = (await main.listTools()).tools.find((t) => t.name === 'query_adults');
      expect(Object.keys(onMain?.inputSchema.properties ?? {}).sort()).toEqual(['first', 'min']);
      const onBranch = (await branch.listTools()).tools.find((t) => t.name === 'query_adults');
      expect(Object.keys(onBranch?.inputSchema.properties ?? {})).toEqual(['min']);
      expect(onBranch?.description).toMatch(/the tools branch version/);
      expect(onBranch?.annotations).toMatchObject({ readOnlyHint: true });
      const answer = (await branch.callTool({ name: 'query_adults', arguments: { min: 40 } })) as { structuredContent: unknown };
      expect(answer.structuredContent).toMatchObject({ data: { queryP: { nodes: [{ id: 'p40', v: 40 }] } } });
    } finally {
      await Promise.all([main.close(), branch.close()]);
    }
  });

  it('a stored mutation needs the write role, checked where it runs', async () => {
    await call('PUT', '/branches/main/queries/addP', {
      body: { document: 'mutation($id: String!) { createP(input: { id: $id }) { key } }', description: 'add a P' },
    });
    const reader = await client(`${s.url}/mcp`, 'reader-token-1');
    try {
      expect((await reader.listTools()).tools.map((t) => t.name)).not.toContain('query_addP');
      const refused = await call('POST', '/branches/main/queries/addP', { body: { variables: { id: 'zz' } }, token: 'reader-token-1' });
      expect(JSON.stringify(refused.body)).toMatch(/forbidden/);
      expect((await call('GET', '/tables/P/rows/zz')).status).toBe(404);
    } finally {
      await reader.close();
    }
  });
});
