/**
 * Webhooks and pre-merge checks against real local HTTP receivers: signed
 * deliveries, retries and dead letters for a receiver that fails or hangs,
 * a bounded queue, delivery that never holds up the change that caused
 * it, queued deliveries kept as dead letters when the server stops, and
 * checks that gate merges into a protected branch.
 */
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { hookReceiver, type HookReceiver } from './support/hook-receiver.js';
import { embeddedApi } from '../src/service/api.js';
import { DEFAULT_HOOK_SETTINGS } from '../src/service/hook-dispatcher.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { StoreWrapper, type CallContext } from '../src/store/store-wrapper.js';
import { BranchgraphError } from '../src/model/errors.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const ADMIN = 'admin-token-hooks';
const WRITER = 'writer-token-hooks';
const REVIEWER = 'reviewer-token-hooks';
const TOKENS = `admin:${ADMIN}:ada,write:${WRITER}:wes,write:${REVIEWER}:rae`;
const SECRET = 'a-secret-of-sixteen-or-more';
const SCHEMA = 'node Person { id: string @key\n name: string }';

/** Fast retries, short timeouts, a registry every server reads fresh. */
const hookEnv = (more: Record<string, string> = {}): Record<string, string> => ({
  BRANCHGRAPH_HOOK_ALLOWLIST: '127.0.0.1',
  HOOK_TIMEOUT_MS: '400',
  HOOK_MAX_ATTEMPTS: '3',
  HOOK_RETRY_BASE_MS: '10',
  HOOK_RETRY_MAX_MS: '40',
  HOOK_REFRESH_MS: '0',
  ...more,
});

const insert = (id: string) => ({ op: 'insert' as const, table: 'Person', values: { id, name: id } });

function verify(r: { headers: Record<string, unknown>; body: string }, secret: string): boolean {
  const ts = String(r.headers['x-branchgraph-timestamp']);
  const sig = `sha256=${createHmac('sha256', secret).update(`${ts}.${r.body}`).digest('hex')}`;
  return r.headers['x-branchgraph-signature'] === sig;
}

/** Dead letters, once `n` have been stored (deliveries fail in the background). */
async function deadLetters(api: RestClient, n: number) {
  for (let i = 0; i < 400; i++) {
    const page = await api.listHookDeadLetters({});
    if (page.deadLetters.length >= n) return page.deadLetters;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${n} dead letters`);
}

describe('webhooks', () => {
  let s: TestServer;
  let admin: RestClient;
  let writer: RestClient;
  const receivers: HookReceiver[] = [];
  const receiver = async (...a: Parameters<typeof hookReceiver>) => {
    const r = await hookReceiver(...a);
    receivers.push(r);
    return r;
  };
  beforeAll(async () => {
    s = await testServer({ tokens: TOKENS, env: hookEnv() });
    admin = new RestClient(s.url, ADMIN);
    writer = new RestClient(s.url, WRITER);
    await admin.applySchema({ branch: 'main', schema: SCHEMA });
  });
  afterEach(async () => {
    for (const h of (await admin.listHooks({})).hooks) await admin.deleteHook({ id: h.id });
    await Promise.all(receivers.splice(0).map((r) => r.close()));
  });
  afterAll(() => s.close());

  it('registers hooks only for admins, only on allowed hosts, and never shows the secret again', async () => {
    await expect(writer.createHook({ url: 'http://127.0.0.1:9/x', events: ['*'] })).rejects.toMatchObject({ code: 'forbidden' });
    await expect(admin.createHook({ url: 'http://example.com/x', events: ['*'] })).rejects.toMatchObject({
      code: 'forbidden',
      message: expect.stringContaining('allowlist'),
    });
    await expect(admin.createHook({ url: 'file:///etc/passwd', events: ['*'] })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(admin.createHook({ url: 'http://u:p@127.0.0.1:9/x', events: ['*'] })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(admin.createHook({ url: 'http://127.0.0.1:9/x' })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(admin.createHook({ url: 'http://127.0.0.1:9/x', kind: 'check' })).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(admin.createHook({ url: 'http://127.0.0.1:9/x', events: ['nope' as never] })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    const made = await admin.createHook({ url: 'http://127.0.0.1:9/x', events: ['commit'], secret: SECRET });
    expect(made.secret).toBe(SECRET);
    const generated = await admin.createHook({ url: 'http://127.0.0.1:9/y', kind: 'check', check: 'ci' });
    expect(generated.secret.length).toBeGreaterThanOrEqual(32);
    const listed = await admin.listHooks({});
    expect(listed.hooks.map((h) => [h.url, h.kind, h.check ?? null, h.createdBy])).toEqual([
      ['http://127.0.0.1:9/x', 'event', null, 'ada'],
      ['http://127.0.0.1:9/y', 'check', 'ci', 'ada'],
    ]);
    expect(JSON.stringify(listed)).not.toContain(SECRET);
    await admin.deleteHook({ id: made.id });
    expect((await admin.listHooks({})).hooks.map((h) => h.id)).toEqual([generated.id]);
    await expect(admin.deleteHook({ id: made.id })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('delivers the events a hook names, signed, once each, with a stable delivery id', async () => {
    const rx = await receiver();
    const hook = await admin.createHook({ url: rx.url, events: ['commit', 'branch_created'], secret: SECRET });
    const w = await writer.write({ branch: 'main', ops: [insert('ann')] });
    await writer.createTag({ name: 'not-delivered', from: 'main' });
    await writer.createBranch({ name: 'feature-hooks' });
    const [first, second] = await rx.waitFor(2);
    for (const r of [first, second]) if (r !== undefined) expect(verify(r, SECRET)).toBe(true);
    const body = JSON.parse(first?.body ?? '{}');
    expect(body.event).toMatchObject({ kind: 'commit', branch: 'main', commit: w.commit?.id, commitKind: 'write', actor: 'wes' });
    expect(body.delivery).toBe(`${body.event.seq}-${hook.id}`);
    expect(first?.headers['x-branchgraph-delivery']).toBe(body.delivery);
    expect(first?.headers['x-branchgraph-event']).toBe('commit');
    expect(JSON.parse(second?.body ?? '{}').event).toMatchObject({ kind: 'branch_created', branch: 'feature-hooks' });
    // The tag's event came between them and was not sent; nothing else arrives.
    expect(verify({ headers: first?.headers ?? {}, body: `${first?.body} ` }, SECRET)).toBe(false);
    const stats = (await admin.listHooks({})).hooks[0]?.stats;
    expect(stats).toMatchObject({ delivered: 2, failedAttempts: 0, deadLetters: 0, queued: 0 });
    expect(rx.received).toHaveLength(2);
  });

  it('retries a failing receiver with the same delivery id, then keeps a dead letter', async () => {
    const rx = await receiver({ status: 500, body: 'receiver broke' });
    const before = (await admin.listHookDeadLetters({})).deadLetters.length;
    const hook = await admin.createHook({ url: rx.url, events: ['commit'], secret: SECRET });
    await writer.write({ branch: 'main', ops: [insert('bob')] });
    const attempts = await rx.waitFor(3);
    expect(new Set(attempts.map((a) => a.headers['x-branchgraph-delivery'])).size).toBe(1);
    expect(attempts.map((a) => a.headers['x-branchgraph-attempt'])).toEqual(['1', '2', '3']);
    const letters = await deadLetters(admin, before + 1);
    const letter = letters.find((l) => l.hook === hook.id);
    expect(letter).toMatchObject({ event: 'commit', attempts: 3, url: rx.url, delivery: attempts[0]?.headers['x-branchgraph-delivery'] });
    expect(letter?.error).toContain('500');
    expect(JSON.parse(letter?.body ?? '{}').event.kind).toBe('commit');
    await expect(writer.listHookDeadLetters({})).rejects.toMatchObject({ code: 'forbidden' });
    // An admin delivers it again once the receiver is back: the same delivery id and body, and the letter is gone.
    await expect(writer.redeliverHookDeadLetter({ id: letter?.id as string })).rejects.toMatchObject({ code: 'forbidden' });
    rx.answer = { status: 204 };
    expect(await admin.redeliverHookDeadLetter({ id: letter?.id as string })).toEqual({
      redelivered: letter?.id,
      delivery: letter?.delivery,
    });
    const again = (await rx.waitFor(4))[3];
    expect(again?.headers['x-branchgraph-delivery']).toBe(letter?.delivery);
    expect(again?.body).toBe(letter?.body);
    expect((await admin.listHookDeadLetters({})).deadLetters.some((l) => l.id === letter?.id)).toBe(false);
    await expect(admin.redeliverHookDeadLetter({ id: letter?.id as string })).rejects.toMatchObject({ code: 'not_found' });
  });

  it('regression: GC removes dead letters older than 30 days, and keeps younger ones', async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const store = new MemoryStore(() => now);
    const service = await serviceOnStore(store, { actor: 'a', shard: 'a', graph: { clock: () => now } });
    const letter = { hook: 'h', url: 'http://127.0.0.1/x', delivery: '1-h', event: 'commit', attempts: 3, error: 'x', body: '{}' };
    const old = await service.graph.hooks.addDeadLetter(letter);
    now += 20 * 24 * 3600 * 1000;
    const young = await service.graph.hooks.addDeadLetter(letter);
    now += 11 * 24 * 3600 * 1000 + 2 * 3600 * 1000;
    const report = await service.graph.gc({ now });
    expect(report.deleted.deadLetters).toBe(1);
    expect((await service.graph.hooks.deadLetters({ limit: 10 })).letters.map((l) => l.id)).toEqual([young.id]);
    expect(old.id).not.toBe(young.id);
    await service.close();
  });

  it('never holds up the change: a hanging receiver times out in the background', async () => {
    const rx = await receiver('hang');
    const before = (await admin.listHookDeadLetters({})).deadLetters.length;
    const hook = await admin.createHook({ url: rx.url, events: ['commit'], secret: SECRET });
    // Each write is acknowledged while the receiver still holds the delivery of the one before.
    for (const id of ['h1', 'h2', 'h3']) await writer.write({ branch: 'main', ops: [insert(id)] });
    expect(rx.received.length).toBeLessThan(9);
    const letters = (await deadLetters(admin, before + 3)).filter((l) => l.hook === hook.id);
    expect(letters).toHaveLength(3);
    for (const l of letters) expect(l.error).toBe('no answer within 400 ms');
  });

  it('delivers to a slow receiver within the timeout, recording the latency', async () => {
    const rx = await receiver({ status: 200, delayMs: 150 });
    await admin.createHook({ url: rx.url, events: ['*'], secret: SECRET });
    await writer.write({ branch: 'main', ops: [insert('slow')] });
    await rx.waitFor(1);
    for (let i = 0; i < 400 && (await admin.listHooks({})).hooks[0]?.stats.delivered !== 1; i++)
      await new Promise((r) => setTimeout(r, 25));
    const stats = (await admin.listHooks({})).hooks[0]?.stats;
    expect(stats?.delivered).toBe(1);
    expect(stats?.lastLatencyMs).toBeGreaterThanOrEqual(150);
  });
});

describe('hooks over GraphQL and embedded', () => {
  it('registers, lists and removes hooks over GraphQL, admins only', async () => {
    const s = await testServer({ tokens: TOKENS, env: hookEnv() });
    try {
      const made = await gql(
        s.url,
        'mutation($u: String!) { createHook(url: $u, events: ["commit"], secret: "a-secret-of-sixteen-or-more") { id kind events secret } }',
        { u: 'http://127.0.0.1:9/gql' },
        ADMIN,
      );
      const id = (made.body.data?.createHook as { id: string } | undefined)?.id ?? '';
      expect(made.body.data?.createHook).toMatchObject({ kind: 'event', events: ['commit'], secret: SECRET });
      const listed = await gql(
        s.url,
        '{ hooks { id url stats { delivered queued lastLatencyMs } } hookDeadLetters { deadLetters { id } nextCursor } }',
        {},
        ADMIN,
      );
      expect(listed.body.data).toEqual({
        hooks: [{ id, url: 'http://127.0.0.1:9/gql', stats: { delivered: 0, queued: 0, lastLatencyMs: null } }],
        hookDeadLetters: { deadLetters: [], nextCursor: null },
      });
      const refused = await gql(s.url, '{ hooks { id } }', {}, WRITER);
      expect(refused.body.errors?.[0]?.extensions?.code).toBe('forbidden');
      const far = await gql(s.url, 'mutation { createHook(url: "http://10.0.0.1/x", events: ["*"]) { id } }', {}, ADMIN);
      expect(far.body.errors?.[0]?.extensions?.code).toBe('forbidden');
      expect((await gql(s.url, 'mutation($id: ID!) { deleteHook(id: $id) }', { id }, ADMIN)).body.data).toEqual({ deleteHook: true });
    } finally {
      await s.close();
    }
  });

  it('delivers events an embedded service lands, and waits for its deliveries when it closes', async () => {
    const rx = await hookReceiver({ status: 200, delayMs: 50 });
    const settings = { ...DEFAULT_HOOK_SETTINGS, allowlist: ['127.0.0.1'] };
    const service = await serviceOnStore(new MemoryStore(), { actor: 'embedded', shard: 'e', hooks: settings });
    try {
      const api = embeddedApi(service, { transport: 'embedded' });
      await api.createHook({ url: rx.url, events: ['branch_created'], secret: SECRET });
      await api.createBranch({ name: 'embedded-hook' });
      const [got] = await rx.waitFor(1);
      expect(JSON.parse(got?.body ?? '{}').event).toMatchObject({ kind: 'branch_created', branch: 'embedded-hook', actor: 'embedded' });
      expect(verify(got as never, SECRET)).toBe(true);
    } finally {
      await service.close();
      await rx.close();
    }
  });
});

describe('the delivery queue', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('turns deliveries past its bound into dead letters, and keeps what is queued when the server stops', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'bg-hooks-'));
    dirs.push(dir);
    const store = `file://${dir}`;
    const env = hookEnv({ HOOK_QUEUE_LIMIT: '2', HOOK_CONCURRENCY: '1', HOOK_TIMEOUT_MS: '600000' });
    const s = await testServer({ store, tokens: TOKENS, env });
    const rx = await hookReceiver('hang');
    try {
      const admin = new RestClient(s.url, ADMIN);
      await admin.applySchema({ branch: 'main', schema: SCHEMA });
      await admin.createHook({ url: rx.url, events: ['commit'], secret: SECRET });
      for (const id of ['q1', 'q2', 'q3', 'q4', 'q5']) await admin.write({ branch: 'main', ops: [insert(id)] });
      await rx.waitFor(1);
      const full = (await deadLetters(admin, 3)).filter((l) => l.error.includes('queue was full'));
      expect(full).toHaveLength(3);
      expect(full.every((l) => l.attempts === 0)).toBe(true);
    } finally {
      await s.close();
    }
    // The one in flight and the one waiting were kept when the server stopped.
    const again = await testServer({ store, tokens: TOKENS, env });
    try {
      const letters = (await new RestClient(again.url, ADMIN).listHookDeadLetters({})).deadLetters;
      expect(letters.map((l) => l.error.replace(/:.*$/, '')).sort()).toEqual([
        "the hook's delivery queue was full (2)",
        "the hook's delivery queue was full (2)",
        "the hook's delivery queue was full (2)",
        'the server stopped before it was delivered',
        'the server stopped during attempt 1',
      ]);
    } finally {
      await again.close();
      await rx.close();
    }
  });
});

describe('hooks in lanes of their own', () => {
  it('regression: a receiver that never answers costs only its own hook: a healthy one beside it gets every delivery', async () => {
    // One attempt in flight per hook, and a timeout far beyond the test: a shared pool would starve the healthy hook.
    const env = hookEnv({ HOOK_CONCURRENCY: '1', HOOK_TIMEOUT_MS: '600000' });
    const s = await testServer({ tokens: TOKENS, env });
    const hanging = await Promise.all([hookReceiver('hang'), hookReceiver('hang'), hookReceiver('hang'), hookReceiver('hang')]);
    const healthy = await hookReceiver({ status: 204 });
    try {
      const admin = new RestClient(s.url, ADMIN);
      await admin.applySchema({ branch: 'main', schema: SCHEMA });
      for (const rx of [...hanging, healthy]) await admin.createHook({ url: rx.url, events: ['commit'], secret: SECRET });
      for (const id of ['l1', 'l2', 'l3', 'l4', 'l5', 'l6']) await admin.write({ branch: 'main', ops: [insert(id)] });
      const got = await healthy.waitFor(6);
      expect(new Set(got.map((r) => JSON.parse(r.body).event.seq)).size).toBe(6);
      for (const rx of hanging) expect(rx.received).toHaveLength(1);
    } finally {
      await s.close();
      await Promise.all([...hanging, healthy].map((rx) => rx.close()));
    }
  });
});

describe('deliveries across a crash', () => {
  it('regression: deliveries a killed server had queued are made by its restart, from its cursor, each with its delivery id', async () => {
    const inner = new MemoryStore();
    const killable = new (class extends StoreWrapper {
      dead = false;
      protected async around<T>(_ctx: CallContext, call: () => Promise<T>): Promise<T> {
        if (this.dead) throw new BranchgraphError('store_crashed', 'the process is gone');
        return call();
      }
    })(inner);
    const hooks = { ...DEFAULT_HOOK_SETTINGS, allowlist: ['127.0.0.1'], concurrency: 1, timeoutMs: 600_000 };
    const rx = await hookReceiver('hang');
    const first = await serviceOnStore(killable, { actor: 'a', shard: 'one', hooks, graph: { hookRefreshMs: 0 } });
    await first.start();
    const api = embeddedApi(first, { transport: 'embedded', actor: 'a' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    await api.createHook({ url: rx.url, events: ['commit'], secret: SECRET });
    const seqs: number[] = [];
    for (const id of ['k1', 'k2', 'k3']) {
      await api.write({ branch: 'main', ops: [insert(id)] });
      seqs.push(Number((await api.listEvents({ limit: 1000 })).nextCursor));
    }
    await rx.waitFor(1);
    // kill -9: from here the first process reaches nothing, and its queue dies with it.
    killable.dead = true;
    rx.answer = { status: 204 };
    const again = await serviceOnStore(inner, { actor: 'a', shard: 'one', hooks, graph: { hookRefreshMs: 0 } });
    await again.start();
    try {
      await again.idle();
      await rx.waitFor(4);
      const delivered = rx.received.slice(1).map((r) => JSON.parse(r.body) as { delivery: string; event: { seq: number } });
      expect(delivered.map((d) => d.event.seq).sort((a, b) => a - b)).toEqual(seqs);
      expect(delivered.every((d) => d.delivery.startsWith(`${d.event.seq}-`))).toBe(true);
    } finally {
      rx.release();
      await again.close();
      await rx.close();
    }
  });
});

describe('pre-merge checks', () => {
  let s: TestServer;
  let admin: RestClient;
  let writer: RestClient;
  let reviewer: RestClient;
  let ci: HookReceiver;
  beforeAll(async () => {
    s = await testServer({ tokens: TOKENS, env: hookEnv() });
    admin = new RestClient(s.url, ADMIN);
    writer = new RestClient(s.url, WRITER);
    reviewer = new RestClient(s.url, REVIEWER);
    ci = await hookReceiver({ status: 200, body: JSON.stringify({ status: 'fail', message: 'lint: 2 problems' }) });
    await admin.applySchema({ branch: 'main', schema: SCHEMA });
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, requiredChecks: ['ci'] });
    await admin.createHook({ url: ci.url, kind: 'check', check: 'ci', secret: SECRET });
  });
  afterAll(async () => {
    await s.close();
    await ci.close();
  });

  it('gate merges into a protected branch on the answer stored on the revision', async () => {
    await writer.createBranch({ name: 'checked' });
    await writer.write({ branch: 'checked', ops: [insert('cy')] });
    const opened = await writer.openMergeRequest({ source: 'checked', target: 'main', title: 'add cy' });
    await reviewer.reviewMergeRequest({ id: opened.id, verdict: 'approve' });
    await expect(writer.mergeMergeRequest({ id: opened.id })).rejects.toMatchObject({
      code: 'request_not_mergeable',
      message: expect.stringContaining('check ci failed: lint: 2 problems'),
    });
    const asked = ci.received.map((r) => JSON.parse(r.body));
    expect(asked[0]).toMatchObject({ check: 'ci', request: { id: opened.id, source: 'checked', target: 'main' }, revision: { n: 1 } });
    expect(ci.received.every((r) => verify(r, SECRET))).toBe(true);
    const failed = await writer.getMergeRequest({ id: opened.id });
    expect(failed.revisions.at(-1)?.checks?.ci).toMatchObject({ status: 'fail', message: 'lint: 2 problems' });
    expect(failed.mergeability).toMatchObject({ mergeable: false, checks: { required: ['ci'], passed: [] } });

    ci.answer = { status: 200, body: JSON.stringify({ status: 'pass' }) };
    const passed = await writer.runMergeRequestChecks({ id: opened.id });
    expect(passed.revisions.at(-1)?.checks?.ci?.status).toBe('pass');
    expect(passed.mergeability).toMatchObject({ mergeable: true, checks: { passed: ['ci'] } });
    const merged = await writer.mergeMergeRequest({ id: opened.id });
    expect(merged.request.state).toBe('merged');
  });

  it('count a check that does not answer in time, or answers nonsense, as an error', async () => {
    await writer.createBranch({ name: 'slow-check' });
    await writer.write({ branch: 'slow-check', ops: [insert('dee')] });
    ci.answer = 'hang';
    const opened = await writer.openMergeRequest({ source: 'slow-check', target: 'main', title: 'add dee' });
    const hung = await writer.runMergeRequestChecks({ id: opened.id });
    expect(hung.revisions.at(-1)?.checks?.ci).toMatchObject({ status: 'error', message: 'no answer within 400 ms' });
    expect(hung.mergeability.reasons).toContain('check ci could not run: no answer within 400 ms');
    ci.release();
    ci.answer = { status: 200, body: 'ok!' };
    const nonsense = await writer.runMergeRequestChecks({ id: opened.id });
    expect(nonsense.revisions.at(-1)?.checks?.ci?.status).toBe('error');
    ci.answer = { status: 503 };
    const down = await writer.runMergeRequestChecks({ id: opened.id });
    expect(down.revisions.at(-1)?.checks?.ci?.message).toContain('503');
  });

  it('ask again on every new revision, and name a required check no hook reports', async () => {
    ci.answer = { status: 200, body: JSON.stringify({ status: 'pass' }) };
    await writer.createBranch({ name: 'moving' });
    await writer.write({ branch: 'moving', ops: [insert('eve')] });
    const opened = await writer.openMergeRequest({ source: 'moving', target: 'main', title: 'add eve' });
    const seen = ci.received.length;
    await writer.write({ branch: 'moving', ops: [insert('fay')] });
    const revised = await writer.reviseMergeRequest({ id: opened.id });
    expect(revised.revisions).toHaveLength(2);
    // The merge finds revision 2 without an answer (or one that arrived meanwhile) and decides on it.
    await reviewer.reviewMergeRequest({ id: opened.id, verdict: 'approve' });
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, requiredChecks: ['ci', 'security'] });
    await expect(writer.mergeMergeRequest({ id: opened.id })).rejects.toMatchObject({
      message: expect.stringContaining('check security has not reported on revision 2'),
    });
    const asked = ci.received.slice(seen).map((r) => JSON.parse(r.body).revision.n);
    expect(asked).toContain(2);
    const now = await writer.getMergeRequest({ id: opened.id });
    expect(now.revisions.at(-1)?.checks?.ci?.status).toBe('pass');
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, requiredChecks: ['ci'] });
  });
});
