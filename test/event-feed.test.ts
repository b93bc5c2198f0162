/**
 * The event feed: every change once, in one order, paged by cursor, the
 * same embedded, over REST, GraphQL and server-sent events; racing
 * publishers on two servers leave one event per published commit, in
 * commit order; and a crash at any store call of a write leaves, after a
 * restart, an event exactly when the commit landed (an attempt that never
 * published holds readers back only until a publication's deadline, and
 * not at all when it gave up before writing its manifest).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { MAX_PUBLICATION_MS } from '../src/graph/gc.js';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { FaultStore } from '../src/store/fault-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll } from '../src/store/object-store.js';
import { cloneMemoryStore as clone } from './support/stores.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n v: int? }';
const put = (id: string, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'P', values: { id, v } }] });

async function allEvents(
  api: BranchgraphApi,
  from = '0',
  limit = 2,
): Promise<{ kind: string; seq: number; commitKind?: string; branch?: string; commit?: string }[]> {
  const out: { kind: string; seq: number }[] = [];
  let cursor = from;
  for (;;) {
    const page = await api.listEvents({ cursor, limit });
    out.push(...page.events);
    if (page.events.length === 0) return out;
    cursor = page.nextCursor;
  }
}

describe('event feed', () => {
  let s: TestServer;
  let api: BranchgraphApi;
  let request = '';
  beforeAll(async () => {
    s = await testServer();
    api = embeddedApi(s.service, { transport: 'embedded', actor: 'ann' });
    const bob = embeddedApi(s.service, { transport: 'embedded', actor: 'bob' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    await api.write({ branch: 'main', ...put('a', 1) });
    await api.createBranch({ name: 'f' });
    await api.write({ branch: 'f', ...put('b', 1) });
    await api.createTag({ name: 'v1' });
    await api.protectBranch({ name: 'main', requiredApprovals: 1 });
    request = (await api.openMergeRequest({ source: 'f', title: 't' })).id;
    await bob.reviewMergeRequest({ id: request, verdict: 'approve' });
    await api.mergeMergeRequest({ id: request, deleteBranch: true });
  });
  afterAll(() => s.close());

  const EXPECTED = [
    'branch_created main',
    'commit schema main',
    'commit write main',
    'branch_created f',
    'commit write f',
    'tag_created',
    'branch_protected main',
    'request_opened main',
    'request_reviewed main',
    'request_merge_started main',
    'commit fast_forward main',
    'branch_deleted f',
    'request_merged main',
  ];
  const line = (e: { kind: string; commitKind?: string; branch?: string }) => [e.kind, e.commitKind, e.branch].filter(Boolean).join(' ');

  it('lists every change once, in order, the same in pages of two as in one page, over embedded and REST', async () => {
    for (const client of [api, new RestClient(s.url)]) {
      const paged = await allEvents(client);
      expect(paged.map(line)).toEqual(EXPECTED);
      expect(paged.map((e) => e.seq)).toEqual([...paged.map((e) => e.seq)].sort((a, b) => a - b));
      const whole = await client.listEvents({ limit: 1000 });
      expect(whole.events).toEqual(paged);
      // Nothing new: the same cursor back, and an empty page.
      expect(await client.listEvents({ cursor: whole.nextCursor })).toEqual({ events: [], nextCursor: whole.nextCursor, waitingOn: null });
    }
    const merged = (await allEvents(api)).find((e) => e.kind === 'commit' && e.commitKind === 'fast_forward');
    expect(merged?.commit).toBe((await api.getBranch({ name: 'main' })).head.id);
    await expect(api.listEvents({ cursor: '-1' })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('answers over GraphQL, and streams as server-sent events that resume from Last-Event-ID', async () => {
    const r = await gql(s.url, '{ events(cursor: "0", limit: 3) { events { seq kind branch } nextCursor } }');
    expect((r.body.data as { events: { events: { kind: string }[] } }).events.events.map((e) => e.kind)).toEqual([
      'branch_created',
      'commit',
      'commit',
    ]);
    const all = await allEvents(api);
    const third = all[2] as { seq: number };
    const controller = new AbortController();
    const res = await fetch(`${s.url}/events/stream`, { headers: { 'last-event-id': String(third.seq) }, signal: controller.signal });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const ids = (): number[] => [...text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    let wrote = false;
    while (ids().length < all.length - 3 + 1) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      // Once the stream has caught up, a new change arrives on it as it lands.
      if (!wrote && ids().length === all.length - 3) {
        wrote = true;
        await api.write({ branch: 'main', ...put('s', 1), bypassProtection: true }).catch(async () => {
          await api.unprotectBranch({ name: 'main' });
        });
      }
    }
    controller.abort();
    expect(ids()).toEqual([...all.slice(3).map((e) => e.seq), ...ids().slice(all.length - 3)]);
    expect(ids().length).toBeGreaterThan(all.length - 3);
    expect(text).toMatch(/^event: (commit|branch_unprotected)$/m);
  });
});

describe('event feed as a GraphQL subscription', () => {
  it('streams the feed from a cursor over server-sent events, and refuses a bad cursor', async () => {
    const s = await testServer();
    const api = embeddedApi(s.service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    await api.write({ branch: 'main', ...put('a', 1) });
    const controller = new AbortController();
    const res = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { events(cursor: "1") { seq kind commitKind } }' }),
      signal: controller.signal,
    });
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    let text = '';
    const got = (): { seq: number; kind: string; commitKind: string | null }[] =>
      [...text.matchAll(/^data: (.+)$/gm)].map(
        (m) => (JSON.parse(m[1] as string) as { data: { events: { seq: number; kind: string; commitKind: string | null } } }).data.events,
      );
    let wrote = false;
    while (got().length < 3) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      if (!wrote && got().length === 2) {
        wrote = true;
        await api.write({ branch: 'main', ...put('b', 1) });
      }
    }
    controller.abort();
    expect(got()).toEqual([
      { seq: 2, kind: 'commit', commitKind: 'schema' },
      { seq: 3, kind: 'commit', commitKind: 'write' },
      { seq: 4, kind: 'commit', commitKind: 'write' },
    ]);
    const bad = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { events(cursor: "x") { seq } }' }),
    });
    expect(await bad.text()).toMatch(/invalid_input/);
    await s.close();
  });
});

/** A graph on an in-memory store with its schema applied, and the feed's cursor after that. */
async function schemaOnly(clock: () => number): Promise<{ inner: MemoryStore; seen: number }> {
  const inner = new MemoryStore(clock);
  const g = await Graph.open(inner, { clock });
  await g.applySchema('main', SCHEMA);
  return { inner, seen: (await g.events({ after: 0, limit: 1000 })).next };
}

describe('event feed under races and crashes', () => {
  it('racing writers on two servers leave one event per published commit, in commit order', async () => {
    const store = new MemoryStore();
    const one = await serviceOnStore(store, { actor: 'one', shard: 'one' });
    const two = await serviceOnStore(store, { actor: 'two', shard: 'two' });
    const a = embeddedApi(one, { transport: 'embedded' });
    const b = embeddedApi(two, { transport: 'embedded' });
    await a.applySchema({ branch: 'main', schema: SCHEMA });
    await Promise.all(Array.from({ length: 16 }, (_, i) => (i % 2 === 0 ? a : b).write({ branch: 'main', ...put(`k${i}`, i) })));
    const log = (await a.log({ limit: 1000 })).commits.filter((c) => c.kind !== 'init').map((c) => c.id);
    for (const reader of [a, b]) {
      const commits = (await allEvents(reader, '0', 5)).filter((e) => e.kind === 'commit').map((e) => e.commit);
      // The log is newest first; the feed is in order.
      expect(commits).toEqual([...log].reverse());
    }
    await one.close();
    await two.close();
  });

  it('a crash at any store call of a write leaves an event exactly when its commit landed, and a retry adds exactly one', async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const clock = () => now;
    const initial = new MemoryStore(clock);
    const g = await Graph.open(initial, { clock });
    await g.applySchema('main', SCHEMA);
    const before = (await g.events({ after: 0, limit: 1000 })).events.length;
    const write = (store: FaultStore | MemoryStore) => Graph.open(store, { clock }).then((x) => x.write('main', put('a', 1).ops));
    const counter = new FaultStore(await clone(initial, clock));
    await write(counter);
    let points = 0;
    for (let k = 1; k <= counter.callCount; k++) {
      for (const crashEffect of ['before', 'after'] as const) {
        const inner = await clone(initial, clock);
        await write(new FaultStore(inner, { crashAtCall: k, crashEffect })).catch((e: unknown) =>
          expect(e).toMatchObject({ code: 'store_crashed' }),
        );
        points++;
        // Restart, once a publication's deadline has passed by the store's clock.
        now += MAX_PUBLICATION_MS + 1000;
        const g2 = await Graph.open(inner, { clock });
        const landed = (await g2.branchHead('main')).manifest.commit;
        const events = (await g2.events({ after: 0, limit: 1000 })).events;
        const commits = events.slice(before).filter((e) => e.kind === 'commit');
        expect(
          commits.map((e) => e.commit),
          `crash at ${k} (${crashEffect})`,
        ).toEqual(landed.kind === 'write' ? [landed.id] : []);
        // A retry of a write that did not land adds its one event; one that did changes nothing.
        await g2.write('main', put('a', 1).ops);
        const after = (await g2.events({ after: 0, limit: 1000 })).events.slice(before).filter((e) => e.kind === 'commit');
        expect(after).toHaveLength(1);
      }
    }
    expect(points).toBeGreaterThan(10);
  });

  it('holds readers at an event whose publication may still land, then passes over it once the deadline is over', async () => {
    let now = Date.parse('2026-12-01T00:00:00Z');
    const clock = () => now;
    const { inner, seen } = await schemaOnly(clock);
    const eventObjects = async (store: MemoryStore) =>
      (await listAll(store, 'events/')).filter((o) => /^events\/\d{12}\.json$/.test(o.key)).length;
    const initialEvents = await eventObjects(inner);
    // A writer that dies just after appending its event: the write's calls up to the event, then a crash.
    const counter = new FaultStore(await clone(inner, clock));
    await Graph.open(counter, { clock }).then((x) => x.write('main', put('a', 1).ops));
    let crashedAfterEvent = false;
    for (let k = 1; k <= counter.callCount && !crashedAfterEvent; k++) {
      const copy = await clone(inner, clock);
      await Graph.open(new FaultStore(copy, { crashAtCall: k, crashEffect: 'before' }), { clock })
        .then((x) => x.write('main', put('a', 1).ops))
        .catch(() => undefined);
      const g2 = await Graph.open(copy, { clock });
      if ((await eventObjects(copy)) === initialEvents + 1 && (await g2.branchHead('main')).manifest.commit.kind !== 'write') {
        crashedAfterEvent = true;
        // Its manifest may still land: the feed holds there, and says what it waits on and until when.
        expect(await g2.events({ after: seen, limit: 100 })).toEqual({
          events: [],
          next: seen,
          waitingOn: { seq: seen + 1, writer: null, deadline: new Date(now + MAX_PUBLICATION_MS).toISOString() },
        });
        now += MAX_PUBLICATION_MS + 1000;
        // Past the deadline it is an orphan: passed over, never delivered.
        expect(await g2.events({ after: seen, limit: 100 })).toEqual({ events: [], next: seen + 1, waitingOn: null });
        await g2.write('main', put('b', 1).ops);
        expect((await g2.events({ after: seen, limit: 100 })).events.map((e) => e.kind)).toEqual(['commit']);
        now -= MAX_PUBLICATION_MS + 1000;
      }
    }
    expect(crashedAfterEvent).toBe(true);
  });

  it('a publication that gives up before writing its manifest voids its event: readers pass it at once', async () => {
    const now = Date.parse('2026-12-01T00:00:00Z');
    const clock = () => now;
    const { inner, seen } = await schemaOnly(clock);
    const counter = new FaultStore(await clone(inner, clock));
    const opened = await Graph.open(counter, { clock });
    const openCalls = counter.callCount;
    await opened.write('main', put('a', 1).ops);
    let voided = 0;
    // Fail each call of the write in turn (later calls proceed, as after a transient error).
    for (let k = openCalls + 1; k <= counter.callCount; k++) {
      const copy = await clone(inner, clock);
      const faults = new FaultStore(copy);
      const w = await Graph.open(faults, { clock });
      faults.setSchedule({ failAtCall: k });
      const failed = await w.write('main', put('a', 1).ops).then(
        () => false,
        () => true,
      );
      await w.close();
      const g2 = await Graph.open(copy, { clock });
      const appended = (await listAll(copy, 'events/')).some((o) => o.key === `events/${String(seen + 1).padStart(12, '0')}.json`);
      if (!failed || !appended) continue;
      const page = await g2.events({ after: seen, limit: 100 });
      if ((await g2.branchHead('main')).manifest.commit.kind === 'write') continue;
      // Only the manifest's own write has an unknown outcome (its response may be what was lost): that
      // event is held to the deadline, as after a crash. Any earlier failure gave the source up.
      const manifestWrite = faults.log.find((c) => c.n === k)?.key.startsWith('manifests/') === true;
      expect(page, `failure at call ${k} (${faults.log.find((c) => c.n === k)?.key})`).toEqual({
        events: [],
        next: manifestWrite ? seen : seen + 1,
        waitingOn: manifestWrite ? expect.objectContaining({ seq: seen + 1 }) : null,
      });
      if (!manifestWrite) voided++;
      // The next write's event is read right after it.
      await g2.write('main', put('b', 1).ops);
      if (!manifestWrite) expect((await g2.events({ after: seen, limit: 100 })).events.map((e) => e.kind)).toEqual(['commit']);
    }
    expect(voided).toBeGreaterThan(0);
  });
});
