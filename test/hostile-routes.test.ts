/**
 * Every route, hostile: each operation openapi.yaml describes, and each root
 * field of both GraphQL endpoints (admin and typed), called with values a
 * client may send by mistake or on purpose (other types, objects whose keys
 * shadow Object.prototype's methods, ill-formed Unicode, refs that resolve
 * to nothing, ids of things that exist); and each operation that takes a
 * body, with bodies shaped like its request schema so they reach the
 * handlers. Whatever arrives, the answer is never a 5xx, every error carries
 * a code from the closed set, and a refused request changes nothing stored.
 * The routes and fields come from the contract itself, so a new operation is
 * covered the day it is added.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/model/errors.js';
import { listAll } from '../src/store/object-store.js';
import { gql, testServer, type TestServer } from './support/test-server.js';
import { OPENAPI, resolveRef, type OpenApiSchema } from './support/openapi.js';

/** Values that have broken servers: prototype-shadowing keys, lone surrogates, extremes, refs and ids. */
function hostileValue(ids: string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.jsonValue({ maxDepth: 3 }),
    fc.constantFrom<unknown>(
      { toString: 'x' },
      { valueOf: 1, toJSON: 'y' },
      JSON.parse('{"__proto__": {"polluted": true}}'),
      { constructor: { prototype: {} } },
      '\uD800',
      'x'.repeat(5000),
      '',
      -1,
      1e308,
      2 ** 53 + 2,
      1.5,
      'main~1',
      'main~99999999999999999999',
      'main^2',
      'main@{1970-01-01T00:00:00Z}',
      'commit:nope',
      'tag:nope',
      '..',
      '%00',
      ...ids,
    ),
  );
}

/** A path segment or query value: hostile text, or the name of something that exists. */
function hostileText(ids: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    fc.constantFrom(
      'main',
      'side',
      'v1',
      'Person',
      'Knows',
      'a',
      '..',
      '%2e%2e',
      '%00',
      '%ED%A0%80',
      'main~1',
      'main@{2020-01-01}',
      '-1',
      'NaN',
      'toString',
      '__proto__',
      'x'.repeat(3000),
      ...ids,
    ),
    fc.string({ maxLength: 16 }).map(encodeURIComponent),
  );
}

type JsonSchema = OpenApiSchema;

type Route = { method: string; path: string; query: string[]; body?: JsonSchema };

/**
 * A body shaped like `schema` (its properties, enums, arrays and alternatives), with a hostile value
 * in place of one part in six: it gets past the shape checks a random value never passes, and
 * reaches the handlers behind them.
 */
function shapedBody(schema: JsonSchema | undefined, ids: string[], depth = 0): fc.Arbitrary<unknown> {
  const s = schema === undefined ? undefined : resolveRef(schema);
  if (s === undefined || depth > 5) return hostileValue(ids);
  const alternatives = s.oneOf ?? s.anyOf;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  const shaped: fc.Arbitrary<unknown> =
    alternatives !== undefined
      ? fc.oneof(...alternatives.map((a) => shapedBody(a, ids, depth + 1)))
      : s.enum !== undefined
        ? fc.constantFrom(...s.enum)
        : type === 'object' || s.properties !== undefined
          ? fc.record(Object.fromEntries(Object.entries(s.properties ?? {}).map(([k, v]) => [k, shapedBody(v, ids, depth + 1)])), {
              requiredKeys: (s.required ?? []).filter((k) => s.properties?.[k] !== undefined),
            })
          : type === 'array'
            ? fc.array(shapedBody(s.items, ids, depth + 1), { maxLength: 3 })
            : type === 'integer' || type === 'number'
              ? fc.oneof(fc.integer({ min: -2, max: 5 }), fc.constantFrom(s.minimum ?? 0, s.maximum ?? 100, 1e9))
              : type === 'boolean'
                ? fc.boolean()
                : type === 'string'
                  ? fc.oneof(
                      fc.constantFrom('main', 'side', 'v1', 'Person', 'Knows', 'a', 'b', 'main~1', ...ids),
                      fc.string({ maxLength: 10 }),
                    )
                  : hostileValue(ids);
  return fc.oneof({ weight: 5, arbitrary: shaped }, { weight: 1, arbitrary: hostileValue(ids) });
}

function contractRoutes(): Route[] {
  const spec = OPENAPI;
  const routes: Route[] = [];
  for (const [p, item] of Object.entries(spec.paths)) {
    // The event stream stays open by design: its refusals are covered in event-feed.test.ts.
    if (p === '/events/stream') continue;
    for (const m of ['get', 'post', 'put', 'patch', 'delete']) {
      const op = item[m];
      if (op === undefined) continue;
      const query = [...(item.parameters ?? []), ...(op.parameters ?? [])].filter((x) => x.in === 'query').map((x) => x.name);
      routes.push({ method: m.toUpperCase(), path: p, query, body: op.requestBody?.content?.['application/json']?.schema });
    }
  }
  return routes;
}

/** Runs per property: a hundred in npm test; CI runs more (HOSTILE_RUNS). */
const RUNS = Number(process.env.HOSTILE_RUNS ?? 100);
/** npm test replays one fixed sample, so it passes or fails the same way every time; CI (HOSTILE_RUNS) draws fresh ones. */
const PROPERTY_RUNS = { numRuns: RUNS, ...(process.env.HOSTILE_RUNS === undefined ? { seed: 20261205 } : {}) };
/** A run is a request or two of a few milliseconds; the timeout leaves far more than ten times that. */
const TIMEOUT = 60_000 + RUNS * 100;

const CODES = Object.keys(ERROR_CODES);
/** What a hostile request may be answered with: any code but the one for a fault of the server's. */
const CLIENT_CODES = CODES.filter((c) => c !== 'internal');

describe('every route, hostile', () => {
  let s: TestServer;
  const ids: string[] = [];
  /** The stored keys once the server is idle (background confirmations and hints written). */
  const stored = async () => {
    await s.service.idle();
    return (await listAll(s.store, '')).map((o) => o.key).join('\n');
  };
  /** Under 500; a refusal (in GraphQL's shape or REST's envelope) with client codes that changed nothing. */
  const expectAnswer = async (res: Response, before: string, request: string): Promise<void> => {
    const text = await res.text();
    const what = `${request} → ${res.status} ${text.slice(0, 300)}`;
    expect(res.status, what).toBeLessThan(500);
    if (res.status < 400 || !res.headers.get('content-type')?.includes('json')) return;
    const answer = JSON.parse(text) as {
      jsonrpc?: string;
      error?: { code?: string | number; data?: { code?: string } };
      errors?: { extensions?: { code?: string } }[];
      status?: string;
    };
    // MCP answers JSON-RPC: its stable code is the error's data. A merge's conflicts are a value
    // (409 with the exact conflicts), not an error: it carries no code, and it must change nothing.
    const codes =
      answer.status === 'conflicts'
        ? []
        : answer.jsonrpc !== undefined
          ? [answer.error?.data?.code]
          : (answer.errors?.map((e) => e.extensions?.code) ?? [answer.error?.code as string]);
    expectCleanRefusal({ codes, before, after: await stored(), what });
  };

  beforeAll(async () => {
    s = await testServer();
    const post = async (p: string, body: unknown) => {
      const res = await fetch(s.url + p, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      expect(res.status, p).toBeLessThan(300);
      return (await res.json()) as Record<string, unknown>;
    };
    await post('/branches/main/schema', {
      schema:
        'node Person { id: string @key\n name: string\n age: int?\n email: string? @unique }\nedge Knows: Person -> Person { since: int? }',
    });
    await post('/branches/main/writes', {
      ops: [
        { op: 'insert', table: 'Person', values: { id: 'a', name: 'A' } },
        { op: 'insert', table: 'Person', values: { id: 'b', name: 'B' } },
        { op: 'insert', table: 'Knows', values: { from: 'a', to: 'b' } },
      ],
    });
    await post('/branches', { name: 'side', from: 'main' });
    await post('/branches/side/writes', { ops: [{ op: 'update', table: 'Person', values: { id: 'a', name: 'A2' } }] });
    await post('/branches/main/writes', { ops: [{ op: 'update', table: 'Person', values: { id: 'a', name: 'A3' } }] });
    const mr = await post('/merge-requests', { source: 'side', target: 'main', title: 'conflicting' });
    await post('/tags', { name: 'v1', from: 'main' });
    const head = (await (await fetch(`${s.url}/branches/main`)).json()) as { head: { id: string } };
    ids.push(String(mr.id), head.head.id, `commit:${head.head.id}`);
  });
  afterAll(() => s.close());

  it(
    'REST: every operation in openapi.yaml, with hostile path segments, query values and bodies',
    async () => {
      const routes = contractRoutes();
      expect(routes.length).toBeGreaterThan(50);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...routes),
          fc.array(hostileText(ids), { minLength: 3, maxLength: 3 }),
          fc.dictionary(fc.string({ maxLength: 12 }), hostileText(ids)),
          // A body is hostile JSON, or any text at all.
          fc.option(
            fc.oneof(
              hostileValue(ids).map((v) => JSON.stringify(v)),
              fc.string(),
            ),
            { nil: undefined },
          ),
          async (route, segments, extra, body) => {
            let i = 0;
            const path = route.path.replace(/\{[^}]+\}/g, () => segments[i++ % segments.length] as string);
            const query = new URLSearchParams();
            // The route's own parameters get hostile values; a few unknown ones ride along.
            route.query.forEach((name, k) => {
              query.set(name, decodeURIComponentOr(segments[k % segments.length] as string));
            });
            for (const [k, v] of Object.entries(extra).slice(0, 2)) query.set(k, v);
            const before = await stored();
            const res = await fetch(`${s.url}${path}?${query}`, {
              method: route.method,
              headers: { 'content-type': 'application/json' },
              body: route.method === 'GET' ? undefined : body,
            });
            await expectAnswer(res, before, `${route.method} ${path}`);
          },
        ),
        PROPERTY_RUNS,
      );
    },
    TIMEOUT,
  );

  it.each(['/graphql', '/branches/main/graphql'])(
    'GraphQL at %s: every root field, each argument a variable with a hostile value',
    async (endpoint) => {
      const ask = (query: string, variables: Record<string, unknown>) => gql(s.url + endpoint.replace(/\/graphql$/, ''), query, variables);
      const intro = await ask(
        '{ __schema { queryType { name } mutationType { name } types { name fields { name args { name type { ...T } } } } } } fragment T on __Type { kind name ofType { kind name ofType { kind name ofType { kind name } } } }',
        {},
      );
      type TypeRef = { kind: string; name: string | null; ofType: TypeRef | null };
      const schema = intro.body.data?.__schema as {
        queryType: { name: string };
        mutationType: { name: string };
        types: { name: string; fields: { name: string; args: { name: string; type: TypeRef }[] }[] | null }[];
      };
      const spell = (t: TypeRef): string =>
        t.kind === 'NON_NULL' ? `${spell(t.ofType as TypeRef)}!` : t.kind === 'LIST' ? `[${spell(t.ofType as TypeRef)}]` : String(t.name);
      const fields = [
        ['query', schema.queryType.name],
        ['mutation', schema.mutationType.name],
      ].flatMap(([op, root]) =>
        (schema.types.find((t) => t.name === root)?.fields ?? []).map((f) => ({
          op,
          name: f.name,
          args: f.args.map((a) => ({ name: a.name, type: spell(a.type) })),
        })),
      );
      expect(fields.length).toBeGreaterThan(10);
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...fields),
          fc.array(hostileValue(ids), { minLength: 6, maxLength: 6 }),
          fc.option(fc.string({ maxLength: 80 })),
          async (f, values, text) => {
            const decl = f.args.map((a, i) => `$v${i}: ${a.type}`).join(', ');
            const call = f.args.map((a, i) => `${a.name}: $v${i}`).join(', ');
            // Sometimes not a document at all.
            const query = text ?? `${f.op}${decl ? `(${decl})` : ''} { ${f.name}${call ? `(${call})` : ''} { __typename } }`;
            const variables = Object.fromEntries(f.args.map((_, i) => [`v${i}`, values[i % values.length]]));
            const before = await stored();
            const r = await ask(query, variables);
            const what = `${query} ${JSON.stringify(variables).slice(0, 300)} → ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`;
            expect(r.status, what).toBeLessThan(500);
            for (const e of r.body.errors ?? []) expect(CLIENT_CODES, what).toContain(e.extensions?.code);
            if (r.body.errors !== undefined) expect(await stored(), what).toBe(before);
          },
        ),
        PROPERTY_RUNS,
      );
    },
    TIMEOUT,
  );

  // Last: the shaped bodies often succeed, and what they write changes the graph the tests above read.
  it(
    'REST: every operation that takes a body, with bodies shaped like its request schema and hostile parts',
    async () => {
      // A remote the shapes would add names any URL, and fetching it reaches that host or bucket for
      // real: what a fetch answers for an unreachable remote is tested in test/remotes.test.ts.
      const routes = contractRoutes().filter((r) => r.body !== undefined && !(r.method === 'PUT' && r.path === '/remotes/{name}'));
      expect(routes.length).toBeGreaterThan(20);
      const segment = fc.constantFrom('main', 'side', 'v1', 'Person', 'a', ...ids);
      let pastValidation = 0;
      await fc.assert(
        fc.asyncProperty(
          fc
            .constantFrom(...routes)
            .chain((r) => fc.tuple(fc.constant(r), shapedBody(r.body, ids), fc.array(segment, { minLength: 2, maxLength: 2 }))),
          async ([route, body, segments]) => {
            let i = 0;
            const path = route.path.replace(/\{[^}]+\}/g, () => encodeURIComponent(segments[i++ % segments.length] as string));
            const before = await stored();
            const res = await fetch(`${s.url}${path}`, {
              method: route.method,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            // Past validation: it succeeded, or its handler refused it for what it names (a missing branch, a conflict).
            const code = res.status < 300 ? undefined : ((await res.clone().json()) as { error?: { code?: string } }).error?.code;
            if (code !== 'invalid_input') pastValidation++;
            await expectAnswer(res, before, `${route.method} ${path} ${JSON.stringify(body).slice(0, 300)}`);
          },
        ),
        PROPERTY_RUNS,
      );
      // The shapes get past validation often enough to reach the handlers behind it.
      expect(pastValidation).toBeGreaterThan(RUNS / 10);
    },
    TIMEOUT,
  );
});

/**
 * A refusal: its codes from the closed set, and nothing stored changed. One refusal is a decision
 * made after documented work: merging a merge request revises it first (its heads, its checks),
 * and a refusal to merge keeps that revision, so the request and its events may change.
 */
function expectCleanRefusal(a: { codes: (string | undefined)[]; before: string; after: string; what: string }): void {
  for (const code of a.codes) expect(CLIENT_CODES, a.what).toContain(code);
  const x = new Set(a.before.split('\n'));
  const y = new Set(a.after.split('\n'));
  const changed = [...[...y].filter((k) => !x.has(k)), ...[...x].filter((k) => !y.has(k))];
  const revised = a.codes.includes('request_not_mergeable');
  expect(
    changed.filter((k) => !(revised && /^(requests|events)\//u.test(k))),
    a.what,
  ).toEqual([]);
}

function decodeURIComponentOr(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}
