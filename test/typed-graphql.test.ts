/**
 * The typed GraphQL API per branch: the naming and collision rules, typed
 * reads and traversals the same over HTTP and embedded, per-branch schemas
 * and `at:`, typed mutations landing as one commit, batching per level (the
 * store calls of a level do not grow with its start nodes), the SDL
 * download, roles, and the GraphQL-over-HTTP server audit on both GraphQL
 * endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSchema, validate, parse } from 'graphql';
import { serverAudits } from 'graphql-http';
import { parseSchema } from '../src/model/schema-parser.js';
import { typedNames } from '../src/graphql/typed-names.js';
import { buildTypedSchema } from '../src/graphql/typed-schema.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { embeddedTypedGraphql } from '../src/http/typed-graphql-endpoint.js';
import { COMPILE_AFTER } from '../src/graphql/jit-execution.js';
import { testServer, type TestServer } from './support/test-server.js';

type Answer = {
  data?: Record<string, unknown>;
  errors?: { message: string; extensions?: Record<string, unknown> }[];
  extensions?: Record<string, unknown>;
};

async function post(url: string, query: string, token?: string): Promise<Answer & { status: number }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/graphql-response+json',
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify({ query }),
  });
  return { status: res.status, ...((await res.json()) as Answer) };
}

describe('naming rules', () => {
  it('settles collisions with trailing underscores, deterministically', () => {
    const schema = parseSchema(`
      node Person { id: string @key
        key: string?
        knowsOut: int?
        role: enum(admin, true) }
      node person { id: string @key }
      node PersonWhere { id: string @key }
      node Query { id: string @key }
      node Commit { id: string @key }
      edge Knows: Person -> Person {}
      edge knows: person -> Person {}
    `);
    const n = typedNames(schema);
    expect(n.get('Person')?.type).toBe('Person');
    // `person` after `Person`: the family Person... is taken.
    expect(n.get('person')?.type).toBe('Person_');
    expect(n.get('PersonWhere')?.type).toBe('PersonWhere_');
    expect(n.get('Query')?.type).toBe('Query_');
    expect(n.get('Commit')?.type).toBe('Commit_');
    // A property named like a generated field keeps its name; the generated field moves.
    expect(n.get('Person')?.fields.key).toBe('key_');
    expect(n.get('Person')?.fields.out.Knows).toBe('knowsOut_');
    expect(n.get('Person')?.fields.in.Knows).toBe('knowsIn');
    expect(n.get('Person')?.fields.in.knows).toBe('knows_In');
    expect(n.get('person')?.fields.out.knows).toBe('knows_Out');
    expect(n.get('Person')?.get).toBe('getPerson');
    expect(n.get('person')?.get).toBe('getPerson_');
    // The same schema always names the same way, and the result is a valid GraphQL schema.
    expect([...typedNames(schema)]).toEqual([...n]);
    const sdl = buildTypedSchema(schema).schema;
    expect(validate(sdl, parse('{ getPerson(id: "a") { key_ key knowsOut_(first: 1) { totalCount } role } }'))).toEqual([]);
    expect(sdl.getType('PersonRole')?.toString()).toBe('PersonRole');
    // GraphQL forbids `true` as an enum value: it reads as `true_` and stores as `true`.
    expect(
      (sdl.getType('PersonRole') as unknown as { getValues(): { name: string; value: string }[] })
        .getValues()
        .map((v) => [v.name, v.value]),
    ).toEqual([
      ['admin', 'admin'],
      ['true_', 'true'],
    ]);
  });

  it('keeps key arguments apart from at and set, and list mutations apart from other tables', () => {
    const schema = parseSchema('node A { at: string @key\n v: int? }\nnode ManyA { id: string @key }');
    const n = typedNames(schema);
    expect(n.get('A')?.keyArgs).toEqual({ at: 'at_' });
    // `createManyA` of A and `createManyA` of a table ManyA cannot meet: ManyA yields.
    expect(n.get('ManyA')?.type).toBe('ManyA_');
    const ts = buildTypedSchema(schema).schema;
    expect(validate(ts, parse('{ getA(at_: "x", at: "main") { at v } }'))).toEqual([]);
    expect(validate(ts, parse('mutation { updateA(at_: "x", set: {v: 1}) { key } createManyA(inputs: [{at: "y"}]) { key } }'))).toEqual([]);
  });

  it('builds a schema for an empty graph and for every property type', () => {
    expect(() => buildTypedSchema({ format: 1, types: [] }).schema.toConfig()).not.toThrow();
    const all = buildTypedSchema(
      parseSchema(
        'node T { id: string @key\n s: string\n i: int?\n f: float?\n b: bool?\n d: date?\n t: datetime?\n j: json?\n e: enum(x, y) }',
      ),
    );
    const fields = (all.schema.getType('T') as unknown as { getFields(): Record<string, { type: { toString(): string } }> }).getFields();
    expect(Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.type.toString()]))).toEqual({
      key: 'String!',
      id: 'String!',
      s: 'String!',
      i: 'SafeInt',
      f: 'Float',
      b: 'Boolean',
      d: 'Date',
      t: 'DateTime',
      j: 'JSON',
      e: 'TE!',
    });
  });
});

const SCHEMA = `node Person { id: string @key
  name: string
  age: int?
  email: string? @unique }
edge Knows: Person -> Person { since: date? }`;

describe('the typed API on a server', () => {
  let s: TestServer;
  let api: BranchgraphApi;
  beforeAll(async () => {
    s = await testServer();
    api = embeddedApi(s.service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    const people = Array.from({ length: 300 }, (_, i) => ({
      op: 'insert' as const,
      table: 'Person',
      values: { id: `p${String(i).padStart(3, '0')}`, name: `N${i}`, age: i % 90, email: `p${i}@x` },
    }));
    const knows = Array.from({ length: 300 }, (_, i) => ({
      op: 'insert' as const,
      table: 'Knows',
      values: { from: `p${String(i).padStart(3, '0')}`, to: `p${String((i * 7 + 1) % 300).padStart(3, '0')}` },
    }));
    await api.write({ branch: 'main', ops: [...people, ...knows] });
  });
  afterAll(() => s.close());

  const url = () => `${s.url}/branches/main/graphql`;

  it('answers the same over HTTP and embedded, and names the commit it read', async () => {
    const q = '{ getPerson(id: "p001") { name age knowsOut(first: 5) { nodes { to { key name knowsIn(first: 5) { totalCount } } } } } }';
    const http = await post(url(), q);
    const embedded = (await embeddedTypedGraphql(s.service, { transport: 'embedded' })('main', q)) as Answer;
    expect(http.errors).toBeUndefined();
    expect(http.data).toEqual(embedded.data);
    expect(http.data).toEqual({
      getPerson: { name: 'N1', age: 1, knowsOut: { nodes: [{ to: { key: 'p008', name: 'N8', knowsIn: { totalCount: 1 } } }] } },
    });
    const head = (await api.getBranch({ name: 'main' })).head.id;
    expect(http.extensions).toMatchObject({ branchgraph: { branch: 'main', commits: { main: head } } });
  });

  it('batches each level: the store calls of a traversal do not grow with the start nodes', async () => {
    const levels = async (n: number) => {
      s.graph.dropCaches();
      const r = await post(url(), `query @explain { queryPerson(first: ${n}) { nodes { knowsOut(first: 3) { nodes { to { name } } } } } }`);
      expect(r.errors).toBeUndefined();
      return (
        r.extensions as {
          explain: { levels: { level: number; batches: number; storeCalls: number; rowsRead: number; segmentsRead: number }[] };
        }
      ).explain.levels;
    };
    const few = await levels(10);
    const many = await levels(300);
    expect(many.map((l) => l.batches)).toEqual([1, 1, 1]);
    expect(few.map((l) => l.batches)).toEqual([1, 1, 1]);
    // Levels 2 and 3 read 300 start nodes' edges and far nodes in as many calls as 10 need.
    expect(many.map((l) => l.storeCalls)).toEqual(few.map((l) => l.storeCalls));
    expect(many[1]?.rowsRead).toBe(300);
    expect(many[2]?.rowsRead).toBe(300);
    // A cold level reads each segment it touches once (and a segmented run's list of segments).
    for (const l of many) {
      expect(l.segmentsRead).toBeGreaterThan(0);
      expect(l.storeCalls).toBeLessThanOrEqual(l.segmentsRead + 1);
    }
  });

  it('plans nested reads ahead without changing any answer: aliases, variables, fragments, filters, cursors', async () => {
    await api.createBranch({ name: 'plan' });
    const extra = [20, 21, 22, 23].map((i) => ({ op: 'insert' as const, table: 'Knows', values: { from: 'p010', to: `p0${i}` } }));
    await api.write({ branch: 'plan', ops: extra });
    const planUrl = `${s.url}/branches/plan/graphql`;
    // One traversal asked four ways: each alias has its own arguments, so its own batch and answer.
    const doc = `query Q($n: Int!) {
      getPerson(id: "p010") {
        a: knowsOut(first: 1) { nodes { toKey } }
        b: knowsOut(first: $n) { totalCount edges { cursor node { ...Far } } pageInfo { hasNextPage endCursor } }
        c: knowsOut(where: {to: {name: {eq: "N23"}}}) { nodes { toKey } }
        d: knowsOut(first: 5) @include(if: false) { totalCount }
      }
    }
    fragment Far on Knows { toKey to { name knowsOut(first: 1) { nodes { toKey } } } }`;
    const res = await fetch(planUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query: doc, variables: { n: 3 } }),
    });
    const r = (await res.json()) as Answer;
    expect(r.errors).toBeUndefined();
    const p = r.data?.getPerson as Record<
      string,
      {
        nodes?: unknown[];
        edges?: { cursor: string; node: unknown }[];
        totalCount?: number;
        pageInfo?: { hasNextPage: boolean; endCursor: string };
      }
    >;
    expect(p.a?.nodes).toEqual([{ toKey: 'p020' }]);
    expect(p.b?.totalCount).toBe(5);
    expect(p.b?.edges?.map((e) => e.node)).toEqual(
      [20, 21, 22].map((i) => ({ toKey: `p0${i}`, to: { name: `N${i}`, knowsOut: { nodes: [{ toKey: `p${(i * 7 + 1) % 300}` }] } } })),
    );
    expect(new Set(p.b?.edges?.map((e) => e.cursor)).size).toBe(3);
    expect(p.b?.pageInfo).toEqual({ hasNextPage: true, endCursor: p.b?.edges?.[2]?.cursor });
    expect(p.c?.nodes).toEqual([{ toKey: 'p023' }]);
    expect(p.d).toBeUndefined();
    // The planned page's cursor continues where it ended.
    const next = await post(
      planUrl,
      `{ getPerson(id: "p010") { knowsOut(first: 3, after: "${p.b?.pageInfo?.endCursor}") { nodes { toKey } } } }`,
    );
    expect(next.data).toEqual({ getPerson: { knowsOut: { nodes: [{ toKey: 'p023' }, { toKey: 'p071' }] } } });
  });

  it('pages the same rows over REST, each item with a cursor that continues the query', async () => {
    const page = async (after?: string) => {
      const res = await fetch(`${s.url}/tables/Person/query`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          where: { age: { lt: 2 } },
          orderBy: [{ prop: 'name', direction: 'desc' }],
          first: 2,
          ...(after ? { after } : {}),
        }),
      });
      expect(res.status).toBe(200);
      return (await res.json()) as { items: { key: string; cursor: string }[]; hasNextPage: boolean };
    };
    const one = await page();
    expect(one.items.map((i) => i.key)).toEqual(['p091', 'p090']);
    expect(one.items.every((i) => typeof i.cursor === 'string' && i.cursor.length > 0)).toBe(true);
    const two = await page(one.items[1]?.cursor);
    expect(two.items.map((i) => i.key)).toEqual(['p271', 'p270']);
    expect(two.hasNextPage).toBe(true);
  });

  it('serves a schema per branch, reads other refs with at:, and refuses fields the branch lacks by name', async () => {
    await api.createBranch({ name: 'feature/nick' });
    await api.applySchema({
      branch: 'feature/nick',
      schema: SCHEMA.replace('email: string? @unique', 'email: string? @unique\n  nick: string?'),
    });
    await api.write({
      branch: 'feature/nick',
      ops: [{ op: 'update', table: 'Person', values: { id: 'p000', nick: 'zero', name: 'Zero' } }],
    });
    const branchUrl = `${s.url}/branches/${encodeURIComponent('feature/nick')}/graphql`;
    const r = await post(branchUrl, '{ a: getPerson(id: "p000") { name nick } b: getPerson(id: "p000", at: "main") { name } }');
    expect(r.data).toEqual({ a: { name: 'Zero', nick: 'zero' }, b: { name: 'N0' } });
    const refused = await post(url(), '{ getPerson(id: "p000") { nick } }');
    expect(refused.status).toBe(400);
    expect(refused.errors?.[0]?.message).toContain('"nick"');
    expect(refused.errors?.[0]?.extensions?.code).toBe('invalid_input');
    const sdl = await fetch(`${s.url}/branches/${encodeURIComponent('feature/nick')}/schema.graphql`);
    expect(sdl.status).toBe(200);
    const text = await sdl.text();
    expect(text).toContain('nick: String');
    expect(() => buildSchema(text)).not.toThrow();
    const missing = await fetch(`${s.url}/branches/nope/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ __typename }"}',
    });
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('lands a document of mutations as one commit, or refuses it whole naming the field', async () => {
    const before = (await api.getBranch({ name: 'main' })).head.id;
    const bad = await post(
      url(),
      `mutation { a: createPerson(input: {id: "n1", name: "New"}) { key } b: updatePerson(id: "p002", set: {name: null}) { key } }`,
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('constraint_violation');
    expect(bad.errors?.[0]?.extensions?.issues).toEqual([expect.objectContaining({ path: 'b.set.name' })]);
    expect((await api.getBranch({ name: 'main' })).head.id).toBe(before);
    const stale = await post(
      url(),
      `mutation @commit(expectedHead: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { createPerson(input: {id: "n1", name: "New"}) { key } }`,
    );
    expect(stale.errors?.[0]?.extensions?.code).toBe('head_moved');
    const ok = await post(
      url(),
      `mutation @commit(message: "two people", author: "ada", expectedHead: "${before}") {
        a: createPerson(input: {id: "n1", name: "New", email: "n1@x"}) { commit { id message author parents } row { name email } }
        k: createKnows(input: {fromKey: "n1", toKey: "p000"}) { row { from { name } to { key } } }
      }`,
    );
    expect(ok.errors).toBeUndefined();
    const a = ok.data?.a as { commit: { id: string; message: string; author: string; parents: string[] }; row: unknown };
    expect(a.commit).toMatchObject({ message: 'two people', author: 'ada', parents: [before] });
    expect(a.row).toEqual({ name: 'New', email: 'n1@x' });
    expect(ok.data?.k).toEqual({ row: { from: { name: 'New' }, to: { key: 'p000' } } });
    expect((await api.getBranch({ name: 'main' })).head.id).toBe(a.commit.id);
  });

  it('writes a list mutation of 100 rows as one commit, and names the failing input by its index', async () => {
    const inputs = Array.from({ length: 100 }, (_, i) => `{id: "m${i}", name: "M${i}", age: ${i}}`).join(', ');
    const ok = await post(url(), `mutation { m: upsertManyPerson(inputs: [${inputs}]) { commit { id } key row { age } } }`);
    expect(ok.errors).toBeUndefined();
    const rows = ok.data?.m as { commit: { id: string }; key: string; row: { age: number } }[];
    expect(rows).toHaveLength(100);
    expect(new Set(rows.map((r) => r.commit.id)).size).toBe(1);
    expect(rows[42]).toMatchObject({ key: 'm42', row: { age: 42 } });
    const bad = await post(
      url(),
      'mutation { m: createManyPerson(inputs: [{id: "q1", name: "Q"}, {id: "q2", name: "Q", email: "p3@x"}]) { key } }',
    );
    expect(bad.errors?.[0]?.extensions?.code).toBe('constraint_violation');
    const issues = bad.errors?.[0]?.extensions?.issues as { path: string }[];
    expect(issues[0]?.path).toMatch(/^m\.1/);
    const none = await post(url(), 'mutation { m: createManyPerson(inputs: []) { key } }');
    expect(none.data).toEqual({ m: [] });
  });

  it('filters by a unique property through its index, and pages with cursors', async () => {
    const r = await post(url(), '{ queryPerson(where: {email: {eq: "p42@x"}}) { totalCount nodes { key } } }');
    expect(r.data).toEqual({ queryPerson: { totalCount: 1, nodes: [{ key: 'p042' }] } });
    const page1 = await post(
      url(),
      '{ queryPerson(where: {age: {lt: 2}}, orderBy: [{name: DESC}], first: 2) { nodes { key } pageInfo { hasNextPage endCursor } } }',
    );
    const info = (page1.data as { queryPerson: { pageInfo: { endCursor: string; hasNextPage: boolean } } }).queryPerson.pageInfo;
    expect(info.hasNextPage).toBe(true);
    const page2 = await post(
      url(),
      `{ queryPerson(where: {age: {lt: 2}}, orderBy: [{name: DESC}], first: 10, after: "${info.endCursor}") { nodes { key } } }`,
    );
    const all = await post(url(), '{ queryPerson(where: {age: {lt: 2}}, orderBy: [{name: DESC}], first: 100) { nodes { key } } }');
    const keys = (x: Answer) => (x.data as { queryPerson: { nodes: { key: string }[] } }).queryPerson.nodes.map((n) => n.key);
    expect([...keys(page1), ...keys(page2)]).toEqual(keys(all));
  });

  it('regression: answers root and nested fields in the order the selection names them, on both endpoints', async () => {
    const typed = await post(
      url(),
      '{ z: getPerson(id: "p042") { name key } a: queryPerson(first: 1) { totalCount nodes { key } } m: getPerson(id: "p001") { key } }',
    );
    expect(Object.keys(typed.data ?? {})).toEqual(['z', 'a', 'm']);
    expect(Object.keys((typed.data as { z: object }).z)).toEqual(['name', 'key']);
    expect(Object.keys((typed.data as { a: object }).a)).toEqual(['totalCount', 'nodes']);
    const admin = await post(`${s.url}/graphql`, '{ z: schema { commit } a: branches { items { name } } }');
    expect(Object.keys(admin.data ?? {})).toEqual(['z', 'a']);
  });

  it('counts the cost before running: deep unbounded traversals are refused', async () => {
    const r = await post(url(), '{ queryPerson { nodes { knowsOut { nodes { to { knowsOut { totalCount } } } } } } }');
    expect(r.errors?.[0]?.extensions?.code).toBe('invalid_input');
    expect(r.errors?.[0]?.message).toContain('costs more');
  });

  it.each(['/graphql', '/branches/main/graphql'])('answers a body that is not JSON at %s with invalid_input', async (path) => {
    const res = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{bad' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as Answer).errors?.[0]?.extensions?.code).toBe('invalid_input');
  });

  it('regression: a document sent again and again answers the same before and after it is compiled, whatever its variables', async () => {
    // Past the compile threshold (COMPILE_AFTER runs), a `where` variable (a recursive input type)
    // used to fill the heap while compiling, and a variable that did not bind answered 500.
    const send = async (query: string, variables: Record<string, unknown>) => {
      const res = await fetch(url(), {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ query, variables }),
      });
      const { extensions, ...answer } = (await res.json()) as Answer;
      return { status: res.status, ...answer };
    };
    const filtered = 'query($w: PersonWhere, $n: Int) { queryPerson(where: $w, first: $n) { nodes { id } } }';
    const byKey = 'query($id: ID!) { getPerson(id: $id) { name } }';
    const cases: [string, Record<string, unknown>][] = [
      [filtered, { w: { _or: [{ name: { eq: 'N3' } }, { age: { eq: 4 } }] }, n: 5 }],
      [filtered, { w: { name: { eq: 'N3' } }, n: false }],
      [byKey, {}],
      ['query($n: Int!) { queryPerson(first: $n) { nodes { id } } }', { n: 'two' }],
      [byKey, { id: 'p002' }],
    ];
    for (const [query, variables] of cases) {
      const first = await send(query, variables);
      expect(first.status).toBeLessThan(500);
      for (let run = 1; run < COMPILE_AFTER + 4; run++) expect(await send(query, variables)).toEqual(first);
    }
  });

  it('answers every document compiled exactly as graphql-js interprets it', async () => {
    const compiled = embeddedTypedGraphql(s.service, { transport: 'embedded' }, { compileAfter: 0 });
    const interpreted = embeddedTypedGraphql(s.service, { transport: 'embedded' }, { compileAfter: Number.POSITIVE_INFINITY });
    const docs: [string, Record<string, unknown>?][] = [
      ['{ getPerson(id: "p003") { __typename key id name age email knowsOut { totalCount nodes { since to { name } } } } }'],
      [
        'query Q($id: ID!, $n: Int) { a: getPerson(id: $id) { ...P knowsIn(first: $n) { edges { cursor node { from { ...P } } } pageInfo { hasNextPage endCursor } } } } fragment P on Person { id name }',
        { id: 'p010', n: 2 },
      ],
      ['query Q($id: ID!) { getPerson(id: $id) { name } }', { id: 7 }],
      ['query Q($id: ID!) { getPerson(id: $id) { name } }', {}],
      ['{ getPerson(id: "nobody") { name } missing: getPerson(id: "nobody2") { id } }'],
      [
        'query($skip: Boolean!) { queryPerson(where: {age: {gte: 80}}, orderBy: [{name: DESC}], first: 3) { totalCount nodes { name @skip(if: $skip) age ... on Person { id } } } }',
        { skip: true },
      ],
      [
        '{ queryPerson(where: {_or: [{name: {prefix: "N29"}}, {email: {eq: "p5@x"}}]}, first: 5) { nodes { id } } queryKnows(first: 2) { nodes { from { id } to { id } } } }',
      ],
      ['{ queryPerson(first: 2, after: "not a cursor") { nodes { id } } }'],
      ['{ queryPerson(first: 1, orderBy: [{age: ASC}], where: {age: {in: [3, 4]}, name: {not: {eq: "N3"}}}) { nodes { id age } } }'],
      ['{ __schema { queryType { name } } __type(name: "Person") { fields { name } } }'],
    ];
    for (const [query, variables] of docs) {
      const a = (await compiled('main', query, variables)) as Answer;
      const b = (await interpreted('main', query, variables)) as Answer;
      expect({ query, ...a }).toEqual({ query, ...b });
      // Data in the same order too: the selection's.
      expect(JSON.stringify(a.data)).toBe(JSON.stringify(b.data));
    }
  });

  // A browser's request (it names its origin) goes through all of Yoga; a plain API call is
  // answered from its parsed parameters. Both must answer alike, whatever the call.
  it.each(['/graphql', '/branches/main/graphql'])('answers plain API calls at %s exactly as the full Yoga path does', async (path) => {
    const typed = path !== '/graphql';
    const bodies: unknown[] = [
      { query: typed ? '{ getPerson(id: "p002") { name knowsIn(first: 2) { totalCount } } }' : '{ branches { items { name } } }' },
      { query: typed ? 'query Q($id: ID!) { getPerson(id: $id) { name } }' : 'query Q($n: Int) { branches(limit: $n) { nextCursor } }' },
      { query: typed ? 'query Q($id: ID!) { getPerson(id: $id) { name } }' : '{ branches { items { name } } }', variables: { id: 7 } },
      { query: '{ nope }' },
      { query: '{ unclosed' },
      { query: `{ ${'x: __typename '.repeat(3)} }`, operationName: 'Missing' },
      { query: typed ? '{ queryPerson { nodes { knowsOut { nodes { to { knowsOut { totalCount } } } } } } }' : '{ __typename }' },
      { query: `{ a${'{'.repeat(200)} }` },
      { query: '{ __typename }', variables: 5 },
      { variables: {} },
      {
        query: typed
          ? 'mutation @commit(expectedHead: "01ARZ3NDEKTSV4RRFFQ69G5FAV") { createPerson(input: {id: "n9", name: "N"}) { key } }'
          : 'mutation { createBranch(name: "bad name!", from: "main") { name } }',
      },
    ];
    for (const accept of [undefined, '*/*', 'application/json', 'application/graphql-response+json'])
      for (const body of bodies) {
        const answer = async (origin?: string) => {
          const res = await fetch(`${s.url}${path}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', ...(accept ? { accept } : {}), ...(origin ? { origin } : {}) },
            body: JSON.stringify(body),
          });
          return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
        };
        const direct = await answer();
        expect({ accept, sent: body, ...direct }).toEqual({ accept, sent: body, ...(await answer('http://localhost')) });
        expect(direct.status).toBeLessThan(500);
      }
  });

  it.each(['/graphql', '/branches/main/graphql'])('passes the GraphQL-over-HTTP server audit at %s', async (path) => {
    const results = await Promise.all(serverAudits({ url: `${s.url}${path}` }).map((a) => a.fn()));
    const errors = results.filter((r) => r.status === 'error').map((r) => `${r.name}: ${'reason' in r ? r.reason : ''}`);
    expect(errors).toEqual([]);
    expect(results.length).toBeGreaterThan(50);
  });
});

describe('roles on the typed API', () => {
  it('reads with a read token, refuses its mutations, and takes writes from a write token', async () => {
    const s = await testServer({ tokens: 'read:reader-token,write:writer-token' });
    try {
      const api = embeddedApi(s.service, { transport: 'embedded' });
      await api.applySchema({ branch: 'main', schema: SCHEMA });
      const url = `${s.url}/branches/main/graphql`;
      expect((await post(url, '{ queryPerson { totalCount } }', 'reader-token')).data).toEqual({ queryPerson: { totalCount: 0 } });
      const m = 'mutation { createPerson(input: {id: "a", name: "A"}) { key } }';
      expect((await post(url, m, 'reader-token')).errors?.[0]?.extensions?.code).toBe('forbidden');
      expect((await post(url, m, 'writer-token')).data).toEqual({ createPerson: { key: 'a' } });
      expect((await post(url, '{ __typename }')).status).toBe(401);
    } finally {
      await s.close();
    }
  });
});
