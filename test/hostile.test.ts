/**
 * Hostile and unlucky input at the HTTP edge: whatever a client sends, it
 * gets a clear error with a stable code, never internals, and nothing
 * stored changes.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { createApp } from '../src/http/app.js';
import { BranchgraphService } from '../src/service/service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { embeddedApi } from '../src/service/api.js';

async function app() {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const service = new BranchgraphService(await Graph.open(new MemoryStore()), {});
  return { service, logs, app: createApp({ service, logger: pino({ level: 'info' }, sink), tokens: new Map() }) };
}

const gql = (query: string, variables: Record<string, unknown> = {}) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ query, variables }),
});

describe('internal errors', () => {
  it('regression: an unexpected failure reaches REST and GraphQL clients as a generic message with the request id; the detail is only in the log', async () => {
    const { service, logs, app: a } = await app();
    service.graph.listBranches = async () => {
      throw new Error('secret detail: /var/lib/data at offset 42');
    };
    const rest = await a.request('/branches', { headers: { 'x-request-id': 'req-1' } });
    expect(rest.status).toBe(500);
    const body = (await rest.json()) as { error: { code: string; message: string; details?: unknown } };
    expect(body.error.code).toBe('internal');
    expect(body.error.message).toContain('req-1');
    expect(JSON.stringify(body)).not.toContain('secret');
    const g = await a.request('/graphql', {
      ...gql('{ branches { items { name } } }'),
      headers: { 'content-type': 'application/json', 'x-request-id': 'req-2' },
    });
    const gb = (await g.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(gb.errors[0]?.extensions.code).toBe('internal');
    expect(gb.errors[0]?.message).toContain('req-2');
    expect(JSON.stringify(gb)).not.toContain('secret');
    const logged = JSON.stringify(logs.filter((l) => l.msg === 'unexpected error'));
    expect(logged).toContain('secret detail');
    expect(logged).toContain('req-1');
    expect(logged).toContain('req-2');
  });
});

describe('GraphQL documents', () => {
  it('regression: a selection or an input literal nested thousands deep is a 400 invalid_input, not a 500', async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key\n v: json? }' });
    const deepSelection = `{ ${'branches { head { '.repeat(1500)}id${' } }'.repeat(1500)} }`;
    const deepLiteral = `mutation { write(branch: "main", input: { ops: [{ op: "insert", table: "T", values: { id: "t", v: ${'['.repeat(3000)}1${']'.repeat(3000)} } }] }) { inserted } }`;
    const deepVariables = gql('mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }', {
      i: { ops: [{ op: 'insert', table: 'T', values: { id: 't', v: JSON.parse(`${'['.repeat(3000)}1${']'.repeat(3000)}`) } }] },
    });
    for (const init of [gql(deepSelection), gql(deepLiteral), deepVariables]) {
      const r = await a.request('/graphql', init);
      // A document refused before execution is HTTP 400; a resolver's refusal is a GraphQL error in a 200.
      expect(r.status).toBe(init === deepVariables ? 200 : 400);
      const b = (await r.json()) as { errors: { extensions: { code: string } }[] };
      expect(b.errors[0]?.extensions.code).toBe('invalid_input');
    }
    // REST bodies with a value nested that deep are refused the same way, and nothing was written.
    const rest = await a.request('/branches/main/writes', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"ops":[{"op":"insert","table":"T","values":{"id":"t","v":${'['.repeat(3000)}1${']'.repeat(3000)}}}]}`,
    });
    expect(rest.status).toBe(400);
    expect((await embeddedApi(service, { transport: 'embedded' }).rows({ table: 'T', at: { branch: 'main' } })).items).toEqual([]);
  });
});

describe('page sizes given as variables', () => {
  it('regression: a page size variable holding an object whose toString is not a function is invalid_input, not a 500', async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key }' });
    const cases: [string, string][] = [
      ['/graphql', 'query($n: Int) { branches(limit: $n) { nextCursor } }'],
      ['/branches/main/graphql', 'query($n: Int) { queryT(first: $n) { nodes { id } } }'],
    ];
    for (const [path, query] of cases)
      for (const n of [{ toString: 'x' }, { valueOf: {} }, [{ toString: 1 }], '12']) {
        const r = await a.request(path, gql(query, { n }));
        expect(r.status).toBeLessThan(500);
        const b = (await r.json()) as { errors: { extensions: { code: string } }[] };
        expect(b.errors[0]?.extensions.code).toBe('invalid_input');
      }
  });
});

describe('names that collide with Object.prototype', () => {
  const NAMES = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf'];
  const post = (body: string): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('regression: are refused as type, property and shard names, and as keys in request values, with a clear 4xx; lookups by such names are not found', async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key\n v: json? }' });
    for (const n of NAMES) {
      for (const schema of [`node ${n} { id: string @key }`, `node T { id: string @key\n ${n}: int? }`]) {
        const r = await a.request('/branches/main/schema', post(JSON.stringify({ schema })));
        expect(r.status).toBe(400);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe('schema_invalid');
      }
      const scan = await a.request(`/tables/${encodeURIComponent(n)}/rows`);
      expect(scan.status).toBe(404);
      const where = await a.request(`/tables/T/rows?where=${encodeURIComponent(JSON.stringify({ [n]: 1 }))}`);
      expect(where.status).toBe(400);
      const write = await a.request('/branches/main/writes', post(`{"ops":[{"op":"insert","table":"T","values":{"id":"x","${n}":1}}]}`));
      expect([400, 422]).toContain(write.status);
      const nested = await a.request(
        '/branches/main/writes',
        post(`{"ops":[{"op":"insert","table":"T","values":{"id":"x","v":{"${n}":1}}}]}`),
      );
      if (n === '__proto__') expect(nested.status).toBe(400);
      else expect(nested.status).toBe(200);
      await embeddedApi(service, { transport: 'embedded' })
        .write({ branch: 'main', ops: [{ op: 'delete', table: 'T', values: { id: 'x' } }] })
        .catch(() => undefined);
    }
    // __proto__ in values is refused by name, not silently dropped.
    const r = await a.request(
      '/branches/main/writes',
      post('{"ops":[{"op":"insert","table":"T","values":{"id":"y","__proto__":{"v":1}}}]}'),
    );
    expect(((await r.json()) as { error: { issues: { path: string }[] } }).error.issues[0]?.path).toBe('body.ops[0].values.__proto__');
    const { validateShard } = await import('../src/pending/generation.js');
    for (const n of NAMES) expect(() => validateShard(n)).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});

describe('cursors and sizes', () => {
  it('regression: cursors are bounded and validated; AAAA, an edited or a forged cursor is invalid_input, never a full or empty page', async () => {
    const { app: a, service } = await app();
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: 'node T { id: string @key }' });
    const long = 'k'.repeat(1000);
    await embeddedApi(service, ctx).write({
      branch: 'main',
      ops: [
        { op: 'insert', table: 'T', values: { id: `${long}1` } },
        { op: 'insert', table: 'T', values: { id: `${long}2` } },
      ],
    });
    const first = (await (await a.request('/tables/T/rows?limit=1')).json()) as { items: { key: string }[]; nextCursor: string };
    expect(first.nextCursor.length).toBeLessThan(1500);
    const second = (await (await a.request(`/tables/T/rows?limit=1&cursor=${first.nextCursor}`)).json()) as { items: { key: string }[] };
    expect(second.items.map((i) => i.key)).toEqual([`${long}2`]);
    const edited = `${first.nextCursor.slice(0, 10)}${first.nextCursor[10] === 'A' ? 'B' : 'A'}${first.nextCursor.slice(11)}`;
    const forged = `c1.${Buffer.from('zzz').toString('base64url')}.000000000000`;
    for (const cursor of ['AAAA', '', edited, forged]) {
      const r = await a.request(`/tables/T/rows?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(r.status).toBe(400);
      expect(((await r.json()) as { error: { code: string } }).error.code).toBe('invalid_input');
    }
  });

  it('regression: a cursor made for one query is refused on another: another filter, table, diff or merge', async () => {
    const { app: a, service } = await app();
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({
      branch: 'main',
      schema: 'node T { id: string @key\n v: int? }\nnode U { id: string @key }',
    });
    await embeddedApi(service, ctx).write({
      branch: 'main',
      ops: ['a', 'b', 'c'].flatMap((id) => [
        { op: 'insert' as const, table: 'T', values: { id, v: 1 } },
        { op: 'insert' as const, table: 'U', values: { id } },
      ]),
    });
    await embeddedApi(service, ctx).createBranch({ name: 'f' });
    await embeddedApi(service, ctx).write({
      branch: 'f',
      ops: ['x', 'y'].map((id) => ({ op: 'insert' as const, table: 'T', values: { id } })),
    });
    const rows = ((await (await a.request('/tables/T/rows?limit=1')).json()) as { nextCursor: string }).nextCursor;
    const diff = ((await (await a.request('/diff?from=main&to=f&limit=1')).json()) as { nextCursor: string }).nextCursor;
    const where = encodeURIComponent(JSON.stringify({ v: { op: 'eq', value: 1 } }));
    const refused = [
      `/tables/T/rows?limit=1&where=${where}&cursor=${encodeURIComponent(rows)}`,
      `/tables/U/rows?limit=1&cursor=${encodeURIComponent(rows)}`,
      `/diff?from=main&to=f&limit=1&cursor=${encodeURIComponent(rows)}`,
      `/diff?from=main&to=f&mode=three-dot&limit=1&cursor=${encodeURIComponent(diff)}`,
      `/tables/T/rows?limit=1&cursor=${encodeURIComponent(diff)}`,
    ];
    for (const path of refused) {
      const r = await a.request(path);
      expect([path, r.status, ((await r.json()) as { error?: { code: string } }).error?.code]).toEqual([path, 400, 'invalid_input']);
    }
    // The same query takes it.
    expect((await a.request(`/diff?from=main&to=f&limit=1&cursor=${encodeURIComponent(diff)}`)).status).toBe(200);
  });

  it('regression: edges by an edge table that does not exist, or that is a node table, are refused, never an empty list', async () => {
    const { app: a, service } = await app();
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: 'node P { id: string @key }\nedge K: P -> P {}' });
    await embeddedApi(service, ctx).write({
      branch: 'main',
      ops: [
        { op: 'insert', table: 'P', values: { id: 'p' } },
        { op: 'insert', table: 'K', values: { from: 'p', to: 'p' } },
      ],
    });
    expect((await a.request('/tables/P/rows/p/edges?edgeTable=K')).status).toBe(200);
    for (const [q, status, code] of [
      ['edgeTable=..%2Fx', 404, 'not_found'],
      ['edgeTable=P', 400, 'invalid_input'],
    ] as const) {
      const r = await a.request(`/tables/P/rows/p/edges?${q}`);
      expect([q, r.status, ((await r.json()) as { error: { code: string } }).error.code]).toEqual([q, status, code]);
    }
    const e = await a.request('/tables/K/rows/p/edges');
    expect(e.status).toBe(404);
  });

  it('regression: keys over 1 KiB and rows over 1 MiB are refused with invalid_input, and manifests stay small', async () => {
    const { service } = await app();
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: 'node T { id: string @key\n v: string? }' });
    await expect(
      embeddedApi(service, ctx).write({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: 'k'.repeat(4 * 1024 * 1024) } }] }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(
      embeddedApi(service, ctx).write({
        branch: 'main',
        ops: [{ op: 'insert', table: 'T', values: { id: 'k', v: 'v'.repeat(2 * 1024 * 1024) } }],
      }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(
      embeddedApi(service, ctx).ingest({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: 'é'.repeat(600) } }] }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
    await embeddedApi(service, ctx).write({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: 'k'.repeat(1024) } }] });
    const head = await service.graph.branchHead('main');
    expect(JSON.stringify(head.manifest).length).toBeLessThan(8192);
  });
});

describe('identity', () => {
  it('regression: the commit actor is the token identity; a client-given author is recorded beside it, never in its place', async () => {
    const { Graph: G } = await import('../src/graph/graph.js');
    const { parseTokens } = await import('../src/service/auth.js');
    const service = new BranchgraphService(await G.open(new MemoryStore(), { actor: 'server' }), {});
    const { tokens } = parseTokens('admin:admin-secret-1:alice,write:writer-secret-1');
    const a = createApp({ service, logger: pino({ level: 'silent' }), tokens });
    const auth = (t: string) => ({ authorization: `Bearer ${t}`, 'content-type': 'application/json' });
    expect(
      (
        await a.request('/branches/main/schema', {
          method: 'POST',
          headers: auth('admin-secret-1'),
          body: JSON.stringify({ schema: 'node T { id: string @key }' }),
        })
      ).status,
    ).toBe(200);
    const w = await a.request('/branches/main/writes', {
      method: 'POST',
      headers: auth('writer-secret-1'),
      body: JSON.stringify({ ops: [{ op: 'insert', table: 'T', values: { id: 'x' } }], author: 'the-ceo' }),
    });
    const commit = ((await w.json()) as { commit: { actor: string; author: string } }).commit;
    expect(commit.actor).toMatch(/^write-[0-9a-f]{8}$/);
    expect(commit.actor).not.toContain('writer-secret');
    expect(commit.author).toBe('the-ceo');
    const log = (await (await a.request('/commits?at=main', { headers: auth('writer-secret-1') })).json()) as {
      commits: { actor: string; author: string; kind: string }[];
    };
    expect(log.commits.map((c) => [c.kind, c.actor, c.author])).toEqual([
      ['write', commit.actor, 'the-ceo'],
      ['schema', 'alice', 'alice'],
      ['init', 'server', 'server'],
    ]);
    const g = await a.request('/graphql', {
      method: 'POST',
      headers: auth('admin-secret-1'),
      body: JSON.stringify({
        query:
          'mutation { write(branch: "main", input: { ops: [{ op: "insert", table: "T", values: { id: "y" } }], author: "mallory" }) { commit { actor author } } }',
      }),
    });
    expect(((await g.json()) as { data: { write: { commit: unknown } } }).data.write.commit).toEqual({ actor: 'alice', author: 'mallory' });
  });
});

describe('GraphQL cost', () => {
  it('regression: fifty aliased pages of 1,000 rows are refused before they run; one page of 1,000 is fine', async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key }' });
    const many = `{ ${Array.from({ length: 50 }, (_, i) => `a${i}: rows(table: "T", limit: 1000) { items { key } }`).join(' ')} }`;
    const viaVariable = gql(
      `query($n: Int) { ${Array.from({ length: 8 }, (_, i) => `v${i}: rows(table: "T", limit: $n) { items { key row } }`).join(' ')} }`,
      { n: 1000 },
    );
    for (const init of [gql(many), viaVariable]) {
      const b = (await (await a.request('/graphql', init)).json()) as {
        data?: unknown;
        errors: { message: string; extensions: { code: string } }[];
      };
      expect(b.errors[0]?.extensions.code).toBe('invalid_input');
      expect(b.errors[0]?.message).toContain('costs more than');
      expect(b.data ?? null).toBeNull();
    }
    const one = (await (await a.request('/graphql', gql('{ rows(table: "T", limit: 1000) { items { key row } nextCursor } }'))).json()) as {
      errors?: unknown;
    };
    expect(one.errors).toBeUndefined();
  });
});

describe('GraphQL variables before coercion', () => {
  const answer = async (a: Awaited<ReturnType<typeof app>>['app'], path: string, body: ReturnType<typeof gql>) => {
    const res = await a.request(path, body);
    return {
      status: res.status,
      body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions: { code: string } }[] },
    };
  };

  it("regression: a page size from a variable's default counts as the default, not as 100, on both endpoints", async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key }' });
    const cases: [string, string][] = [
      [
        '/graphql',
        `query($n: Int = 1000) { ${Array.from({ length: 50 }, (_, i) => `a${i}: rows(table: "T", limit: $n) { items { key } }`).join(' ')} }`,
      ],
      [
        '/branches/main/graphql',
        `query($n: Int = 1000) { ${Array.from({ length: 50 }, (_, i) => `a${i}: queryT(first: $n) { nodes { id } }`).join(' ')} }`,
      ],
    ];
    for (const [path, query] of cases) {
      const r = await answer(a, path, gql(query));
      expect({ path, code: r.body.errors?.[0]?.extensions.code, data: r.body.data ?? null }).toEqual({
        path,
        code: 'invalid_input',
        data: null,
      });
      expect(r.body.errors?.[0]?.message).toContain('costs more than');
    }
  });

  it('regression: a typed where variable nested 3,000 levels deep is a typed 400-class refusal, not a stack overflow', async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key }' });
    let w: Record<string, unknown> = { id: { eq: 'x' } };
    for (let i = 0; i < 3000; i++) w = { _not: w };
    const deepJson: unknown[] = [];
    let at = deepJson;
    for (let i = 0; i < 3000; i++) at = at[0] = [] as unknown[];
    const cases: [string, string, Record<string, unknown>][] = [
      ['/branches/main/graphql', 'query($w: TWhere) { queryT(where: $w) { nodes { id } } }', { w }],
      ['/graphql', 'query($v: JSON) { rows(table: "T", where: $v) { items { key } } }', { v: deepJson }],
    ];
    for (const [path, query, variables] of cases) {
      const r = await answer(a, path, gql(query, variables));
      expect({ path, status: r.status < 500, code: r.body.errors?.[0]?.extensions.code }).toEqual({
        path,
        status: true,
        code: 'invalid_input',
      });
    }
  });
});

describe('slow and vanishing clients', () => {
  const rawRequest = async (url: string, head: string): Promise<import('node:net').Socket> => {
    const { connect } = await import('node:net');
    const u = new URL(url);
    const sock = connect(Number(u.port), u.hostname);
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.on('error', () => undefined);
    sock.write(head);
    return sock;
  };

  it('regression: a stopping server waits for a trickling body only until its drain deadline, then closes it', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer({ drainTimeoutMs: 300 });
    const sock = await rawRequest(
      s.url,
      'POST /branches/main/load HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\ncontent-length: 100000\r\n\r\n{"op":',
    );
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await s.close();
    // Well under a tenth of the test's timeout, however slowly the client sends.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(s.logs.some((l) => l.msg === 'drain deadline passed: closing the connections still open')).toBe(true);
    expect(s.logs.some((l) => l.msg === 'unexpected error')).toBe(false);
    sock.destroy();
  });

  it('regression: a stopping server closes connections with nothing in flight at once, and a busy one when its response ends', async () => {
    const { testServer } = await import('./support/test-server.js');
    // An hour's deadline: the close below returns only if the idle connections are closed without it.
    const s = await testServer({ drainTimeoutMs: 3_600_000, latencyMs: 200 });
    const closed = (sock: import('node:net').Socket) => new Promise<void>((r) => sock.once('close', () => r()));
    // A spare connection that never sends a request (HTTP clients open them), and one kept alive after its response.
    const spare = await rawRequest(s.url, '');
    const keptAlive = await rawRequest(s.url, 'GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await new Promise<void>((r) => keptAlive.once('data', () => r()));
    // A request being served when the drain starts: its headers asked to continue, so the server's
    // answer says it took the request, and its body (a schema, several 200 ms store calls) follows.
    const body = '{"schema":"node P { id: string @key }"}';
    const busy = await rawRequest(
      s.url,
      `POST /branches/main/schema HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\nexpect: 100-continue\r\ncontent-length: ${body.length}\r\n\r\n`,
    );
    let answer = '';
    const continued = new Promise<void>((r) =>
      busy.on('data', (d: Buffer) => {
        answer += d.toString();
        if (answer.includes('100 Continue')) r();
      }),
    );
    await continued;
    busy.write(body);
    await Promise.all([s.close(), closed(spare), closed(keptAlive), closed(busy)]);
    expect(answer).toMatch(/HTTP\/1\.1 200 OK/);
    expect(s.logs.some((l) => l.msg === 'drain deadline passed: closing the connections still open')).toBe(false);
  });

  it('regression: a client that aborts a chunked body is logged as aborted, not as an unexpected 500', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer();
    try {
      const sock = await rawRequest(
        s.url,
        'POST /branches/main/load HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{"op"\r\n',
      );
      await new Promise((r) => setTimeout(r, 100));
      sock.destroy();
      for (let i = 0; i < 50 && !s.logs.some((l) => l.msg === 'request'); i++) await new Promise((r) => setTimeout(r, 20));
      const line = s.logs.find((l) => l.msg === 'request');
      expect(line?.status).not.toBe(500);
      expect(s.logs.some((l) => l.msg === 'unexpected error')).toBe(false);
    } finally {
      await s.close();
    }
  });
});

describe('request bodies', () => {
  const rawRequest = async (url: string, head: string) => {
    const { connect } = await import('node:net');
    const u = new URL(url);
    const sock = connect(Number(u.port), u.hostname);
    await new Promise<void>((r) => sock.once('connect', () => r()));
    sock.on('error', () => undefined);
    let got = '';
    sock.on('data', (d: Buffer) => (got += d.toString()));
    sock.write(head);
    return { sock, response: () => got };
  };
  const waitFor = async (ok: () => boolean) => {
    for (let i = 0; i < 100 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  };

  it('regression: an unauthenticated request is refused before its body is read, whatever size it declares or streams', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer({ tokens: 'write:writer-secret-1' });
    try {
      const declared = await rawRequest(
        s.url,
        'POST /branches/main/writes HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 15728640\r\n\r\n{"ops":',
      );
      const chunked = await rawRequest(
        s.url,
        'POST /branches/main/load HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n4\r\n{"op\r\n',
      );
      await waitFor(() => declared.response().includes('\r\n\r\n') && chunked.response().includes('\r\n\r\n'));
      for (const r of [declared, chunked]) {
        expect(r.response()).toMatch(/^HTTP\/1\.1 401/);
        r.sock.destroy();
      }
    } finally {
      await s.close();
    }
  });

  it('bodies in flight share one memory budget: beyond it a request is 503 overloaded (retryable), and the budget frees up after', async () => {
    const { BodyBudget, readBodyText } = await import('../src/http/request-body.js');
    const budget = new BodyBudget(10);
    const body = (text: string) => new Request('http://x/', { method: 'POST', body: text });
    const held = await readBodyText(body('123456'), 100, budget);
    await expect(readBodyText(body('123456'), 100, budget)).rejects.toMatchObject({ code: 'overloaded', retryable: true });
    expect(budget.inUse).toBe(6);
    held.release();
    expect(budget.inUse).toBe(0);
    expect((await readBodyText(body('123456'), 100, budget)).text).toBe('123456');
    await expect(readBodyText(body('x'.repeat(101)), 100, new BodyBudget(1000))).rejects.toMatchObject({ code: 'payload_too_large' });
  });

  it('a chunked ingest body that stalls is sealed while it waits, so its rows are acknowledged and visible before the body ends', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer({ sealAfterMs: 50 });
    try {
      await fetch(`${s.url}/branches/main/schema`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ schema: 'node T { id: string @key }' }),
      });
      const line = '{"op":"upsert","table":"T","values":{"id":"a"}}\n';
      const r = await rawRequest(
        s.url,
        `POST /branches/main/ingest HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-ndjson\r\ntransfer-encoding: chunked\r\n\r\n${line.length.toString(16)}\r\n${line}\r\n`,
      );
      let pending = 0;
      for (let i = 0; i < 100 && pending === 0; i++) {
        await new Promise((res) => setTimeout(res, 20));
        pending = ((await (await fetch(`${s.url}/branches/main/wal`)).json()) as { pendingGenerations: number }).pendingGenerations;
      }
      expect(pending).toBe(1);
      expect(r.response()).toBe('');
      r.sock.write('0\r\n\r\n');
      await waitFor(() => r.response().includes('\r\n\r\n'));
      expect(r.response()).toMatch(/^HTTP\/1\.1 200/);
      r.sock.destroy();
    } finally {
      await s.close();
    }
  });
});

describe('streaming parsers', () => {
  /** A body of `head` then one line of `lineBytes` bytes, made as it is read; `pulled` counts what the server asked for. */
  function hostileBody(head: string, lineBytes: number): { body: ReadableStream<Uint8Array>; pulled: () => number } {
    const chunk = new TextEncoder().encode('x'.repeat(64 * 1024));
    let sent = 0;
    let pulled = 0;
    const first = new TextEncoder().encode(`${head}{"op":"upsert","table":"T","values":{"id":"`);
    return {
      pulled: () => pulled,
      body: new ReadableStream<Uint8Array>({
        pull(ctl) {
          const next = sent === 0 ? first : sent < lineBytes ? chunk : undefined;
          if (next === undefined) return ctl.close();
          sent += next.length;
          pulled += next.length;
          ctl.enqueue(next);
        },
      }),
    };
  }

  it('regression: a 150 MB NDJSON line is refused at once as 413 naming its line, without reading the rest, while /healthz answers', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer();
    try {
      await fetch(`${s.url}/branches/main/schema`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ schema: 'node T { id: string @key }' }),
      });
      const ok = '{"op":"upsert","table":"T","values":{"id":"a"}}\n{"op":"upsert","table":"T","values":{"id":"b"}}\n';
      const { body, pulled } = hostileBody(ok, 150 * 1024 * 1024);
      const health: number[] = [];
      let done = false;
      const probe = (async () => {
        while (!done) {
          const t = performance.now();
          expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
          health.push(performance.now() - t);
        }
      })();
      const r = await fetch(`${s.url}/branches/main/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body,
        duplex: 'half',
      } as RequestInit);
      done = true;
      await probe;
      const e = (await r.json()) as { error: { code: string; message: string; details: { line: number; limit: number } } };
      expect([r.status, e.error.code, e.error.details.line]).toEqual([413, 'payload_too_large', 3]);
      expect(e.error.message).toContain('NDJSON line 3');
      // The server stopped asking for the body a little past the line limit (1 MiB and a bit).
      expect(pulled()).toBeLessThan(8 * 1024 * 1024);
      expect(health.length).toBeGreaterThan(0);
    } finally {
      await s.close();
    }
  });

  it('an ingest body over the configured byte limit is refused with 413 naming where it stopped; a load line over the limit too', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer({ maxIngestBytes: 4096 });
    try {
      await fetch(`${s.url}/branches/main/schema`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ schema: 'node T { id: string @key }' }),
      });
      const lines = Array.from({ length: 200 }, (_, i) => JSON.stringify({ op: 'upsert', table: 'T', values: { id: `k${i}` } })).join('\n');
      const r = await fetch(`${s.url}/branches/main/ingest`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: lines,
      });
      const e = (await r.json()) as { error: { code: string; details: { limit: number } } };
      expect([r.status, e.error.code, e.error.details.limit]).toEqual([413, 'payload_too_large', 4096]);
      const long = `${JSON.stringify({ table: 'T', values: { id: 'a' } })}\n${JSON.stringify({ table: 'T', values: { id: 'x'.repeat(1_200_000) } })}\n`;
      const l = await fetch(`${s.url}/branches/main/load`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: long,
      });
      const le = (await l.json()) as { error: { code: string; details: { line: number } } };
      expect([l.status, le.error.code, le.error.details.line]).toEqual([413, 'payload_too_large', 2]);
    } finally {
      await s.close();
    }
  });
});

describe('deep nesting', () => {
  const DEPTH = 100_000;
  const deepText = `${'['.repeat(DEPTH)}1${']'.repeat(DEPTH)}`;
  const deep = (): unknown => JSON.parse(deepText);

  it('regression: a value nested 100,000 levels deep is a typed invalid_input on every REST and GraphQL path, and changes nothing', async () => {
    const { app: a, service } = await app();
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node T { id: string @key\n v: json? }' });
    await embeddedApi(service, { transport: 'embedded' }).createBranch({ name: 'side' });
    const head = (await embeddedApi(service, { transport: 'embedded' }).getBranch({ name: 'main' })).head.id;
    const json = { 'content-type': 'application/json' };
    const nd = { 'content-type': 'application/x-ndjson' };
    const line = `{"op":"insert","table":"T","values":{"id":"t","v":${deepText}}}\n`;
    const gqlBody = JSON.stringify({
      query: 'mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }',
      variables: { i: { ops: [{ op: 'insert', table: 'T', values: { id: 't', v: 0 } }] } },
    }).replace('"v":0', `"v":${deepText}`);
    const requests: [string, string, Record<string, string>, string][] = [
      ['write', '/branches/main/writes', json, `{"ops":[{"op":"insert","table":"T","values":{"id":"t","v":${deepText}}}]}`],
      ['ingest', '/branches/main/ingest', nd, line],
      ['load', '/branches/main/load', nd, line],
      [
        'merge resolutions',
        '/branches/side/merge',
        json,
        `{"resolutions":{"conflicts":[{"table":"T","key":"t","property":"v","take":"value","value":${deepText}}]}}`,
      ],
      [
        'schema defaults',
        '/branches/main/schema',
        json,
        `{"schema":"node T { id: string @key\\n v: json?\\n w: json }","migration":{"defaults":{"T.w":${deepText}}}}`,
      ],
      ['filter', `/tables/T/rows?where=${encodeURIComponent(deepText)}`, json, ''],
    ];
    for (const [what, path, headers, body] of requests) {
      const r = await a.request(path, body === '' ? { headers } : { method: 'POST', headers, body });
      const e = (await r.json()) as { error?: { code: string } };
      expect([what, r.status, e.error?.code]).toEqual([what, 400, 'invalid_input']);
    }
    const g = await a.request('/graphql', { method: 'POST', headers: json, body: gqlBody });
    const ge = (await g.json()) as { errors: { extensions: { code: string } }[] };
    expect(ge.errors[0]?.extensions.code).toBe('invalid_input');
    expect((await embeddedApi(service, { transport: 'embedded' }).getBranch({ name: 'main' })).head.id).toBe(head);
  });

  it('regression: the same through the embedded service, which no HTTP layer validated first', async () => {
    const { service } = await app();
    const ctx = { transport: 'embedded' as const };
    await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: 'node T { id: string @key\n v: json? }' });
    await embeddedApi(service, ctx).createBranch({ name: 'side' });
    const values = { id: 't', v: deep() };
    const calls: [string, () => Promise<unknown>][] = [
      ['write', () => embeddedApi(service, ctx).write({ branch: 'main', ops: [{ op: 'insert', table: 'T', values }] })],
      ['ingest', () => embeddedApi(service, ctx).ingest({ branch: 'main', ops: [{ op: 'insert', table: 'T', values }] })],
      [
        'merge',
        () =>
          embeddedApi(service, ctx).mergeBranch({
            source: 'side',
            resolutions: { conflicts: [{ table: 'T', key: 't', property: 'v', take: 'value', value: deep() }] },
          }),
      ],
      [
        'keyed merge',
        () =>
          embeddedApi(service, ctx).mergeBranch({
            source: 'side',
            idempotencyKey: 'k1',
            resolutions: { conflicts: [{ table: 'T', key: 't', property: 'v', take: 'value', value: deep() }] },
          }),
      ],
      [
        'schema',
        () =>
          embeddedApi(service, ctx).applySchema({
            branch: 'main',
            schema: 'node T { id: string @key\n v: json?\n w: json }',
            migration: { defaults: { 'T.w': deep() as never } },
          }),
      ],
    ];
    for (const [what, call] of calls) await expect(call(), what).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
