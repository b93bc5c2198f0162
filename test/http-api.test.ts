import { readFileSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildSchema, printSchema } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { createApp } from '../src/http/app.js';
import { RestClient } from '../src/http/rest-client.js';
import { allRows } from '../src/service/api.js';
import { graphqlSchema } from '../src/graphql/graphql-schema.js';
import { listAll } from '../src/store/object-store.js';
import { PEOPLE_SCHEMA } from './support/fixtures.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const openapi = parseYaml(readFileSync('openapi.yaml', 'utf8')) as {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }>; $ref?: string }> }>>;
  components: Record<string, unknown>;
};
const ajv = new (Ajv2020 as unknown as typeof Ajv2020.default)({ strict: false, allErrors: true });
// Formats (date-time above all) are checked, not ignored.
(addFormats as unknown as typeof addFormats.default)(ajv);
ajv.addSchema({ $id: 'openapi', components: openapi.components });

function responseSchema(method: string, route: string, status: number): unknown {
  const path = route.replace(/:(\w+)/g, '{$1}');
  const op = openapi.paths[path]?.[method.toLowerCase()];
  if (op === undefined) throw new Error(`${method} ${path} is not documented`);
  let r = op.responses[String(status)] ?? op.responses[`${String(status)[0]}XX`] ?? op.responses.default;
  if (r?.$ref !== undefined) r = (openapi.components.responses as Record<string, typeof r>)[r.$ref.split('/').pop() as string];
  const schema = r?.content?.['application/json']?.schema;
  if (schema === undefined) throw new Error(`${method} ${path} ${status} has no JSON schema`);
  return JSON.parse(JSON.stringify(schema).replace(/"#\/components/g, '"openapi#/components'));
}

/** Call a route and check the response against the OpenAPI document. */
async function call(
  s: TestServer,
  method: string,
  route: string,
  path: string,
  body?: unknown,
  raw?: string,
): Promise<{ status: number; body: any }> {
  const res = await fetch(s.url + path, {
    method,
    ...(raw !== undefined
      ? { body: raw, headers: { 'content-type': 'application/x-ndjson' } }
      : body !== undefined
        ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }
        : {}),
  });
  const json = (await res.json()) as unknown;
  const validate = ajv.compile(responseSchema(method, route, res.status) as object);
  if (!validate(json))
    throw new Error(
      `${method} ${path} → ${res.status} does not match openapi.yaml: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(json).slice(0, 500)}`,
    );
  return { status: res.status, body: json };
}

describe('REST API', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await testServer();
  });
  afterAll(async () => s.close());

  it('documents every registered route in openapi.yaml', () => {
    const app = createApp({ service: {} as never, host: {} as never, logger: s.logger, tokens: new Map() });
    const documented = new Set(
      Object.entries(openapi.paths).flatMap(([p, ops]) =>
        Object.keys(ops)
          .filter((m) => m !== 'parameters')
          .map((m) => `${m.toUpperCase()} ${p}`),
      ),
    );
    const routes = app.routes.filter((r) => r.method !== 'ALL').map((r) => `${r.method} ${r.path.replace(/:(\w+)/g, '{$1}')}`);
    for (const r of routes) expect(documented, r).toContain(r);
  });

  it('a full round: schema, writes, branch, merge, conflict, retry — every response matches the contract', async () => {
    expect((await call(s, 'POST', '/branches/:id/schema', '/branches/main/schema', { schema: PEOPLE_SCHEMA })).status).toBe(200);
    const w = await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
      ops: [
        { op: 'insert', table: 'Person', values: { id: 'a', name: 'Ann', age: 30 } },
        { op: 'insert', table: 'Person', values: { id: 'b', name: 'Bob' } },
        { op: 'insert', table: 'Knows', values: { from: 'a', to: 'b' } },
      ],
    });
    expect(w.body).toMatchObject({ inserted: 3 });
    expect((await call(s, 'POST', '/branches', '/branches', { name: 'review/2026-07' })).status).toBe(201);
    const enc = encodeURIComponent('review/2026-07');
    await call(s, 'POST', '/branches/:id/writes', `/branches/${enc}/writes`, {
      ops: [{ op: 'update', table: 'Person', values: { id: 'a', age: 31 } }],
    });
    await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
      ops: [{ op: 'update', table: 'Person', values: { id: 'a', age: 32 } }],
    });
    const conflict = await call(s, 'POST', '/branches/:id/merge', `/branches/${enc}/merge`, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body.report.items).toEqual([
      expect.objectContaining({ kind: 'DivergentUpdate', table: 'Person', key: 'a', property: 'age', base: 30, source: 31, target: 32 }),
    ]);
    await call(s, 'POST', '/branches/:id/writes', `/branches/${enc}/writes`, {
      ops: [{ op: 'update', table: 'Person', values: { id: 'a', age: 32 } }],
    });
    const ok = await call(s, 'POST', '/branches/:id/merge', `/branches/${enc}/merge`, { message: 'land review' });
    expect(ok.body).toMatchObject({ status: 'success', outcome: 'merged', commit: { message: 'land review' } });

    await call(s, 'GET', '/branches', '/branches');
    await call(s, 'GET', '/branches/:id', `/branches/${enc}`);
    const rows = await call(
      s,
      'GET',
      '/tables/:table/rows',
      `/tables/Person/rows?where=${encodeURIComponent('{"age":{"op":"gte","value":32}}')}`,
    );
    expect(rows.body.items.map((r: { key: string }) => r.key)).toEqual(['a']);
    await call(s, 'GET', '/tables/:table/rows/:key', '/tables/Person/rows/a');
    const edges = await call(s, 'GET', '/tables/:table/rows/:key/edges', '/tables/Person/rows/a/edges?direction=out');
    expect(edges.body.edges).toHaveLength(1);
    const log = await call(s, 'GET', '/commits', '/commits?limit=3');
    await call(s, 'GET', '/commits/:id', `/commits/${log.body.commits[0].id}`);
    const diff = await call(s, 'GET', '/diff', `/diff?from=commit:${w.body.commit.id}&to=main`);
    expect(diff.body.tables[0].table).toBe('Person');
    await call(s, 'GET', '/schema', '/schema?at=main');
    await call(s, 'POST', '/branches/:id/load', '/branches/main/load', undefined, '{"table":"Person","values":{"id":"c","name":"C"}}\n');
    await call(s, 'POST', '/gc', '/gc', { dryRun: true });
    await call(s, 'DELETE', '/branches/:id', `/branches/${enc}`);
  });

  it('merge resolutions over REST and GraphQL: preview, stale refusal, landing, and the commit that records them', async () => {
    await call(s, 'POST', '/branches', '/branches', { name: 'res' });
    await call(s, 'POST', '/branches/:id/writes', '/branches/res/writes', {
      ops: [{ op: 'upsert', table: 'Person', values: { id: 'r1', name: 'Src' } }],
    });
    await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
      ops: [{ op: 'upsert', table: 'Person', values: { id: 'r1', name: 'Tgt' } }],
    });
    const preview = await call(s, 'POST', '/branches/:id/merge', '/branches/res/merge', { dryRun: true });
    expect(preview.status).toBe(409);
    const [conflict] = preview.body.report.items;
    const choice = {
      table: 'Person',
      key: 'r1',
      take: 'source',
      expected: { source: conflict.source, target: { ...conflict.target, name: 'moved' } },
    };
    const stale = await call(s, 'POST', '/branches/:id/merge', '/branches/res/merge', { resolutions: { conflicts: [choice] } });
    expect([stale.status, stale.body.error.code, stale.body.error.retryable]).toEqual([409, 'resolution_stale', true]);
    const pinned = { expectedSourceHead: preview.body.sourceHead, expectedTargetHead: preview.body.targetHead };
    const bad = await call(s, 'POST', '/branches/:id/merge', '/branches/res/merge', { resolutions: { strategy: 'mine-wins' } });
    expect([bad.status, bad.body.error.issues[0].path]).toEqual([400, 'body.resolutions.strategy']);
    const landed = await call(s, 'POST', '/branches/:id/merge', '/branches/res/merge', {
      ...pinned,
      resolutions: { conflicts: [{ ...choice, expected: { source: conflict.source, target: conflict.target } }] },
    });
    expect(landed.body).toMatchObject({
      status: 'success',
      outcome: 'merged',
      resolved: { strategy: null, total: 1, items: [{ key: 'r1', take: 'source', by: 'choice', kind: 'DivergentInsert' }] },
    });
    expect((await call(s, 'GET', '/tables/:table/rows/:key', '/tables/Person/rows/r1')).body.row.name).toBe('Src');
    const shown = await call(s, 'GET', '/commits/:id', `/commits/${landed.body.commit.id}`);
    expect(shown.body.resolved).toEqual(landed.body.resolved);
    // GraphQL: the same request shape, with null meaning delete in a value.
    await call(s, 'POST', '/branches/:id/writes', '/branches/res/writes', {
      ops: [{ op: 'update', table: 'Person', values: { id: 'r1', name: 'Src2' } }],
    });
    await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
      ops: [{ op: 'update', table: 'Person', values: { id: 'r1', name: 'Tgt2' } }],
    });
    const g = await gql(
      s.url,
      `mutation { mergeBranch(source: "res", input: { resolutions: { conflicts: [{ table: "Person", key: "r1", property: null, take: "value", value: null }] } }) {
        __typename ... on MergeSuccess { outcome resolved { strategy total items { key property kind take by } } commit { resolved { total } } } } }`,
    );
    expect(g.body.data?.mergeBranch).toEqual({
      __typename: 'MergeSuccess',
      outcome: 'merged',
      resolved: {
        strategy: null,
        total: 1,
        items: [{ key: 'r1', property: 'name', kind: 'DivergentUpdate', take: 'value', by: 'choice' }],
      },
      commit: { resolved: { total: 1 } },
    });
    expect((await call(s, 'GET', '/tables/:table/rows/:key', '/tables/Person/rows/r1')).status).toBe(404);
  });

  it('three-dot diffs show what a branch brings since its merge base; two-dot diffs page with counts', async () => {
    await call(s, 'POST', '/branches', '/branches', { name: 'dots' });
    await call(s, 'POST', '/branches/:id/writes', '/branches/dots/writes', {
      ops: [{ op: 'insert', table: 'Person', values: { id: 'onbranch', name: 'B' } }],
    });
    await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
      ops: [
        { op: 'insert', table: 'Person', values: { id: 'onmain1', name: 'M' } },
        { op: 'insert', table: 'Person', values: { id: 'onmain2', name: 'M' } },
      ],
    });
    const three = (await call(s, 'GET', '/diff', '/diff?from=main&to=dots&mode=three-dot')).body;
    expect(three.tables).toEqual([
      { table: 'Person', inserted: [{ key: 'onbranch', row: expect.objectContaining({ name: 'B' }) }], updated: [], deleted: [] },
    ]);
    expect(three.base).toMatch(/^[0-9A-Z]{26}$/);
    expect(three.summary).toEqual([{ table: 'Person', inserted: 1, updated: 0, deleted: 0 }]);
    // Two-dot from main: the branch lacks main's two rows and has its own; paged one change at a time, from pinned commits.
    const first = (await call(s, 'GET', '/diff', '/diff?from=main&to=dots&limit=1')).body;
    expect(first.summary).toEqual([{ table: 'Person', inserted: 1, updated: 0, deleted: 2 }]);
    const keys: string[] = first.tables.flatMap((t: { inserted: { key: string }[]; deleted: { key: string }[] }) =>
      [...t.inserted, ...t.deleted].map((r) => r.key),
    );
    let cursor: string | null = first.nextCursor;
    while (cursor !== null) {
      const page = (
        await call(s, 'GET', '/diff', `/diff?from=commit:${first.from}&to=commit:${first.to}&limit=1&cursor=${encodeURIComponent(cursor)}`)
      ).body;
      keys.push(
        ...page.tables.flatMap((t: { inserted: { key: string }[]; deleted: { key: string }[] }) =>
          [...t.inserted, ...t.deleted].map((r) => r.key),
        ),
      );
      cursor = page.nextCursor;
    }
    expect(keys).toEqual(['onbranch', 'onmain1', 'onmain2']);
    expect((await call(s, 'GET', '/diff', '/diff?from=main&to=dots&mode=four-dot')).status).toBe(400);
    const g = await gql(
      s.url,
      '{ changes(from: "main", to: "dots", mode: "three-dot") { mode base summary { table inserted deleted } tables { inserted { key } } } }',
    );
    expect(g.body.data?.changes).toEqual({
      mode: 'three-dot',
      base: three.base,
      summary: [{ table: 'Person', inserted: 1, deleted: 0 }],
      tables: [{ inserted: [{ key: 'onbranch' }] }],
    });
  });

  it('tags over REST and GraphQL: create, read at tag:NAME, branch from one, refuse a taken name', async () => {
    const made = await call(s, 'POST', '/tags', '/tags', { name: 'release/1', message: 'first release' });
    expect(made.status).toBe(201);
    await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
      ops: [{ op: 'upsert', table: 'Person', values: { id: 'after-tag', name: 'N' } }],
    });
    const at = await call(s, 'GET', '/tables/:table/rows/:key', `/tables/Person/rows/after-tag?at=${encodeURIComponent('tag:release/1')}`);
    expect(at.status).toBe(404);
    expect((await call(s, 'GET', '/tags/:name', '/tags/release%2F1')).body).toEqual(made.body);
    expect((await call(s, 'GET', '/tags', '/tags')).body.tags.map((t: { name: string }) => t.name)).toEqual(['release/1']);
    const taken = await call(s, 'POST', '/tags', '/tags', { name: 'release/1', from: { branch: 'main' } });
    expect([taken.status, taken.body.error.code]).toEqual([409, 'tag_exists']);
    expect((await call(s, 'POST', '/branches', '/branches', { name: 'from-tag', from: { tag: 'release/1' } })).body.head.id).toBe(
      made.body.commit,
    );
    const g = await gql(s.url, 'mutation { createTag(name: "release/2", from: "tag:release/1") { name commit } }');
    expect(g.body.data?.createTag).toEqual({ name: 'release/2', commit: made.body.commit });
    expect((await gql(s.url, '{ tags { name } }')).body.data?.tags).toEqual([{ name: 'release/1' }, { name: 'release/2' }]);
    expect((await call(s, 'DELETE', '/tags/:name', '/tags/release%2F2')).body).toEqual({ deleted: 'release/2' });
    expect((await call(s, 'GET', '/tags/:name', '/tags/release%2F2')).status).toBe(404);
    await call(s, 'DELETE', '/branches/:id', '/branches/from-tag');
  });

  it('WAL over REST: a streamed NDJSON ingest, status, catch-up; a bad line refuses its generation only', async () => {
    const before = (await call(s, 'POST', '/branches/:id/ingest', '/branches/main/ingest', undefined, 'not json\n')).body;
    expect(before.error).toMatchObject({ code: 'invalid_input', issues: [{ path: 'line 1' }] });
    const lines = [
      '{"table":"Person","values":{"id":"w1","name":"W1"}}',
      '',
      '{"op":"upsert","table":"Person","values":{"id":"w2","name":"W2"}}',
    ].join('\n');
    const r = await call(s, 'POST', '/branches/:id/ingest', '/branches/main/ingest', undefined, lines);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ branch: 'main', operations: 2, inserted: 2, generations: [{ seq: 1, rows: 2 }] });
    expect((await call(s, 'GET', '/tables/:table/rows/:key', '/tables/Person/rows/w2')).body.row.name).toBe('W2');
    const status = (await call(s, 'GET', '/branches/:id/wal', '/branches/main/wal')).body;
    expect(status.pendingGenerations).toBe(1);
    expect(status.shards[0]).toMatchObject({ watermark: 0, pendingGenerations: 1, pendingRows: { Person: 2 } });
    const cu = (await call(s, 'POST', '/branches/:id/catchup', '/branches/main/catchup', { maxGenerations: 8, pipeline: false })).body;
    expect(cu).toMatchObject({ outcome: 'caught_up', generations: 1, pendingAfter: 0 });
    const after = (await call(s, 'GET', '/branches/:id/wal', '/branches/main/wal')).body;
    expect(after).toMatchObject({ pendingGenerations: 0, catchUp: { running: false, last: { trigger: 'request', outcome: 'caught_up' } } });
    expect(after.shards[0].watermark).toBe(1);
    const bad = await call(
      s,
      'POST',
      '/branches/:id/ingest',
      '/branches/main/ingest',
      undefined,
      '{"table":"Person","values":{"id":"w3","name":"W3"}}\n{"table":"Person","values":{"id":"w4","age":-5}}\n',
    );
    expect(bad.body.error.code).toBe('constraint_violation');
    expect((await call(s, 'GET', '/tables/:table/rows/:key', '/tables/Person/rows/w3')).status).toBe(404);
    expect(
      (await call(s, 'POST', '/branches/:id/catchup', '/branches/main/catchup', { maxGenerations: -1 })).body.error.issues[0].path,
    ).toBe('body.maxGenerations');
    // GraphQL reaches the same handlers.
    const g = await gql(
      s.url,
      'mutation { ingest(branch: "main", ops: [{ op: "upsert", table: "Person", values: { id: "g1", name: "G" } }]) { operations generations { seq } } }',
    );
    expect(g.body.data?.ingest).toEqual({ operations: 1, generations: [{ seq: 2 }] });
    const st = await gql(s.url, '{ walStatus(branch: "main") { pendingGenerations shards { shard watermark pendingGenerations } } }');
    expect(st.body.data?.walStatus).toMatchObject({ pendingGenerations: 1 });
    const c = await gql(s.url, 'mutation { catchUp(branch: "main") { outcome generations pendingAfter } }');
    expect(c.body.data?.catchUp).toEqual({ outcome: 'caught_up', generations: 1, pendingAfter: 0 });
  });

  it('every error uses one envelope with a stable code, and bad input changes nothing', async () => {
    const store = s.store;
    await s.service.idle();
    const before = (await listAll(store, '')).map((o) => o.key);
    expect((await call(s, 'GET', '/branches/:id', '/branches/nope')).body.error.code).toBe('not_found');
    expect(
      (
        await call(s, 'POST', '/branches/:id/writes', '/branches/main/writes', {
          ops: [{ op: 'insert', table: 'Person', values: { id: 'x', age: 'old' } }],
        })
      ).body.error,
    ).toMatchObject({
      code: 'constraint_violation',
      issues: expect.arrayContaining([{ path: 'ops[0].values.age', message: 'age must be an integer within ±2^53' }]),
    });
    const bad = await fetch(`${s.url}/branches/main/writes`, { method: 'POST', body: '{nope' });
    expect([bad.status, ((await bad.json()) as { error: { code: string } }).error.code]).toEqual([400, 'invalid_input']);
    expect((await call(s, 'POST', '/branches/:id/merge', '/branches/main/merge', { width: 3 })).body.error.issues[0].path).toBe(
      'body.width',
    );
    expect((await call(s, 'DELETE', '/branches/:id', '/branches/main')).body.error.code).toBe('branch_protected');
    const unknown = await fetch(`${s.url}/nowhere`);
    expect(unknown.status).toBe(404);
    await s.service.idle();
    expect((await listAll(store, '')).map((o) => o.key)).toEqual(before);
  });

  it('refuses bodies over the limit with 413', async () => {
    const small = await testServer({ maxBodyBytes: 2048 });
    const res = await fetch(`${small.url}/branches/main/writes`, {
      method: 'POST',
      body: JSON.stringify({ ops: [{ op: 'insert', table: 'X', values: { v: 'x'.repeat(5000) } }] }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('payload_too_large');
    await small.close();
  });
});

describe('auth', () => {
  it('401 without a valid token, 403 without the role, on REST and GraphQL', async () => {
    const s = await testServer({ tokens: 'read:reader-token,write:writer-token,admin:admin-token' });
    const c = (token?: string) => new RestClient(s.url, token);
    await expect(c().listBranches({})).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(c('wrong-token').listBranches({})).rejects.toMatchObject({ code: 'unauthorized' });
    expect((await c('reader-token').listBranches({})).branches).toHaveLength(1);
    await expect(c('reader-token').createBranch({ name: 'x' })).rejects.toMatchObject({ code: 'forbidden' });
    await c('writer-token').createBranch({ name: 'x' });
    await expect(c('writer-token').applySchema({ branch: 'main', schema: PEOPLE_SCHEMA })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(c('writer-token').gc({})).rejects.toMatchObject({ code: 'forbidden' });
    await c('admin-token').applySchema({ branch: 'main', schema: PEOPLE_SCHEMA });
    expect((await gql(s.url, '{ branches { items { name } } }')).status).toBe(401);
    const denied = await gql(s.url, 'mutation { gc { dryRun } }', {}, 'writer-token');
    expect(denied.body.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
    await s.close();
  });
});

describe('the index page', () => {
  it('GET / links the review page, GraphiQL, the contract, /healthz and /metrics, without a token', async () => {
    const s = await testServer({ tokens: 'read:reader-token' });
    try {
      const r = await fetch(`${s.url}/`);
      expect([r.status, r.headers.get('content-type')]).toEqual([200, 'text/html; charset=UTF-8']);
      const html = await r.text();
      for (const path of ['/ui', '/graphql', '/openapi.yaml', '/healthz', '/metrics']) expect(html).toContain(`href="${path}"`);
    } finally {
      await s.close();
    }
  });
});

describe('hosted graphs', () => {
  it('a named graph is created, used over REST and GraphQL apart from the default graph, listed, and deleted with everything it stored', async () => {
    const s = await testServer({ store: `file://${await mkdtemp(path.join(tmpdir(), 'hosted-'))}` });
    const crm = new RestClient(`${s.url}/graphs/crm`);
    await expect(crm.listBranches({})).rejects.toMatchObject({ code: 'not_found' });
    expect((await call(s, 'POST', '/graphs', '/graphs', { name: 'crm' })).status).toBe(201);
    expect((await call(s, 'POST', '/graphs', '/graphs', { name: 'crm' })).body.error.code).toBe('graph_exists');
    expect((await call(s, 'POST', '/graphs', '/graphs', { name: 'Bad Name' })).body.error.code).toBe('invalid_input');
    await crm.applySchema({ branch: 'main', schema: PEOPLE_SCHEMA });
    await crm.write({ branch: 'main', ops: [{ op: 'insert', table: 'Person', values: { id: 'a', name: 'Ann' } }] });
    await crm.createBranch({ name: 'f' });
    await crm.write({ branch: 'f', ops: [{ op: 'insert', table: 'Person', values: { id: 'b', name: 'Bob' } }] });
    expect(await crm.mergeBranch({ source: 'f' })).toMatchObject({ status: 'success', outcome: 'fast_forward' });
    expect((await allRows(crm, 'Person', { branch: 'main' })).map((r) => r.key)).toEqual(['a', 'b']);
    const viaGraphql = await gql(`${s.url}/graphs/crm`, '{ branches { items { name } } }');
    expect(viaGraphql.body.data).toEqual({ branches: { items: [{ name: 'f' }, { name: 'main' }] } });
    // The default graph never sees the hosted one, and GC of it deletes nothing of it.
    expect((await call(s, 'GET', '/branches', '/branches')).body.branches.map((b: { name: string }) => b.name)).toEqual(['main']);
    expect((await call(s, 'POST', '/gc', '/gc', { graceSeconds: 0 })).body.keys).toEqual([]);
    expect((await call(s, 'GET', '/graphs', '/graphs')).body.graphs.map((g: { name: string }) => g.name)).toEqual(['crm']);
    expect((await call(s, 'DELETE', '/graphs/:name', '/graphs/crm')).body).toEqual({ deleted: 'crm' });
    await expect(crm.listBranches({})).rejects.toMatchObject({ code: 'not_found' });
    expect((await call(s, 'DELETE', '/graphs/:name', '/graphs/crm')).body.error.code).toBe('not_found');
    expect(await listAll(s.store, 'graphs/')).toEqual([]);
    // Created again, it starts empty.
    await call(s, 'POST', '/graphs', '/graphs', { name: 'crm' });
    expect((await crm.listBranches({})).branches.map((b) => b.name)).toEqual(['main']);
    await s.close();
  });

  it('routes of a hosted graph need the same tokens; creating and deleting graphs needs admin', async () => {
    const s = await testServer({ tokens: 'read:reader-token,write:writer-token,admin:admin-token' });
    await expect(new RestClient(s.url, 'writer-token').createGraph('g')).rejects.toMatchObject({ code: 'forbidden' });
    await new RestClient(s.url, 'admin-token').createGraph('g');
    await expect(new RestClient(`${s.url}/graphs/g`).listBranches({})).rejects.toMatchObject({ code: 'unauthorized' });
    await expect(new RestClient(`${s.url}/graphs/g`, 'reader-token').createBranch({ name: 'x' })).rejects.toMatchObject({
      code: 'forbidden',
    });
    expect((await new RestClient(`${s.url}/graphs/g`, 'reader-token').listBranches({})).branches).toHaveLength(1);
    expect((await fetch(`${s.url}/graphs/g/healthz`)).status).toBe(200);
    await expect(new RestClient(s.url, 'writer-token').deleteGraph('g')).rejects.toMatchObject({ code: 'forbidden' });
    await s.close();
  });
});

describe('GraphQL', () => {
  it('the running schema is exactly schema/branchgraph.graphql', () => {
    const file = printSchema(buildSchema(readFileSync('schema/branchgraph.graphql', 'utf8')));
    expect(printSchema(graphqlSchema())).toBe(file);
  });

  it('refuses queries deeper than the limit with a stable code', async () => {
    const s = await testServer();
    const deep = `{ branches { items { head { id } } } ${'{'.repeat(0)} }`;
    expect((await gql(s.url, deep)).body.errors).toBeUndefined();
    const tooDeep = `{ ${'a: branches { items { name } } '.repeat(60)}}`;
    const r = await gql(s.url, tooDeep);
    expect(r.body.errors?.[0]?.extensions?.code).toBe('invalid_input');
    await s.close();
  });
});
