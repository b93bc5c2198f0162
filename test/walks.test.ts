/**
 * Walks and aggregates as users reach them: typed GraphQL answers the
 * tables' own types through the WalkNode and WalkEdge unions and typed
 * aggregate fields; REST and MCP answer the same; a whole table is counted
 * from run statistics; bad asks are clear errors with stable codes.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServer, type TestServer } from './support/test-server.js';

const SCHEMA = `
node Person { id: string @key
  name: string
  age: int?
  team: enum(red, blue) }
node City { id: string @key }
edge Knows: Person -> Person { since: int? }
edge LivesIn: Person -> City
`;

let s: TestServer;

async function post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${s.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function typed(
  query: string,
): Promise<{ data?: Record<string, unknown>; errors?: { message: string; extensions?: { code?: string } }[] }> {
  const res = await fetch(`${s.url}/branches/main/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query }),
  });
  return (await res.json()) as { data?: Record<string, unknown> };
}

beforeAll(async () => {
  s = await testServer();
  expect((await post('/branches/main/schema', { schema: SCHEMA })).status).toBe(200);
  const people = [
    { id: 'ada', name: 'Ada', age: 36, team: 'red' },
    { id: 'bob', name: 'Bob', age: 40, team: 'blue' },
    { id: 'cy', name: 'Cy', team: 'red' },
    { id: 'dee', name: 'Dee', age: 20, team: 'red' },
  ];
  const ops = [
    ...people.map((values) => ({ op: 'insert', table: 'Person', values })),
    { op: 'insert', table: 'City', values: { id: 'paris' } },
    { op: 'insert', table: 'Knows', values: { from: 'ada', to: 'bob', since: 2020 } },
    { op: 'insert', table: 'Knows', values: { from: 'bob', to: 'cy' } },
    { op: 'insert', table: 'Knows', values: { from: 'ada', to: 'dee' } },
    { op: 'insert', table: 'Knows', values: { from: 'dee', to: 'cy' } },
    { op: 'insert', table: 'LivesIn', values: { from: 'cy', to: 'paris' } },
  ];
  expect((await post('/branches/main/writes', { ops })).status).toBe(200);
});
afterAll(async () => {
  await s?.close();
});

describe('walks', () => {
  it('answer the tables own types through unions in typed GraphQL', async () => {
    const r = await typed(`{
      neighborhood(from: { table: "Person", key: "ada" }, hops: 2, direction: out) {
        nodes { depth node { __typename ... on Person { id name } ... on City { id } } }
        edges { __typename ... on Knows { fromKey toKey since } }
        truncated
      }
      shortestPath(from: { table: "Person", key: "ada" }, to: { table: "Person", key: "cy" }) {
        nodes { ... on Person { id } }
      }
      paths(from: { table: "Person", key: "ada" }, to: { table: "Person", key: "cy" }, maxHops: 3) {
        edges { ... on Knows { fromKey to { name } } }
      }
    }`);
    expect(r.errors).toBeUndefined();
    const hood = r.data?.neighborhood as { nodes: { depth: number; node: { id: string } }[]; edges: unknown[]; truncated: boolean };
    expect(hood.nodes.map((n) => [n.node.id, n.depth])).toEqual([
      ['ada', 0],
      ['bob', 1],
      ['dee', 1],
      ['cy', 2],
    ]);
    expect(hood.edges).toContainEqual({ __typename: 'Knows', fromKey: 'ada', toKey: 'bob', since: 2020 });
    expect(((r.data as Record<string, unknown>).shortestPath as { nodes: { id: string }[] }).nodes.map((n) => n.id)).toEqual([
      'ada',
      'bob',
      'cy',
    ]);
    expect(
      ((r.data as Record<string, unknown>).paths as { edges: { fromKey: string; to: { name: string } }[] }[]).map((p) =>
        p.edges.map((e) => `${e.fromKey}>${e.to.name}`).join(' '),
      ),
    ).toEqual(['ada>Bob bob>Cy', 'ada>Dee dee>Cy']);
  });

  it('answer the same over REST and MCP, across node tables, and stop at their node limit', async () => {
    const r = await post('/walks/neighborhood', { from: { table: 'City', key: 'paris' }, hops: 3, direction: 'in', first: 3 });
    expect(r.status).toBe(200);
    expect((r.body.nodes as { key: string; depth: number }[]).map((n) => [n.key, n.depth])).toEqual([
      ['paris', 0],
      ['cy', 1],
      ['bob', 2],
    ]);
    expect(r.body.truncated).toBe(true);
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`)));
    const tool = (await client.callTool({
      name: 'shortest_path',
      arguments: { from: { table: 'Person', key: 'ada' }, to: { table: 'City', key: 'paris' } },
    })) as unknown as { structuredContent: { path: { nodes: { key: string }[] } } };
    await client.close();
    expect(tool.structuredContent.path.nodes.map((n) => n.key)).toEqual(['ada', 'bob', 'cy', 'paris']);
    const none = await post('/walks/shortest-path', { from: { table: 'City', key: 'paris' }, to: { table: 'Person', key: 'ada' } });
    expect(none.body).toEqual({ path: null });
  });

  it('refuse bad asks with stable codes', async () => {
    const cases: [string, unknown, number, string][] = [
      ['/walks/neighborhood', { from: { table: 'Person', key: 'ada' }, hops: 7 }, 400, 'invalid_input'],
      ['/walks/neighborhood', { from: { table: 'Person', key: 'nobody' } }, 404, 'not_found'],
      ['/walks/neighborhood', { from: { table: 'Knows', key: '["ada","bob"]' } }, 400, 'invalid_input'],
      ['/walks/neighborhood', { from: { table: 'Person', key: 'ada' }, via: ['Person'] }, 400, 'invalid_input'],
      ['/walks/paths', { from: { table: 'Person', key: 'ada' }, to: { table: 'Nope', key: 'x' } }, 404, 'not_found'],
      ['/walks/paths', { from: { table: 'Person', key: 'ada' }, to: { table: 'Person', key: 'cy' }, first: 0 }, 400, 'invalid_input'],
      ['/tables/Person/aggregate', { groupBy: ['nope'] }, 400, 'invalid_input'],
      ['/tables/Person/aggregate', { groupBy: ['a', 'b', 'c', 'd', 'e'] }, 400, 'invalid_input'],
    ];
    for (const [path, body, status, code] of cases) {
      const r = await post(path, body);
      expect([r.status, (r.body.error as { code: string } | undefined)?.code], JSON.stringify(body)).toEqual([status, code]);
    }
  });
});

describe('aggregates', () => {
  it('count, total and group in typed GraphQL, and count a whole table from run statistics', async () => {
    const r = await typed(`{
      aggregatePerson(where: { age: { isNull: false } }, groupBy: ["team"]) {
        count min { age } max { age } sum { age } avg { age } source
        groups { key count avg { age } }
      }
      all: aggregatePerson { count source }
    }`);
    expect(r.errors).toBeUndefined();
    expect(r.data?.aggregatePerson).toEqual({
      count: 3,
      min: { age: 20 },
      max: { age: 40 },
      sum: { age: 96 },
      avg: { age: 32 },
      source: 'scan',
      groups: [
        { key: { team: 'blue' }, count: 1, avg: { age: 40 } },
        { key: { team: 'red' }, count: 2, avg: { age: 28 } },
      ],
    });
    expect(r.data?.all).toEqual({ count: 4, source: 'statistics' });
  });
});
