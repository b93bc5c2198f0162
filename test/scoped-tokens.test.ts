/**
 * Tokens scoped to branches and graphs, on every path: an agent's token
 * that writes only `agent/alice/*` and reads only `main` besides, against a
 * branch it must never see (`team/secret`), a commit only that branch holds,
 * and a tag on that commit. Each path is asked once outside the scope and
 * once inside it: outside, the answer is `forbidden` (403) naming the scope,
 * with no row of the secret branch in it, and nothing stored changes;
 * listings and feeds leave the secret out rather than refusing whole.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { listAll } from '../src/store/object-store.js';
import { OPERATION_LIST } from '../src/service/operation-table.js';
import { inputFields } from '../src/service/input-fields.js';
import { gql, testServer, type TestServer } from './support/test-server.js';
import { RestClient } from '../src/http/rest-client.js';

const ADMIN = 'root-token-1';
const SECRET_ROW = 'classified-value';
let s: TestServer;
let alice: string;
let aliceId: string;
/** A commit only `team/secret` holds. */
let secretCommit: string;

type Answer = { status: number; body: Record<string, unknown> };

async function rest(method: string, path: string, a: { token?: string; body?: unknown } = {}): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: {
      ...(a.token !== undefined ? { authorization: `Bearer ${a.token}` } : {}),
      ...(a.body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(a.body !== undefined ? { body: JSON.stringify(a.body) } : {}),
  });
  const text = await res.text();
  // Whatever a refusal says, it never carries a row of the secret branch.
  if (res.status === 403) expect(text).not.toContain(SECRET_ROW);
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}

const asAlice = (method: string, path: string, body?: unknown) =>
  rest(method, path, { token: alice, ...(body !== undefined ? { body } : {}) });
const asAdmin = (method: string, path: string, body?: unknown) =>
  rest(method, path, { token: ADMIN, ...(body !== undefined ? { body } : {}) });

/** A refusal by scope: 403, `forbidden`, and the scope named. */
function refused(a: Answer): void {
  expect(a.status, JSON.stringify(a.body)).toBe(403);
  const error = a.body.error as { code: string; message: string };
  expect(error.code).toBe('forbidden');
  expect(error.message).toMatch(/scope/);
}

const upsert = (id: string, v: string) => ({ ops: [{ op: 'upsert', table: 'P', values: { id, v } }] });
const enc = encodeURIComponent;

/** Every key and its bytes: a refused call must leave this exactly as it was. */
async function storeState(): Promise<string> {
  const objects = await listAll(s.store, '');
  const parts = await Promise.all(
    objects
      .filter((o) => !o.key.startsWith('events/'))
      .map(async (o) => `${o.key}:${Buffer.from(await s.store.get(o.key)).toString('base64')}`),
  );
  return parts.sort().join('\n');
}

/** The keys whose bytes differ between two `storeState`s (or that only one holds). */
function changedKeys(before: string, after: string): string[] {
  const [b, a] = [new Set(before.split('\n')), new Set(after.split('\n'))];
  const keyOf = (line: string) => line.slice(0, line.lastIndexOf(':'));
  return [...new Set([...[...b].filter((x) => !a.has(x)), ...[...a].filter((x) => !b.has(x))].map(keyOf))].sort();
}

/** The input fields that name a branch or a ref. */
const BRANCH_FIELDS = new Set(['branch', 'name', 'source', 'into', 'target', 'at', 'from', 'to', 'commit']);

beforeAll(async () => {
  s = await testServer({ tokens: `admin:${ADMIN}` });
  expect((await asAdmin('POST', '/branches/main/schema', { schema: 'node P { id: string @key\n v: string? }' })).status).toBe(200);
  await asAdmin('POST', '/branches/main/writes', upsert('m1', 'on main'));
  expect((await asAdmin('POST', '/branches', { name: 'team/secret' })).status).toBe(201);
  const w = await asAdmin('POST', `/branches/${enc('team/secret')}/writes`, upsert('s1', SECRET_ROW));
  secretCommit = (w.body.commit as { id: string }).id;
  expect((await asAdmin('POST', '/tags', { name: 'secret-tag', from: `commit:${secretCommit}` })).status).toBe(201);
  expect((await asAdmin('POST', '/tags', { name: 'main-tag', from: 'main' })).status).toBe(201);
  const created = await asAdmin('POST', '/tokens', {
    name: 'alice',
    role: 'write',
    read: ['main'],
    write: ['agent/alice/*'],
    graphs: ['default'],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  alice = created.body.token as string;
  aliceId = (created.body.record as { id: string }).id;
  expect((await asAlice('POST', '/branches', { name: 'agent/alice/t1' })).status).toBe(201);
  await asAlice('POST', `/branches/${enc('agent/alice/t1')}/writes`, upsert('a1', 'by alice'));
});
afterAll(() => s.close());

describe('managed tokens', () => {
  it('are kept hashed: the store holds no secret, and the listing shows none', async () => {
    // The secret is what follows the id; base64url may itself hold an underscore.
    const secret = alice.split('_').slice(2).join('_');
    for (const o of await listAll(s.store, 'tokens/')) expect(Buffer.from(await s.store.get(o.key)).toString('utf8')).not.toContain(secret);
    const listed = await asAdmin('GET', '/tokens');
    expect(JSON.stringify(listed.body)).not.toContain(secret);
    expect(listed.body.tokens).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: aliceId, name: 'alice', write: ['agent/alice/*'], read: ['main'] })]),
    );
  });

  it('cannot be made or listed by a scoped token, so no token mints one wider than itself', async () => {
    const admin = (await asAdmin('POST', '/tokens', { name: 'team-admin', role: 'admin', write: ['team/*'] })).body.token as string;
    refused(await rest('POST', '/tokens', { token: admin, body: { name: 'mallory', role: 'admin' } }));
    refused(await rest('GET', '/tokens', { token: admin }));
    expect((await asAlice('GET', '/tokens')).status).toBe(403);
  });

  it('stop working on the next request once revoked, and are refused once expired', async () => {
    const made = await asAdmin('POST', '/tokens', { name: 'brief', role: 'read' });
    const token = made.body.token as string;
    expect((await rest('GET', '/branches', { token })).status).toBe(200);
    expect((await asAdmin('DELETE', `/tokens/${(made.body.record as { id: string }).id}`)).status).toBe(200);
    expect((await rest('GET', '/branches', { token })).status).toBe(401);
    // A token of the right shape that was never made, or whose secret is wrong, is as unknown.
    expect((await rest('GET', '/branches', { token: `${alice.slice(0, -4)}AAAA` })).status).toBe(401);
    const past = await asAdmin('POST', '/tokens', { name: 'late', role: 'read', expiresAt: '2000-01-01T00:00:00Z' });
    expect(past.status).toBe(400);
  });

  it('record their name as the actor of the commits they make', async () => {
    const log = await asAlice('GET', `/commits?at=${enc('agent/alice/t1')}&limit=1`);
    expect((log.body.commits as { author: string }[])[0]?.author).toBe('alice');
  });
});

describe('every path honours the scope', () => {
  it('REST reads: rows, one row, lookups, queries, neighbours and the schema', async () => {
    refused(await asAlice('GET', `/tables/P/rows?at=${enc('team/secret')}`));
    refused(await asAlice('GET', `/tables/P/rows/s1?at=${enc('team/secret')}`));
    refused(await asAlice('POST', '/tables/P/lookup', { at: 'team/secret', keys: ['s1'] }));
    refused(await asAlice('POST', '/tables/P/query', { at: 'team/secret' }));
    refused(await asAlice('GET', `/schema?at=${enc('team/secret')}`));
    refused(await asAlice('GET', `/tables?at=${enc('team/secret')}`));
    // A path from the branch is the branch's history: refused by its name, before anything resolves.
    refused(await asAlice('GET', `/tables/P/rows?at=${enc('team/secret~1')}`));
    refused(await asAlice('GET', `/tables/P/rows?at=${enc('team/secret@{2030-01-01T00:00:00Z}')}`));
    // A branch that does not exist is refused the same way: a refusal never says what exists.
    refused(await asAlice('GET', `/tables/P/rows?at=${enc('team/nothing')}`));
    expect((await asAlice('GET', '/tables/P/rows?at=main')).status).toBe(200);
    expect((await asAlice('GET', `/tables/P/rows/a1?at=${enc('agent/alice/t1')}`)).status).toBe(200);
  });

  it('commit ids and tags that only an unreadable branch holds', async () => {
    refused(await asAlice('GET', `/commits/${secretCommit}`));
    refused(await asAlice('GET', `/tables/P/rows?at=${enc(`commit:${secretCommit}`)}`));
    refused(await asAlice('GET', `/tables/P/rows?at=${secretCommit}`));
    refused(await asAlice('GET', `/tables/P/rows?at=${enc(`commit:${secretCommit.slice(0, 12)}`)}`));
    refused(await asAlice('GET', '/tags/secret-tag'));
    refused(await asAlice('GET', `/tables/P/rows?at=${enc('tag:secret-tag')}`));
    // A commit main holds is open to it, however it is named.
    const mainHead = ((await asAdmin('GET', '/branches/main')).body.head as { id: string }).id;
    expect((await asAlice('GET', `/commits/${mainHead}`)).status).toBe(200);
    expect((await asAlice('GET', '/tags/main-tag')).status).toBe(200);
    expect((await asAlice('GET', `/tables/P/rows?at=${enc('tag:main-tag')}`)).status).toBe(200);
  });

  it('writes, schema changes, loads, ingest, catch-up and compaction', async () => {
    const before = await storeState();
    refused(await asAlice('POST', `/branches/${enc('team/secret')}/writes`, upsert('x', 'y')));
    refused(await asAlice('POST', '/branches/main/writes', upsert('x', 'y')));
    refused(await asAlice('POST', `/branches/${enc('team/secret')}/catchup`, {}));
    refused(await asAlice('POST', `/branches/${enc('team/secret')}/compact`, {}));
    const load = await fetch(`${s.url}/branches/main/load`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/x-ndjson' },
      body: '{"op":"upsert","table":"P","values":{"id":"z"}}\n',
    });
    expect(load.status).toBe(403);
    const ingest = await fetch(`${s.url}/branches/main/ingest`, {
      method: 'POST',
      headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/x-ndjson' },
      body: '{"op":"upsert","table":"P","values":{"id":"z"}}\n',
    });
    expect(ingest.status).toBe(403);
    expect(await storeState()).toBe(before);
    expect((await asAlice('POST', `/branches/${enc('agent/alice/t1')}/writes`, upsert('a2', 'x'))).status).toBe(200);
  });

  it('branches: creation, deletion, reset and the listing', async () => {
    refused(await asAlice('POST', '/branches', { name: 'agent/bob/t1' }));
    refused(await asAlice('POST', '/branches', { name: 'agent/alice/t9', from: 'team/secret' }));
    refused(await asAlice('DELETE', `/branches/${enc('team/secret')}`));
    refused(await asAlice('GET', `/branches/${enc('team/secret')}`));
    const listed = await asAlice('GET', '/branches');
    expect((listed.body.branches as { name: string }[]).map((b) => b.name).sort()).toEqual(['agent/alice/t1', 'main']);
    const made = await asAlice('POST', '/branches', { name: 'agent/alice/t2', labels: ['task=2'] });
    expect(made.body).toMatchObject({ owner: 'alice', labels: ['task=2'] });
    expect((await asAlice('DELETE', `/branches/${enc('agent/alice/t2')}`)).status).toBe(200);
  });

  it('diff, merge base, log, history and blame', async () => {
    refused(await asAlice('GET', `/diff?from=main&to=${enc('team/secret')}`));
    refused(await asAlice('GET', `/diff?from=${enc('team/secret')}&to=main`));
    refused(await asAlice('GET', `/merge-base?from=main&to=${enc('team/secret')}`));
    refused(await asAlice('GET', `/commits?at=${enc('team/secret')}`));
    refused(await asAlice('GET', `/tables/P/rows/s1/history?at=${enc('team/secret')}`));
    refused(await asAlice('GET', `/tables/P/rows/s1/blame?at=${enc('team/secret')}`));
    expect((await asAlice('GET', `/diff?from=main&to=${enc('agent/alice/t1')}`)).status).toBe(200);
  });

  it('stored queries: listing, running and changing them', async () => {
    expect(
      (await asAdmin('PUT', `/branches/${enc('team/secret')}/queries/all`, { document: '{ queryP { nodes { id v } } }' })).status,
    ).toBe(200);
    refused(await asAlice('GET', `/branches/${enc('team/secret')}/queries`));
    refused(await asAlice('POST', `/branches/${enc('team/secret')}/queries/all`, {}));
    refused(await asAlice('PUT', '/branches/main/queries/mine', { document: '{ queryP { nodes { id } } }' }));
    refused(await asAlice('DELETE', `/branches/${enc('team/secret')}/queries/all`));
    const own = await asAlice('PUT', `/branches/${enc('agent/alice/t1')}/queries/mine`, { document: '{ queryP { nodes { id } } }' });
    expect(own.status).toBe(200);
    expect((await asAlice('POST', `/branches/${enc('agent/alice/t1')}/queries/mine`, {})).status).toBe(200);
  });

  it('exports', async () => {
    refused(await asAlice('GET', `/tables/P/export?at=${enc('team/secret')}&format=ndjson`));
    expect((await asAlice('GET', '/tables/P/export?at=main&format=ndjson')).status).toBe(200);
  });

  it('merges: the source readable, the target writable; cherry-picks and reverts alike', async () => {
    const before = await storeState();
    refused(await asAlice('POST', `/branches/${enc('team/secret')}/merge`, { into: 'agent/alice/t1' }));
    refused(await asAlice('POST', `/branches/${enc('agent/alice/t1')}/merge`, { into: 'main' }));
    refused(await asAlice('POST', `/branches/${enc('agent/alice/t1')}/merge`, { into: 'main', dryRun: true }));
    refused(await asAlice('POST', `/branches/${enc('agent/alice/t1')}/cherry-pick`, { commit: `commit:${secretCommit}` }));
    refused(await asAlice('POST', '/branches/main/revert', { commit: 'main' }));
    expect(await storeState()).toBe(before);
    expect((await asAlice('POST', '/branches', { name: 'agent/alice/t3', from: 'agent/alice/t1' })).status).toBe(201);
    const merged = await asAlice('POST', `/branches/${enc('agent/alice/t3')}/merge`, { into: 'agent/alice/t1' });
    expect(merged.status).toBe(200);
  });

  it('merge requests: opening, reading, listing, reviewing and merging', async () => {
    const theirs = await asAdmin('POST', '/merge-requests', { source: 'team/secret', target: 'main', title: 'secret work' });
    const theirId = (theirs.body as { id: string }).id;
    refused(await asAlice('POST', '/merge-requests', { source: 'team/secret', target: 'agent/alice/t1', title: 'steal' }));
    refused(await asAlice('GET', `/merge-requests/${theirId}`));
    refused(await asAlice('POST', `/merge-requests/${theirId}/reviews`, { verdict: 'approve' }));
    refused(await asAlice('POST', `/merge-requests/${theirId}/close`, {}));
    const listed = await asAlice('GET', '/merge-requests?state=all');
    expect((listed.body.requests as { id: string }[]).map((r) => r.id)).not.toContain(theirId);
    // Its own request into main: it may open and read it, not approve or merge it.
    const mine = await asAlice('POST', '/merge-requests', { source: 'agent/alice/t1', target: 'main', title: 'my task' });
    expect(mine.status).toBe(200);
    const mineId = (mine.body as { id: string }).id;
    expect((await asAlice('GET', `/merge-requests/${mineId}`)).status).toBe(200);
    refused(await asAlice('POST', `/merge-requests/${mineId}/reviews`, { verdict: 'approve' }));
    refused(await asAlice('POST', `/merge-requests/${mineId}/merge`, {}));
    expect((await asAlice('POST', `/merge-requests/${mineId}/close`, {})).status).toBe(200);
  });

  it('the event feed and its stream: filtered, not refused', async () => {
    const all = await asAdmin('GET', '/events?limit=1000');
    const events = all.body.events as { seq: number; branch?: string; kind: string }[];
    expect(events.some((e) => e.branch === 'team/secret')).toBe(true);
    const mine = (await asAlice('GET', '/events?limit=1000')).body.events as { seq: number; branch?: string }[];
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.every((e) => e.branch === 'main' || e.branch?.startsWith('agent/alice/'))).toBe(true);
    // The stream says the same, from the start until the last event it may see.
    const last = Math.max(...mine.map((e) => e.seq));
    const ac = new AbortController();
    const res = await fetch(`${s.url}/events/stream?cursor=0`, { headers: { authorization: `Bearer ${alice}` }, signal: ac.signal });
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const seen: { seq: number; branch?: string }[] = [];
    let text = '';
    while (!seen.some((e) => e.seq === last)) {
      const { value, done } = await reader.read();
      if (done) break;
      text += Buffer.from(value).toString('utf8');
      const blocks = text.split('\n\n');
      text = blocks.pop() ?? '';
      for (const b of blocks) {
        const data = /^data: (.*)$/m.exec(b)?.[1];
        if (data !== undefined && /^id: /m.test(b)) seen.push(JSON.parse(data) as { seq: number; branch?: string });
      }
    }
    ac.abort();
    expect(seen.map((e) => e.seq)).toEqual(mine.map((e) => e.seq));
  });

  it('tags: listed only where a readable branch holds them; creating and deleting them is graph-wide', async () => {
    const tags = (await asAlice('GET', '/tags')).body.tags as { name: string }[];
    expect(tags.map((t) => t.name)).toEqual(['main-tag']);
    refused(await asAlice('POST', '/tags', { name: 'mine', from: 'agent/alice/t1' }));
    const admin = (await asAdmin('POST', '/tokens', { name: 'tagger', role: 'admin', write: ['agent/*'] })).body.token as string;
    refused(await rest('DELETE', '/tags/main-tag', { token: admin }));
    expect((await asAdmin('GET', '/tags/main-tag')).status).toBe(200);
  });

  it('the admin GraphQL', async () => {
    const r = await gql(s.url, '{ rows(table: "P", at: "team/secret") { items { key } } }', {}, alice);
    expect(r.body.errors?.[0]?.extensions?.code).toBe('forbidden');
    expect(JSON.stringify(r.body)).not.toContain(SECRET_ROW);
    const branches = await gql(s.url, '{ branches { items { name } } }', {}, alice);
    expect((branches.body.data as { branches: { items: { name: string }[] } }).branches.items.map((b) => b.name)).not.toContain(
      'team/secret',
    );
    const ok = await gql(s.url, '{ rows(table: "P", at: "main") { items { key } } }', {}, alice);
    expect(ok.body.errors).toBeUndefined();
  });

  it("the typed GraphQL of a branch, its SDL, and `at:` on a readable branch's endpoint", async () => {
    const post = (branch: string, query: string) =>
      fetch(`${s.url}/branches/${enc(branch)}/graphql`, {
        method: 'POST',
        headers: { authorization: `Bearer ${alice}`, 'content-type': 'application/json' },
        body: JSON.stringify({ query }),
      }).then(async (r) => ({
        status: r.status,
        body: (await r.json()) as { errors?: { extensions: { code: string } }[]; data?: unknown },
      }));
    // The endpoint of a branch it may not read refuses before any document runs.
    const secret = await post('team/secret', '{ getP(id: "s1") { v } }');
    expect(JSON.stringify(secret.body)).not.toContain(SECRET_ROW);
    expect(secret.status).toBe(403);
    expect(secret.body).toMatchObject({ error: { code: 'forbidden' } });
    const at = await post('main', '{ getP(id: "s1", at: "team/secret") { v } }');
    expect(at.body.errors?.[0]?.extensions.code).toBe('forbidden');
    expect(JSON.stringify(at.body)).not.toContain(SECRET_ROW);
    const byCommit = await post('main', `{ getP(id: "s1", at: "commit:${secretCommit}") { v } }`);
    expect(byCommit.body.errors?.[0]?.extensions.code).toBe('forbidden');
    const mutation = await post('main', 'mutation { createP(input: { id: "x" }) { key } }');
    expect(mutation.body.errors?.[0]?.extensions.code).toBe('forbidden');
    expect(
      (await fetch(`${s.url}/branches/${enc('team/secret')}/schema.graphql`, { headers: { authorization: `Bearer ${alice}` } })).status,
    ).toBe(403);
    const mine = await post('agent/alice/t1', '{ getP(id: "a1") { v } }');
    expect(mine.body.data).toEqual({ getP: { v: 'by alice' } });
  });

  it('MCP tools', async () => {
    const client = new Client({ name: 'scope-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${s.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${alice}` } } }),
    );
    try {
      const read = (await client.callTool({ name: 'read_rows', arguments: { table: 'P', at: 'team/secret' } })) as {
        isError?: boolean;
        content: { text: string }[];
      };
      expect(read.isError).toBe(true);
      expect(read.content[0]?.text).toMatch(/^forbidden: /);
      expect(JSON.stringify(read)).not.toContain(SECRET_ROW);
      const query = (await client.callTool({
        name: 'query',
        arguments: { branch: 'team/secret', document: '{ getP(id: "s1") { v } }' },
      })) as {
        isError?: boolean;
      };
      expect(JSON.stringify(query)).not.toContain(SECRET_ROW);
      await expect(client.readResource({ uri: `branchgraph://branches/${enc('team/secret')}/schema.graphql` })).rejects.toThrow(
        /forbidden/,
      );
      const resources = (await client.listResources()).resources.map((r) => r.uri);
      expect(resources.some((u) => u.includes('secret'))).toBe(false);
      const listed = (await client.callTool({ name: 'branch_list', arguments: {} })) as unknown as {
        structuredContent: { branches: { name: string }[] };
      };
      expect(listed.structuredContent.branches.map((b) => b.name)).not.toContain('team/secret');
    } finally {
      await client.close();
    }
  });

  it('hosted graphs: a token scoped to the default graph reaches no other, and lists none', async () => {
    expect((await asAdmin('POST', '/graphs', { name: 'other' })).status).toBe(201);
    refused(await asAlice('GET', '/graphs/other/branches'));
    refused(await asAlice('GET', '/graphs/nothing-here/branches'));
    expect(((await asAlice('GET', '/graphs')).body.graphs as unknown[]).length).toBe(0);
  });

  it('long operations are listed only for branches it reads', async () => {
    const ops = (await asAlice('GET', '/operations')).body.operations as { branch: string }[];
    expect(ops.every((o) => o.branch === 'main' || o.branch.startsWith('agent/alice/'))).toBe(true);
  });
});

describe('a token with a branch quota', () => {
  it('owns what it creates, and is refused past its quota until it deletes one', async () => {
    const made = await asAdmin('POST', '/tokens', { name: 'bot', role: 'write', write: ['agent/bot/*'], maxBranches: 2 });
    const bot = made.body.token as string;
    const create = (name: string, extra: Record<string, unknown> = {}) =>
      rest('POST', '/branches', { token: bot, body: { name, ...extra } });
    expect((await create('agent/bot/1')).status).toBe(201);
    refused(await create('agent/bot/x', { owner: 'someone-else' }));
    expect((await create('agent/bot/2')).status).toBe(201);
    const over = await create('agent/bot/3');
    expect(over.status).toBe(403);
    expect(over.body.error).toMatchObject({ code: 'quota_exceeded', details: { limit: 2, owned: 2, owner: 'bot' } });
    expect((await rest('DELETE', `/branches/${enc('agent/bot/1')}`, { token: bot })).status).toBe(200);
    expect((await create('agent/bot/3')).status).toBe(201);
  });

  it('counts a burst of creations one after another, stopping exactly at the quota', async () => {
    const made = await asAdmin('POST', '/tokens', { name: 'burst', role: 'write', write: ['agent/burst/*'], maxBranches: 3 });
    const token = made.body.token as string;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => rest('POST', '/branches', { token, body: { name: `agent/burst/${i}` } })),
    );
    expect(answers.filter((a) => a.status === 201)).toHaveLength(3);
    expect(answers.filter((a) => a.status === 403).every((a) => (a.body.error as { code: string }).code === 'quota_exceeded')).toBe(true);
  });
});

describe('every operation of the table, aimed at the secret branch', () => {
  /** A plausible value for each input field a call may need, beside the refs and names aimed at the secret. */
  const SAMPLE: Record<string, unknown> = {
    table: 'P',
    key: 's1',
    keys: ['s1'],
    ops: [{ op: 'upsert', table: 'P', values: { id: 'planted', v: 'x' } }],
    ndjson: '{"op":"upsert","table":"P","values":{"id":"planted"}}\n',
    schema: 'node P { id: string @key\n v: string?\n w: string? }',
    document: '{ queryP { nodes { id v } } }',
    title: 'probe',
    verdict: 'approve',
    format: 'ndjson',
    expectedHead: '01ARZ3NDEKTSV4RRFFQ69G5FAV',
    rule: { requiredApprovals: 0 },
    requiredApprovals: 0,
    from: { table: 'P', key: 's1' },
    to: { table: 'P', key: 's1' },
  };

  it('leaks no row of it and changes nothing, whichever side of the call names it', async () => {
    const rest = new RestClient(s.url, alice);
    const before = await storeState();
    const own = 'agent/alice/t1';
    const outcomes: string[] = [];
    const refusals: string[] = [];
    for (const op of OPERATION_LIST) {
      const fields = inputFields(op.input);
      // Every branch and ref the call names is the secret, then each one alone is (the rest its own branch).
      // `name` names a branch only in the branch operations (a stored query's, a tag's or a token's name is not one).
      // A node a walk starts from is an object (its table and key), never a branch.
      const branchy = (f: { name: string; kind: string }) =>
        BRANCH_FIELDS.has(f.name) && (f.kind === 'string' || f.kind === 'ref') && (f.name !== 'name' || /Branch$/.test(op.name));
      const named = fields.filter(branchy).map((f) => f.name);
      const variants = [named, ...named.map((n) => [n])];
      for (const aimed of variants) {
        if (aimed.length === 0) continue;
        const input: Record<string, unknown> = {};
        for (const f of fields) {
          if (branchy(f)) input[f.name] = aimed.includes(f.name) ? 'team/secret' : own;
          else if (f.required && f.name in SAMPLE) input[f.name] = SAMPLE[f.name];
        }
        if (/StoredQuery$/.test(op.name)) input.name = 'all';
        const answer = await (rest as unknown as Record<string, (i: unknown) => Promise<unknown>>)[op.name]?.(input).then(
          (out) => ({ ok: true, text: JSON.stringify(out) }),
          (e: unknown) => ({ ok: false, text: `${(e as { code?: string }).code}: ${(e as Error).message}` }),
        );
        expect(answer?.text, `${op.name} ${JSON.stringify(input)}`).not.toContain(SECRET_ROW);
        if (answer?.ok === true && aimed.length > 0) outcomes.push(`${op.name}(${aimed.join(',')}) answered`);
        else refusals.push(`${op.name}: ${answer?.text.split(':')[0]}`);
      }
    }
    // The sweep reaches the scope: almost every call is refused by it, not by a malformed input.
    expect(refusals.filter((r) => r.endsWith(': forbidden')).length).toBeGreaterThan(0.9 * refusals.length);
    // Nothing the sweep sent changed anything stored.
    expect(changedKeys(before, await storeState())).toEqual([]);
    // A call aimed at the secret branch answers only where it reads nothing of it (a listing filters it out).
    expect(outcomes.filter((o) => !/^(listBranches|listMergeRequests|listEvents|listTags|listOperations)/.test(o))).toEqual([]);
  });
});

describe('the access every operation declares', () => {
  it('names the branches its input names, or says it filters, reaches the whole graph, or acts on a request', () => {
    for (const op of OPERATION_LIST) {
      const input: Record<string, unknown> = {};
      for (const f of inputFields(op.input))
        if (BRANCH_FIELDS.has(f.name)) input[f.name] = f.kind === 'ref' ? { branch: 'team/secret' } : 'team/secret';
      input.id = '01ARZ3NDEKTSV4RRFFQ69G5FAV';
      const access = op.access(input);
      if (access === 'filtered' || access.graph !== undefined || access.request !== undefined || access.unscoped === true) continue;
      const named = Object.keys(input).some((k) => k !== 'id');
      if (named) expect(JSON.stringify(access), op.name).toContain('team/secret');
    }
  });
});
