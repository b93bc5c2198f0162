/**
 * The MCP server with the SDK's own client, over Streamable HTTP and over
 * stdio: the tools the table derives, an agent's round on its own branch
 * (write, preview the conflict, merge with a resolution under an
 * idempotency key, retry and get the same answer), refusals as tool errors
 * with their codes, tools filtered by the token's role, and a loopback
 * server refusing a foreign Host.
 */
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand } from '../src/service/package-root.js';
import { testServer, type TestServer } from './support/test-server.js';

type Answer = { isError?: boolean; structuredContent?: Record<string, unknown>; content: { type: string; text?: string }[] };

let s: TestServer;
const clients: Client[] = [];

async function httpClient(url: string, token?: string): Promise<Client> {
  const client = new Client({ name: 'test', version: '1.0.0' });
  const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  clients.push(client);
  return client;
}

const call = async (c: Client, name: string, args: Record<string, unknown>): Promise<Answer> =>
  (await c.callTool({ name, arguments: args })) as Answer;

/**
 * An agent's round: its own branch with a TTL, a write that conflicts with main, the preview, a
 * resolved merge and its retry; then time passes (`expire` moves it and sweeps) and the branch is gone.
 */
async function agentRound(c: Client, branch: string, expire: () => Promise<void>): Promise<void> {
  const created = await call(c, 'branch_create', { name: branch, ttlSeconds: 3600, labels: ['agent-round'] });
  expect(created.isError).toBeFalsy();
  expect(created.structuredContent).toMatchObject({ name: branch, labels: ['agent-round'], expiresAt: expect.any(String) });
  await call(c, 'write', { branch, ops: [{ op: 'upsert', table: 'P', values: { id: 'shared', v: 1 } }] });
  await call(c, 'write', { branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'shared', v: 2 } }] });

  const preview = await call(c, 'merge_preview', { source: branch });
  expect(preview.isError).toBeFalsy();
  expect(preview.structuredContent).toMatchObject({ status: 'conflicts', report: { total: 1 } });
  expect(preview.content[0]?.text).toMatch(/^conflicts: 1 .*Call merge with resolutions/);

  const ask = { source: branch, resolutions: { strategy: 'source-wins' }, idempotencyKey: `round-${branch}` };
  const merged = await call(c, 'merge', ask);
  expect(merged.structuredContent).toMatchObject({ status: 'success', outcome: 'merged' });
  const again = await call(c, 'merge', ask);
  expect(again.structuredContent).toMatchObject({ status: 'success', replayed: true });
  const commitOf = (a: Answer) => (a.structuredContent as { commit: { id: string } }).commit.id;
  expect(commitOf(again)).toBe(commitOf(merged));

  const row = await call(c, 'get_row', { table: 'P', key: 'shared' });
  expect(row.structuredContent).toMatchObject({ row: { id: 'shared', v: 1 } });

  // The typed GraphQL of the branch answers what was merged.
  const typed = await call(c, 'query', {
    branch: 'main',
    document: 'query($v: SafeInt) { queryP(where: { v: { gte: $v } }) { nodes { id v } } }',
    variables: { v: 1 },
  });
  expect(typed.structuredContent).toMatchObject({ data: { queryP: { nodes: [{ id: 'shared', v: 1 }] } } });
  const unknown = await call(c, 'query', { branch: 'no-such-branch', document: '{ queryP { nodes { id } } }' });
  expect(unknown.isError).toBe(true);
  expect(unknown.content[0]?.text).toMatch(/^not_found: /);

  const listed = async () =>
    ((await call(c, 'branch_list', { label: 'agent-round' })).structuredContent as { branches: { name: string }[] }).branches.map(
      (b) => b.name,
    );
  expect(await listed()).toContain(branch);
  await expire();
  expect(await listed()).not.toContain(branch);
}

/** The test server's clock: moved forward when a round watches its branch expire. */
let now = Date.now();

beforeAll(async () => {
  s = await testServer({ tokens: 'admin:root-token,read:reader-token', clock: () => now });
  const res = await fetch(`${s.url}/branches/main/schema`, {
    method: 'POST',
    headers: { authorization: 'Bearer root-token', 'content-type': 'application/json' },
    body: JSON.stringify({ schema: 'node P { id: string @key\n v: int? }' }),
  });
  expect(res.status, await res.text()).toBe(200);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await s.close();
});

describe('MCP over Streamable HTTP', () => {
  it('lists the tools derived from the operation table, with schemas and annotations', async () => {
    const c = await httpClient(`${s.url}/mcp`, 'root-token');
    const { tools } = await c.listTools();
    const names = tools.map((t) => t.name);
    for (const name of [
      'schema',
      'read_rows',
      'write',
      'branch_create',
      'branch_list',
      'branch_delete',
      'diff',
      'merge_preview',
      'merge',
      'log',
      'history',
      'merge_request_open',
      'merge_request_get',
      'remote_fetch',
      'remote_push',
    ])
      expect(names).toContain(name);
    const preview = tools.find((t) => t.name === 'merge_preview');
    expect(preview?.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true });
    // The preview fixes dryRun itself: the model never sees it.
    expect(Object.keys(preview?.inputSchema.properties ?? {})).not.toContain('dryRun');
    expect(tools.find((t) => t.name === 'branch_delete')?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(tools.every((t) => t.outputSchema?.type === 'object')).toBe(true);
  });

  it("runs an agent's round: branch, write, preview the conflict, merge with a resolution, retry", async () => {
    await agentRound(await httpClient(`${s.url}/mcp`, 'root-token'), 'agent/http', async () => {
      now += 2 * 3600_000;
      const swept = await fetch(`${s.url}/maintenance/expire-branches`, {
        method: 'POST',
        headers: { authorization: 'Bearer root-token' },
      });
      expect(await swept.json()).toMatchObject({ expired: ['agent/http'] });
    });
  });

  it("serves the docs a model needs and each branch's SDL as resources, and the schema with counts and SDL in one tool", async () => {
    const c = await httpClient(`${s.url}/mcp`, 'root-token');
    const { resources } = await c.listResources();
    const uris = resources.map((r) => r.uri);
    expect(uris).toEqual(
      expect.arrayContaining([
        'branchgraph://docs/schema-language',
        'branchgraph://docs/merge-semantics',
        'branchgraph://branches/main/schema.graphql',
      ]),
    );
    const { resourceTemplates } = await c.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['branchgraph://branches/{branch}/schema.graphql']);
    const doc = await c.readResource({ uri: 'branchgraph://docs/merge-semantics' });
    expect((doc.contents[0] as { text: string }).text).toMatch(/DivergentUpdate/);
    const sdl = await c.readResource({ uri: 'branchgraph://branches/main/schema.graphql' });
    expect((sdl.contents[0] as { text: string }).text).toMatch(/queryP/);
    await expect(c.readResource({ uri: 'branchgraph://branches/no-such/schema.graphql' })).rejects.toThrow(/not_found/);

    const schema = await call(c, 'schema', {});
    expect(schema.structuredContent).toMatchObject({
      text: expect.stringMatching(/node P/),
      tables: [expect.objectContaining({ name: 'P', kind: 'node', key: ['id'], storedRows: expect.any(Number) })],
      sdl: expect.stringMatching(/queryP/),
    });
  });

  it('answers a refusal as a tool error with its code and a hint', async () => {
    const c = await httpClient(`${s.url}/mcp`, 'root-token');
    const missing = await call(c, 'get_row', { table: 'P', key: 'nobody' });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]?.text).toMatch(/^not_found: /);
    const bad = await call(c, 'write', { branch: 'main', ops: [] });
    expect(bad.isError).toBe(true);
    expect(bad.content[0]?.text).toMatch(/^invalid_input: .*\nFix the arguments/s);
  });

  it('shows a read token only the tools it may call, and refuses a write as forbidden', async () => {
    const c = await httpClient(`${s.url}/mcp`, 'reader-token');
    const names = (await c.listTools()).tools.map((t) => t.name);
    expect(names).toContain('read_rows');
    expect(names).not.toContain('write');
    const refused = await call(c, 'write', { branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'x' } }] });
    expect(refused.isError).toBe(true);
    expect(refused.content[0]?.text).toMatch(/^forbidden: /);
    // Its typed GraphQL reads, and refuses a mutation field by field.
    expect(names).toContain('query');
    const mutation = await call(c, 'query', { branch: 'main', document: 'mutation { createP(input: { id: "x" }) { key } }' });
    expect((mutation.structuredContent as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe('forbidden');
    const after = await call(await httpClient(`${s.url}/mcp`, 'root-token'), 'get_row', { table: 'P', key: 'x' });
    expect(after.isError).toBe(true);
  });

  it('refuses a call without a token, and a foreign Host on a loopback server', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect((await fetch(`${s.url}/mcp`, { method: 'POST', headers, body })).status).toBe(401);
    const foreign = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, authorization: 'Bearer root-token', origin: 'http://evil.example' },
      body,
    });
    expect(foreign.status).toBe(403);
    // Stateless: nothing to stream, no session to end.
    expect((await fetch(`${s.url}/mcp`, { headers: { authorization: 'Bearer root-token' } })).status).toBe(405);
    expect(((await foreign.json()) as { error: { code: string } }).error.code).toBe('forbidden');
  });
});

describe('MCP with a client written elsewhere: the inspector CLI', () => {
  const inspector = path.join(
    path.dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')),
    'build',
    'index.js',
  );
  const run = async (args: string[]): Promise<unknown> => {
    // It finds its own package.json relative to the working directory: run it from beside its build.
    const argv = [inspector, `${s.url}/mcp`, '--header', 'Authorization: Bearer root-token', ...args];
    const { stdout } = await promisify(execFile)(process.execPath, argv, { cwd: path.dirname(inspector) });
    return JSON.parse(stdout) as unknown;
  };

  it('lists the tools and calls one over HTTP', async () => {
    const listed = (await run(['--method', 'tools/list'])) as { tools: { name: string }[] };
    expect(listed.tools.map((t) => t.name)).toContain('merge_preview');
    const called = (await run(['--method', 'tools/call', '--tool-name', 'branch_list'])) as Answer;
    expect(called.isError).toBeFalsy();
    expect((called.structuredContent as { branches: { name: string }[] }).branches.map((b) => b.name)).toContain('main');
  });
});

describe('MCP over stdio', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'bg-mcp-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it("runs an agent's round on an embedded store", async () => {
    // The store gets its schema first, as an operator would give it.
    const { embeddedApi } = await import('../src/service/api.js');
    const { openService } = await import('../src/service/open-service.js');
    const { loadConfig } = await import('../src/service/config.js');
    const service = await openService(loadConfig({}, { store: dir }));
    await embeddedApi(service, { transport: 'embedded' }).applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int? }' });
    await service.close();
    const cli = cliCommand();
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: cli.command, args: [...cli.args, 'mcp', '--store', dir], stderr: 'pipe' }));
    clients.push(client);
    await agentRound(client, 'agent/stdio', async () => {
      // Another process on the same store, two hours on, sweeps; the stdio server sees the branch gone.
      const { openGraphHost } = await import('../src/service/open-service.js');
      const later = await openGraphHost(loadConfig({}, { store: dir }), { clock: () => Date.now() + 2 * 3600_000 });
      expect((await later.root.expiry.sweep()).expired).toEqual(['agent/stdio']);
      await later.root.close();
    });
  });
});
