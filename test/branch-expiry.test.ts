/**
 * Branches for agents: a TTL (or an expiry time), an owner and labels on
 * creation, carried by every later record of the branch; listings filtered
 * by owner, label and name prefix, still paged; and the maintenance sweep
 * that deletes expired branches, with a `branch_expired` event each, never
 * a protected branch, and never one an open merge request holds until that
 * request is merged or closed. The graphs' clock is the test's, so time
 * moves only when the test says.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServer, type TestServer } from './support/test-server.js';

const ADMIN = 'root-token-1';
let s: TestServer;
let now = Date.parse('2026-12-05T12:00:00Z');
const HOUR = 3600_000;

type Answer = { status: number; body: Record<string, unknown> };
async function call(method: string, path: string, body?: unknown): Promise<Answer> {
  const res = await fetch(`${s.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
}
const enc = encodeURIComponent;
const names = (a: Answer): string[] => (a.body.branches as { name: string }[]).map((b) => b.name);
const sweep = async () =>
  (await call('POST', '/maintenance/expire-branches', {})).body as { expired: string[]; held: { branch: string; request: string }[] };

beforeAll(async () => {
  s = await testServer({ tokens: `admin:${ADMIN}`, clock: () => now, env: { BRANCH_EXPIRY_INTERVAL_MS: '0' } });
  expect((await call('POST', '/branches/main/schema', { schema: 'node P { id: string @key\n v: int? }' })).status).toBe(200);
});
afterAll(() => s.close());

describe('a branch with an expiry, an owner and labels', () => {
  it('takes ttlSeconds or expiresAt, shows them, and keeps them through a reset and a protection', async () => {
    const made = await call('POST', '/branches', {
      name: 'agent/a/1',
      ttlSeconds: 3600,
      owner: 'agent-a',
      labels: ['task=1', 'nightly', 'task=1'],
    });
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({ expiresAt: new Date(now + HOUR).toISOString(), owner: 'agent-a', labels: ['nightly', 'task=1'] });
    const at = await call('POST', '/branches', { name: 'agent/a/2', expiresAt: new Date(now + 2 * HOUR).toISOString() });
    // Without an owner named, the caller owns it.
    expect(at.body).toMatchObject({
      expiresAt: new Date(now + 2 * HOUR).toISOString(),
      owner: expect.stringMatching(/^admin-[0-9a-f]{8}$/),
    });
    const head = ((await call('GET', `/branches/${enc('agent/a/1')}`)).body.head as { id: string }).id;
    const reset = await call('PUT', `/branches/${enc('agent/a/1')}`, { to: 'main', expectedHead: head });
    expect(reset.body).toMatchObject({ expiresAt: new Date(now + HOUR).toISOString(), owner: 'agent-a', labels: ['nightly', 'task=1'] });
    const got = await call('GET', `/branches/${enc('agent/a/1')}`);
    expect(got.body).toMatchObject({ owner: 'agent-a', labels: ['nightly', 'task=1'] });
  });

  it('refuses both a TTL and an expiry time, an expiry in the past, and bad labels', async () => {
    for (const body of [
      { name: 'x/1', ttlSeconds: 60, expiresAt: new Date(now + HOUR).toISOString() },
      { name: 'x/2', expiresAt: new Date(now - 1000).toISOString() },
      { name: 'x/3', ttlSeconds: 0 },
      { name: 'x/4', labels: ['Has Space'] },
    ]) {
      const r = await call('POST', '/branches', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect((r.body.error as { code: string }).code).toBe('invalid_input');
    }
    expect(names(await call('GET', '/branches?prefix=x/'))).toEqual([]);
  });
});

describe('the branch listing', () => {
  it('filters by owner, label and name prefix, and pages through a filter', async () => {
    for (let i = 0; i < 7; i++)
      await call('POST', '/branches', { name: `team/t${i}`, owner: i % 2 === 0 ? 'even' : 'odd', labels: [`n=${i}`] });
    expect(names(await call('GET', '/branches?owner=even'))).toEqual(['team/t0', 'team/t2', 'team/t4', 'team/t6']);
    expect(names(await call('GET', `/branches?label=${enc('n=3')}`))).toEqual(['team/t3']);
    expect(names(await call('GET', `/branches?prefix=${enc('team/')}&owner=odd`))).toEqual(['team/t1', 'team/t3', 'team/t5']);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Answer = await call('GET', `/branches?owner=even&limit=3${cursor === null ? '' : `&cursor=${enc(cursor)}`}`);
      seen.push(...names(page));
      cursor = page.body.nextCursor as string | null;
    } while (cursor !== null);
    expect(seen).toEqual(['team/t0', 'team/t2', 'team/t4', 'team/t6']);
    // A cursor belongs to its filters: it does not continue another listing.
    const first = await call('GET', '/branches?owner=even&limit=1');
    const other = await call('GET', `/branches?owner=odd&cursor=${enc(first.body.nextCursor as string)}`);
    expect(other.status).toBe(400);
  });
});

describe('the expiry sweep', () => {
  it('deletes what expired, with an event each, and nothing else', async () => {
    await call('POST', '/branches', { name: 'sweep/soon', ttlSeconds: 60 });
    await call('POST', '/branches', { name: 'sweep/later', ttlSeconds: 7200 });
    await call('POST', '/branches', { name: 'sweep/forever' });
    await call('POST', '/branches', { name: 'sweep/guarded', ttlSeconds: 60 });
    expect((await call('PUT', `/branches/${enc('sweep/guarded')}/protection`, { requiredApprovals: 1 })).status).toBe(200);
    expect((await sweep()).expired).toEqual([]);
    now += 61_000;
    const first = await sweep();
    expect(first.expired).toEqual(['sweep/soon']);
    expect(names(await call('GET', '/branches?prefix=sweep/'))).toEqual(['sweep/forever', 'sweep/guarded', 'sweep/later']);
    const events = (await call('GET', '/events?limit=1000')).body.events as { kind: string; branch?: string; actor: string }[];
    expect(events.filter((e) => e.kind === 'branch_expired')).toEqual([
      expect.objectContaining({ branch: 'sweep/soon', actor: 'maintenance' }),
    ]);
    // Nothing more is due: a second sweep deletes nothing.
    expect((await sweep()).expired).toEqual([]);
    now += 2 * HOUR;
    expect((await sweep()).expired).toContain('sweep/later');
    expect(names(await call('GET', '/branches?prefix=sweep/'))).toEqual(['sweep/forever', 'sweep/guarded']);
  });

  it('holds a branch an open merge request names until the request is closed', async () => {
    await call('POST', '/branches', { name: 'review/src', ttlSeconds: 60 });
    await call('POST', '/branches/review%2Fsrc/writes', { ops: [{ op: 'upsert', table: 'P', values: { id: 'r', v: 1 } }] });
    const opened = await call('POST', '/merge-requests', { source: 'review/src', target: 'main', title: 'keep me' });
    const id = (opened.body as { id: string }).id;
    now += 61_000;
    const held = await sweep();
    expect(held.held).toContainEqual({ branch: 'review/src', request: id });
    expect(held.expired).not.toContain('review/src');
    expect((await call('GET', `/merge-requests/${id}`)).body).toMatchObject({ state: 'open' });
    expect((await call('POST', `/merge-requests/${id}/close`, {})).status).toBe(200);
    expect((await sweep()).expired).toContain('review/src');
    expect((await call('GET', `/branches/${enc('review/src')}`)).status).toBe(404);
  });

  it('leaves a branch whose record changed after it was found expired', async () => {
    await call('POST', '/branches', { name: 'moved/one', ttlSeconds: 1 });
    await call('POST', '/branches', { name: 'moved/two', ttlSeconds: 1 });
    now += 2000;
    const found = await s.graph.listBranches({ prefix: 'moved/' });
    const [one, two] = found.branches.map((b) => b.record);
    // Between the finding and the deletion, one is protected and the other reset: each record moved on.
    expect((await call('PUT', `/branches/${enc('moved/one')}/protection`, { requiredApprovals: 1 })).status).toBe(200);
    const head = ((await call('GET', `/branches/${enc('moved/two')}`)).body.head as { id: string }).id;
    expect((await call('PUT', `/branches/${enc('moved/two')}`, { to: 'main', expectedHead: head })).status).toBe(200);
    expect(await s.graph.expireBranch(one as never)).toBe('changed');
    expect(await s.graph.expireBranch(two as never)).toBe('changed');
    expect((await call('GET', `/branches/${enc('moved/one')}`)).status).toBe(200);
    expect((await call('GET', `/branches/${enc('moved/two')}`)).status).toBe(200);
  });
});

describe('a managed token with an expiry', () => {
  it("works until its time, and is refused from then on, by the graph's clock", async () => {
    const made = await call('POST', '/tokens', { name: 'brief', role: 'read', expiresAt: new Date(now + HOUR).toISOString() });
    expect(made.status).toBe(201);
    const read = () => fetch(`${s.url}/branches`, { headers: { authorization: `Bearer ${made.body.token as string}` } });
    expect((await read()).status).toBe(200);
    now += HOUR + 1000;
    const refused = await read();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: 'unauthorized',
      message: /expired/,
    });
  });
});
