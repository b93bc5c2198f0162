/**
 * Remotes: clone, fetch, push and pull between copies of a graph, in the
 * engine (store to store), from the command line, through a server and
 * through the real S3 server. What a user relies on: a clone reads as its
 * source does; a fetch brings what changed and nothing more, and moves only
 * tracking refs; a push is fast-forward only (or under a lease), lands
 * once when two race, and obeys the destination's protection; a pull that
 * conflicts changes nothing and is settled as any merge; a sync cut at any
 * store call leaves the destination as it was or complete, and running it
 * again finishes it; GC keeps what tracking refs name.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { cloneFrom, fetchFrom, graphPeer, pushTo, type SyncPeer } from '../src/graph/sync.js';
import { allRows, embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { FaultStore } from '../src/store/fault-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll, type ObjectStore } from '../src/store/object-store.js';
import { runCli } from '../src/cli/run-cli.js';
import { RestClient } from '../src/http/rest-client.js';
import { httpPeer } from '../src/http/http-peer.js';
import { freshS3Store, s3Available, S3_SKIP_REASON } from './support/s3-env.js';
import { testServer, type TestServer } from './support/test-server.js';
import { storedText } from '../src/model/compress-stored.js';
import { encodeJson } from '../src/store/stored-json.js';
import { parseSchema } from '../src/model/schema-parser.js';
import { schemaHashOf } from '../src/model/schema.js';

/** A lineage no commit ever had: a manifest claiming it forges its history. */
const FORGED_LINEAGE = '01M00000000000000000000000';

const CTX = { transport: 'embedded' as const };
const SCHEMA = 'node P { id: string @key\n v: int? }\nedge Knows: P -> P';
let dir: string;

async function open(store: ObjectStore, actor = 'tester') {
  const service = await serviceOnStore(store, { actor, shard: actor });
  return { service, api: embeddedApi(service, CTX) };
}

/** A graph with branches, a merge, a tag, and rows still pending in the WAL. */
async function buildGraph(store: ObjectStore): Promise<void> {
  const { service, api } = await open(store, 'builder');
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  await api.write({
    branch: 'main',
    ops: Array.from({ length: 50 }, (_, i) => ({ op: 'insert' as const, table: 'P', values: { id: `p${i}`, v: i } })),
  });
  await api.createBranch({ name: 'feature/one' });
  await api.write({
    branch: 'feature/one',
    ops: [
      { op: 'update', table: 'P', values: { id: 'p1', v: 100 } },
      { op: 'insert', table: 'Knows', values: { from: 'p1', to: 'p2' } },
    ],
  });
  await api.mergeBranch({ source: 'feature/one', into: 'main' });
  await api.createTag({ name: 'v1', from: 'main' });
  await api.createBranch({ name: 'later' });
  await api.write({ branch: 'later', ops: [{ op: 'delete', table: 'P', values: { id: 'p3' } }] });
  await api.ingest({ branch: 'later', ops: [{ op: 'upsert', table: 'P', values: { id: 'pending', v: 7 } }] });
  await service.close();
}

/** What a reader sees: each branch's committed head and rows, main's history, the tags. */
async function view(store: ObjectStore, at: (branch: string) => string = (b) => b): Promise<unknown> {
  const { service, api } = await open(store, 'reader');
  const { branches } = await api.listBranches({});
  const rows: Record<string, unknown> = {};
  const heads: Record<string, string> = {};
  for (const b of branches) {
    heads[b.name] = (await api.log({ at: `${at(b.name)}~0`, limit: 1 })).commits[0]?.id ?? '';
    for (const t of ['P', 'Knows']) rows[`${b.name}/${t}`] = await allRows(api, t, `commit:${heads[b.name]}`);
  }
  const out = {
    heads,
    rows,
    log: (await api.log({ at: heads.main ? `commit:${heads.main}` : 'main', limit: 100 })).commits.map((c) => c.id),
    tags: (await api.listTags({})).tags.map((t) => [t.name, t.commit]),
  };
  await service.close();
  return out;
}

/**
 * Clone `source` into `destination` in the engine, as `branchgraph clone` does. The remote's URL is
 * where an operation would reach the source again: a directory's path, or, for a memory store only
 * the engine reaches (its peer passed by hand), a URL no store answers.
 */
async function clone(source: ObjectStore, destination: ObjectStore, width = 8) {
  const peer = Graph.attach(source, { actor: 'peer' });
  const local = Graph.attach(destination, { actor: 'cloner' });
  const url = source instanceof FsStore ? source.root : 's3://unreachable-by-operations/never';
  return cloneFrom(local, { remote: 'origin', url, peer: graphPeer(peer), actor: 'cloner', width });
}

/** The keys a reader can reach the graph through: branch records, tags, remotes and tracking refs. */
async function refs(store: ObjectStore): Promise<string[]> {
  const all = await listAll(store, '');
  return all.map((o) => o.key).filter((k) => /^(branches|tags|remotes|remote-refs)\//.test(k));
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bg-remotes-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('clone', () => {
  it('copies every branch, its history and tags; rows pending in the WAL stay where they were acknowledged', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const destination = new MemoryStore();
    const report = await clone(source, destination);
    expect(report.branches.sort()).toEqual(['feature/one', 'later', 'main']);
    expect(report.tags.fetched).toEqual(['v1']);
    expect(await view(destination)).toEqual(await view(source));
    const { service, api } = await open(destination);
    expect((await allRows(api, 'P', 'later')).map((r) => r.key)).not.toContain('pending');
    // The clone's branches are its own: it writes without touching the source's lineages.
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'mine', v: 1 } }] });
    expect((await api.listRemotes({})).remotes.map((r) => [r.name, r.branches.length])).toEqual([['origin', 3]]);
    await service.close();
    expect(await view(source)).not.toEqual(await view(destination));
  });

  it('refuses a destination that holds another graph, and changes nothing there', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const destination = new MemoryStore();
    await buildGraph(destination);
    const before = (await listAll(destination, '')).map((o) => o.key);
    await expect(clone(source, destination)).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await listAll(destination, '')).map((o) => o.key)).toEqual(before);
  });

  it('cut at any store call, leaves no graph or a whole one, and run again finishes it', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const reference = new MemoryStore();
    await clone(source, reference, 1);
    const expected = await view(reference);
    const counted = new FaultStore(new MemoryStore());
    await clone(source, counted, 1);
    const calls = counted.callCount;
    expect(calls).toBeGreaterThan(20);
    for (let at = 1; at <= calls; at++) {
      const inner = new MemoryStore();
      const crashing = new FaultStore(inner, { crashAtCall: at, crashEffect: at % 2 === 0 ? 'after' : 'before' });
      const outcome = await clone(source, crashing, 1).then(
        () => 'done',
        (e: { code?: string }) => e.code,
      );
      expect(['done', 'store_crashed']).toContain(outcome);
      // Whatever branches the cut left read whole (a store opened mid-clone starts a main of its own).
      const { service, api } = await open(inner);
      for (const b of (await api.listBranches({})).branches)
        for (const t of (await api.listTables({ at: b.name })).tables) await allRows(api, t.name, b.name);
      await service.close();
      await clone(source, inner, 1);
      expect(await view(inner), `cut at call ${at}`).toEqual(expected);
    }
  });
});

describe('fetch, push and pull between directories', () => {
  let origin: FsStore;
  let local: FsStore;
  const peer = (): SyncPeer => graphPeer(Graph.attach(origin, { actor: 'origin' }));
  const mine = () => Graph.attach(local, { actor: 'me' });

  beforeAll(async () => {
    origin = new FsStore(path.join(dir, 'origin'));
    await buildGraph(origin);
    local = new FsStore(path.join(dir, 'local'));
    await clone(origin, local);
  });

  it('fetches only what changed, moves tracking refs and no branch, and reads them as remote:origin/<branch>', async () => {
    const { service, api } = await open(origin, 'them');
    await api.write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'theirs', v: 1 } }] });
    await service.close();
    const before = await view(local);
    const r = await fetchFrom(mine(), { remote: 'origin', peer: peer() });
    expect(r.updated.map((u) => u.branch)).toEqual(['main']);
    // One commit of one row: its run, its table part, its commit index entry and its manifest.
    expect(r.transfer.manifests).toBe(1);
    expect(r.transfer.objects).toBeLessThanOrEqual(5);
    expect(await view(local)).toEqual(before);
    const l = await open(local);
    expect((await allRows(l.api, 'P', 'remote:origin/main')).map((x) => x.key)).toContain('theirs');
    await l.service.close();
    const again = await fetchFrom(mine(), { remote: 'origin', peer: peer() });
    expect(again).toMatchObject({ updated: [], transfer: { objects: 0, manifests: 0 } });
  });

  it('pulls: a conflicting merge of the tracking ref changes nothing, and with resolutions lands; then pushes fast-forward', async () => {
    const them = await open(origin, 'them');
    await them.api.write({ branch: 'main', ops: [{ op: 'update', table: 'P', values: { id: 'p5', v: -1 } }] });
    await them.service.close();
    const me = await open(local, 'me');
    await me.api.write({ branch: 'main', ops: [{ op: 'update', table: 'P', values: { id: 'p5', v: -2 } }] });
    await me.api.fetchRemote({ remote: 'origin' });
    const head = (await me.api.getBranch({ name: 'main' })).head.id;
    const conflicted = await me.api.mergeBranch({ source: 'remote:origin/main', into: 'main' });
    expect(conflicted.status).toBe('conflicts');
    expect((await me.api.getBranch({ name: 'main' })).head.id).toBe(head);
    // Refused before anything moves: pushing a branch that does not contain theirs.
    await expect(me.api.pushBranch({ remote: 'origin', branch: 'main' })).rejects.toMatchObject({ code: 'non_fast_forward' });
    const merged = await me.api.mergeBranch({ source: 'remote:origin/main', into: 'main', resolutions: { strategy: 'source-wins' } });
    expect(merged.status).toBe('success');
    const pushed = await me.api.pushBranch({ remote: 'origin', branch: 'main' });
    expect(pushed.outcome).toBe('fast_forward');
    await me.service.close();
    const o = await open(origin);
    expect((await o.api.getBranch({ name: 'main' })).head.id).toBe(pushed.to);
    expect((await allRows(o.api, 'P', 'main')).find((r) => r.key === 'p5')?.row).toMatchObject({ v: -1 });
    await o.service.close();
  });

  it('pushes a new branch, and under a lease replaces a head it does not contain, only while the head is the one named', async () => {
    const me = await open(local, 'me');
    await me.api.createBranch({ name: 'topic', from: 'main' });
    await me.api.write({ branch: 'topic', ops: [{ op: 'insert', table: 'P', values: { id: 't1', v: 1 } }] });
    expect((await me.api.pushBranch({ remote: 'origin', branch: 'topic' })).outcome).toBe('created');
    // A rewritten topic: reset back, then a different change.
    const topic = (await me.api.getBranch({ name: 'topic' })).head.id;
    await me.api.resetBranch({ name: 'topic', to: 'main', expectedHead: topic });
    await me.api.write({ branch: 'topic', ops: [{ op: 'insert', table: 'P', values: { id: 't2', v: 2 } }] });
    await expect(me.api.pushBranch({ remote: 'origin', branch: 'topic' })).rejects.toMatchObject({ code: 'non_fast_forward' });
    await expect(
      me.api.pushBranch({ remote: 'origin', branch: 'topic', forceWithLease: (await me.api.getBranch({ name: 'main' })).head.id }),
    ).rejects.toMatchObject({ code: 'head_moved' });
    const forced = await me.api.pushBranch({ remote: 'origin', branch: 'topic', forceWithLease: topic });
    expect(forced.outcome).toBe('forced');
    await me.service.close();
  });

  it('two racing pushes: one lands, the other is non_fast_forward, and the remote holds the winner', async () => {
    const a = new FsStore(path.join(dir, 'racer-a'));
    const b = new FsStore(path.join(dir, 'racer-b'));
    await clone(origin, a);
    await clone(origin, b);
    for (const [store, id] of [
      [a, 'from-a'],
      [b, 'from-b'],
    ] as const) {
      const s = await open(store);
      await s.api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id, v: 1 } }] });
      await s.service.close();
    }
    const results = await Promise.allSettled(
      [a, b].map((store) =>
        pushTo(Graph.attach(store, { actor: 'racer' }), { remote: 'origin', peer: peer(), branch: 'main', actor: 'racer' }),
      ),
    );
    const landed = results.filter((r) => r.status === 'fulfilled');
    expect(landed).toHaveLength(1);
    expect(results.find((r) => r.status === 'rejected')).toMatchObject({ reason: { code: 'non_fast_forward' } });
    const o = await open(origin);
    expect((await o.api.getBranch({ name: 'main' })).head.id).toBe((landed[0] as PromiseFulfilledResult<{ to: string }>).value.to);
    await o.service.close();
  });

  it('refuses to push to a protected branch, as a direct write there is refused, and changes nothing', async () => {
    const o = await open(origin, 'admin');
    await o.api.protectBranch({ name: 'main' });
    await o.service.close();
    const me = await open(local, 'me');
    await me.api.fetchRemote({ remote: 'origin' });
    await me.api.mergeBranch({ source: 'remote:origin/main', into: 'main', resolutions: { strategy: 'source-wins' } });
    await me.api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'blocked', v: 1 } }] });
    const before = await refs(origin);
    await expect(me.api.pushBranch({ remote: 'origin', branch: 'main' })).rejects.toMatchObject({ code: 'branch_protected' });
    expect(await refs(origin)).toEqual(before);
    await me.service.close();
  });

  it('keeps what tracking refs name through GC, and forgets pruned ones', async () => {
    const them = await open(origin, 'them');
    await them.api.createBranch({ name: 'short-lived' });
    await them.api.write({ branch: 'short-lived', ops: [{ op: 'insert', table: 'P', values: { id: 'sl', v: 1 } }] });
    await them.service.close();
    const me = await open(local, 'me');
    await me.api.fetchRemote({ remote: 'origin' });
    // Everything is a day old to GC: only reachability keeps an object.
    await me.service.graph.gc({ now: Date.now() + 86_400_000 });
    expect((await allRows(me.api, 'P', 'remote:origin/short-lived')).map((r) => r.key)).toContain('sl');
    await me.service.close();
    const t = await open(origin, 'them');
    await t.api.deleteBranch({ name: 'short-lived' });
    await t.service.close();
    const l = await open(local, 'me');
    expect((await l.api.fetchRemote({ remote: 'origin', prune: true })).pruned).toEqual(['short-lived']);
    await expect(l.api.rows({ table: 'P', at: 'remote:origin/short-lived' })).rejects.toMatchObject({ code: 'not_found' });
    await l.service.close();
  });

  it('a fetch or push cut at any store call leaves the destination as it was or complete, and run again finishes it', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const base = new MemoryStore();
    await clone(source, base);
    const s = await open(source, 'them');
    await s.api.write({
      branch: 'main',
      ops: Array.from({ length: 5 }, (_, i) => ({ op: 'upsert' as const, table: 'P', values: { id: `n${i}`, v: i } })),
    });
    await s.api.createBranch({ name: 'fresh' });
    await s.service.close();
    const copy = async (from: MemoryStore): Promise<MemoryStore> => {
      const to = new MemoryStore();
      for (const o of await listAll(from, '')) await to.putIfAbsent(o.key, await from.get(o.key));
      return to;
    };
    // Fetch into a copy of the clone, cut at each call of the destination.
    const counted = new FaultStore(await copy(base));
    await fetchFrom(Graph.attach(counted, { actor: 'me' }), {
      remote: 'origin',
      peer: graphPeer(Graph.attach(source, { actor: 's' })),
      width: 1,
    });
    const expected = await view(counted.wrapped, (b) => b);
    for (let at = 1; at <= counted.callCount; at++) {
      const inner = await copy(base);
      const beforeRefs = await refs(inner);
      const crashing = new FaultStore(inner, { crashAtCall: at, crashEffect: at % 2 === 0 ? 'after' : 'before' });
      const outcome = await fetchFrom(Graph.attach(crashing, { actor: 'me' }), {
        remote: 'origin',
        peer: graphPeer(Graph.attach(source, { actor: 's' })),
        width: 1,
      }).then(
        () => 'done',
        (e: { code?: string }) => e.code,
      );
      expect(['done', 'store_crashed']).toContain(outcome);
      if (outcome !== 'done') {
        // Tracking refs move only after every object is here; each one there reads whole.
        const me = await open(inner);
        for (const t of (await me.api.listRemotes({})).remotes[0]?.branches ?? []) await allRows(me.api, 'P', `remote:origin/${t.branch}`);
        await me.service.close();
        expect((await refs(inner)).filter((k) => !beforeRefs.includes(k)).every((k) => k.startsWith('remote-refs/'))).toBe(true);
      }
      await fetchFrom(Graph.attach(inner, { actor: 'me' }), { remote: 'origin', peer: graphPeer(Graph.attach(source, { actor: 's' })) });
      expect(await view(inner), `fetch cut at call ${at}`).toEqual(expected);
    }
    // Rows pending in the destination's WAL are acknowledged there: a push that does not hold them
    // commits them and is refused, and the next fetch brings them.
    const me = await open(base, 'me');
    await me.api.write({ branch: 'later', ops: [{ op: 'upsert', table: 'P', values: { id: 'pushed', v: 1 } }] });
    await me.api.createBranch({ name: 'topic', from: 'main' });
    await me.api.write({ branch: 'topic', ops: [{ op: 'upsert', table: 'P', values: { id: 'topic1', v: 1 } }] });
    await me.service.close();
    const sourcePeer = () => graphPeer(Graph.attach(source, { actor: 'them' }));
    await expect(
      pushTo(Graph.attach(base, { actor: 'me' }), { remote: 'origin', peer: sourcePeer(), branch: 'later', actor: 'me' }),
    ).rejects.toMatchObject({
      code: 'non_fast_forward',
    });
    await fetchFrom(Graph.attach(base, { actor: 'me' }), { remote: 'origin', peer: sourcePeer() });
    const fetched = await open(base, 'me');
    expect((await allRows(fetched.api, 'P', 'remote:origin/later')).map((r) => r.key)).toContain('pending');
    await fetched.service.close();
    // Push from the clone into a copy of the source, cut at each call of the destination: a branch
    // created there, then moved on by a second push.
    await pushTo(Graph.attach(base, { actor: 'me' }), { remote: 'origin', peer: sourcePeer(), branch: 'topic', actor: 'me' });
    const again = await open(base, 'me');
    await again.api.write({ branch: 'topic', ops: [{ op: 'upsert', table: 'P', values: { id: 'topic2', v: 2 } }] });
    await again.service.close();
    const pushCounted = new FaultStore(await copy(source));
    const pushed = await pushTo(Graph.attach(base, { actor: 'me' }), {
      remote: 'origin',
      peer: graphPeer(Graph.attach(pushCounted, { actor: 'them' })),
      branch: 'topic',
      actor: 'me',
      width: 1,
    });
    expect(pushed.outcome).toBe('fast_forward');
    for (let at = 1; at <= pushCounted.callCount; at++) {
      const inner = await copy(source);
      const crashing = new FaultStore(inner, { crashAtCall: at, crashEffect: at % 2 === 0 ? 'after' : 'before' });
      const push = (store: ObjectStore) =>
        pushTo(Graph.attach(base, { actor: 'me' }), {
          remote: 'origin',
          peer: graphPeer(Graph.attach(store, { actor: 'them' })),
          branch: 'topic',
          actor: 'me',
          width: 1,
        });
      const outcome = await push(crashing).then(
        () => 'done',
        (e: { code?: string }) => e.code,
      );
      expect(['done', 'store_crashed']).toContain(outcome);
      const t = await open(inner, 'them');
      const head = (await t.api.getBranch({ name: 'topic' })).head.id;
      // The branch is where it was, or where the push put it; never anywhere else.
      expect([pushed.from, pushed.to]).toContain(head);
      await allRows(t.api, 'P', 'topic');
      await t.service.close();
      if (head !== pushed.to) await push(inner);
      const after = await open(inner, 'them');
      expect((await after.api.getBranch({ name: 'topic' })).head.id, `push cut at call ${at}`).toBe(pushed.to);
      await after.service.close();
    }
  }, 120_000);
});

describe('from the command line, directory to directory', () => {
  it('clones, pushes, fetches and pulls, exiting 3 on a conflicting pull with nothing changed', async () => {
    const a = path.join(dir, 'cli-a');
    const b = path.join(dir, 'cli-b');
    await buildGraph(new FsStore(a));
    const run = async (...args: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(['--json', ...args], {
        stdout: (t) => out.push(t),
        stderr: (t) => err.push(t),
        stdoutStream: process.stdout,
      });
      return { code, out: out.join(''), err: err.join('') };
    };
    const cloned = await run('clone', a, b);
    expect(cloned.code, cloned.err).toBe(0);
    expect(JSON.parse(cloned.out)).toMatchObject({ remote: 'origin', tags: { fetched: ['v1'] } });
    expect(await view(new FsStore(b))).toEqual(await view(new FsStore(a)));
    const onA = await open(new FsStore(a), 'them');
    await onA.api.write({ branch: 'main', ops: [{ op: 'update', table: 'P', values: { id: 'p9', v: 1 } }] });
    await onA.service.close();
    const onB = await open(new FsStore(b), 'me');
    await onB.api.write({ branch: 'main', ops: [{ op: 'update', table: 'P', values: { id: 'p9', v: 2 } }] });
    const head = (await onB.api.getBranch({ name: 'main' })).head.id;
    await onB.service.close();
    const pulled = await run('--store', `file://${b}`, 'pull', 'origin', 'main');
    expect(pulled.code).toBe(3);
    expect(JSON.parse(pulled.out)).toMatchObject({ status: 'conflicts' });
    const still = await open(new FsStore(b));
    expect((await still.api.getBranch({ name: 'main' })).head.id).toBe(head);
    await still.service.close();
    const resolved = await run('--store', `file://${b}`, 'pull', 'origin', 'main', '--strategy', 'target-wins');
    expect(resolved.code, resolved.err).toBe(0);
    const push = await run('--store', `file://${b}`, 'push', 'origin', 'main');
    expect(push.code, push.err).toBe(0);
    expect(JSON.parse(push.out)).toMatchObject({ outcome: 'fast_forward' });
    const listed = await run('--store', `file://${b}`, 'remote', 'list');
    expect(JSON.parse(listed.out)[0]).toMatchObject({ name: 'origin', url: a });
  });
});

describe('through a server', () => {
  let server: TestServer;
  let other: TestServer;
  beforeAll(async () => {
    server = await testServer({ tokens: 'admin:admin-token-1,write:write-token-1' });
    other = await testServer();
  });
  afterAll(async () => {
    await server?.close();
    await other?.close();
  });
  const stored = async (s: TestServer) => {
    await s.service.idle();
    return (await listAll(s.store, '')).map((o) => o.key).join('\n');
  };

  it('a directory pushes into an empty server, clones it back, and the server fetches and pushes a server remote', async () => {
    const laptop = new MemoryStore();
    await buildGraph(laptop);
    const l = await open(laptop, 'me');
    await l.api.setRemote({ name: 'hub', url: server.url });
    process.env.BRANCHGRAPH_REMOTE_TOKEN_HUB = 'admin-token-1';
    l.service.httpPeers = httpPeer;
    // A new server's main holds only its initial commit: the first push replaces it.
    expect((await l.api.pushBranch({ remote: 'hub', branch: 'main' })).outcome).toBe('fast_forward');
    expect((await l.api.pushBranch({ remote: 'hub', branch: 'feature/one' })).outcome).toBe('created');
    const events = (await new RestClient(server.url, 'admin-token-1').listEvents({})).events.map((e) => e.kind);
    expect(events).toContain('branch_reset');
    expect(events).toContain('branch_created');
    // A scoped or read-only token cannot push: refused before anything is stored.
    process.env.BRANCHGRAPH_REMOTE_TOKEN_HUB = 'write-token-1';
    await l.api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'w', v: 1 } }] });
    expect((await l.api.pushBranch({ remote: 'hub', branch: 'main' })).outcome).toBe('fast_forward');
    await l.service.close();

    const back = new MemoryStore();
    const cloned = await cloneFrom(Graph.attach(back, { actor: 'me' }), {
      remote: 'origin',
      url: server.url,
      peer: httpPeer({ url: server.url, token: 'admin-token-1' }),
      actor: 'me',
    });
    expect(cloned.branches.sort()).toEqual(['feature/one', 'main']);
    const expected = await view(laptop);
    const got = (await view(back)) as { rows: Record<string, unknown> };
    expect(got.rows['main/P']).toEqual((expected as { rows: Record<string, unknown> }).rows['main/P']);

    // Server to server: the other server adds this one as a remote, fetches and pushes through its own API.
    process.env.BRANCHGRAPH_REMOTE_TOKEN_UP = 'admin-token-1';
    const api = new RestClient(other.url);
    await api.setRemote({ name: 'up', url: server.url });
    const fetched = await api.fetchRemote({ remote: 'up' });
    expect(fetched.updated.map((u) => u.branch).sort()).toEqual(['feature/one', 'main']);
    expect((await api.rows({ table: 'P', at: 'remote:up/main', limit: 1000 })).items.length).toBeGreaterThan(40);
    // Its own main holds only its initial commit: it takes the fetched one's place.
    await api.resetBranch({ name: 'main', to: 'remote:up/main', expectedHead: (await api.getBranch({ name: 'main' })).head.id });
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'from-other', v: 1 } }] });
    expect((await api.pushBranch({ remote: 'up', branch: 'main' })).outcome).toBe('fast_forward');
    expect((await new RestClient(server.url, 'admin-token-1').getRow({ table: 'P', key: 'from-other' })).row).toMatchObject({ v: 1 });
    delete process.env.BRANCHGRAPH_REMOTE_TOKEN_HUB;
    delete process.env.BRANCHGRAPH_REMOTE_TOKEN_UP;
  });

  it('answers a fetch or push to a remote no one answers as remote_unreachable (424), changing nothing', async () => {
    const api = new RestClient(other.url);
    await api.setRemote({ name: 'gone', url: 'http://127.0.0.1:1' });
    const before = await stored(other);
    for (const call of [() => api.fetchRemote({ remote: 'gone' }), () => api.pushBranch({ remote: 'gone', branch: 'main' })])
      await expect(call()).rejects.toMatchObject({ code: 'remote_unreachable', retryable: true, details: { status: 424 } });
    expect(await stored(other)).toEqual(before);
    await api.deleteRemote({ name: 'gone' });
  });

  it('regression: a pack asked for a version no lineage has is not_found at once, not a walk of a billion versions', async () => {
    const res = await fetch(`${server.url}/sync/pack`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token-1', 'content-type': 'application/json' },
      body: JSON.stringify({ wants: [{ lineage: 'main', version: 1_000_000_000 }], haves: [{ lineage: 'x', version: 1_000_000_000 }] }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('not_found');
  });

  it('refuses hostile pushes whole, storing nothing', async () => {
    const local = new MemoryStore();
    await clone(new MemoryStore(), local).catch(() => undefined);
    const g = await open(local, 'me');
    await g.api.applySchema({ branch: 'main', schema: SCHEMA });
    await g.api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'h', v: 1 } }] });
    const head = (await g.api.getBranch({ name: 'main' })).head.id;
    await g.service.close();
    const source = Graph.attach(local, { actor: 'me' });
    const ours = await source.branchHead('main');
    const plan = await source.planTransfer({ wants: [ours.ref], haves: [], holds: async () => false });
    const objects = new Map<string, Uint8Array>();
    for (const k of [...plan.content, ...plan.manifests.map((m) => `manifests/${m.lineage}/${String(m.version).padStart(12, '0')}.json`)])
      objects.set(k, await local.get(k));
    const frames = (m: Map<string, Uint8Array>): Buffer =>
      Buffer.concat(
        [...m].flatMap(([key, bytes]) => [
          Buffer.from(`${JSON.stringify({ key, size: bytes.byteLength, level: key.startsWith('manifests/') ? 1 : 0 })}\n`),
          Buffer.from(bytes),
        ]),
      );
    const push = async (m: Map<string, Uint8Array>, to = head) => {
      const res = await fetch(`${server.url}/sync/push?branch=hostile&to=${to}`, {
        method: 'POST',
        headers: { authorization: 'Bearer admin-token-1', 'content-type': 'application/octet-stream' },
        body: new Uint8Array(frames(m)),
      });
      return { status: res.status, body: (await res.json()) as { error?: { code: string } } };
    };
    const edit = (change: (m: Map<string, Uint8Array>) => void) => {
      const m = new Map(objects);
      change(m);
      return m;
    };
    const runKey = plan.content.find((k) => k.startsWith('runs/')) as string;
    // The pushed head's manifest.
    const manifestKey = `manifests/${ours.ref.lineage}/${String(ours.ref.version).padStart(12, '0')}.json`;
    const manifest = JSON.parse(storedText(objects.get(manifestKey) as Uint8Array, manifestKey)) as {
      ancestry: { e?: Record<string, number> };
    };
    const cases: [string, Map<string, Uint8Array>, string?][] = [
      ['a corrupt object', edit((m) => m.set(manifestKey, Buffer.from('{"format": 99}')))],
      ['a wrong checksum', edit((m) => m.set(runKey, Buffer.concat([Buffer.from(m.get(runKey) as Uint8Array), Buffer.from(' ')])))],
      ['a head naming missing objects', edit((m) => m.delete(runKey))],
      ['a key outside the graph', edit((m) => m.set('../escape.json', Buffer.from('{}')))],
      ['a ref among the objects', edit((m) => m.set('branches/main/00000099.json', Buffer.from('{}')))],
      [
        'a forged parent chain',
        edit((m) =>
          m.set(
            manifestKey,
            encodeJson({ ...manifest, ancestry: { ...manifest.ancestry, e: { ...manifest.ancestry.e, [FORGED_LINEAGE]: 7 } } }),
          ),
        ),
      ],
      ['a commit neither pushed nor held', objects, '0'.repeat(26)],
      [
        'rows that break the schema the head names',
        edit((m) => {
          const loose = parseSchema(SCHEMA.replace('v: int?', 'v: string'));
          const hash = schemaHashOf(loose);
          m.set(`schemas/${hash}.json`, encodeJson(loose));
          m.set(manifestKey, encodeJson({ ...manifest, schema: hash, schemaDoc: loose }));
        }),
      ],
    ];
    for (const [what, m, to] of cases) {
      const before = await stored(server);
      const r = await push(m, to);
      expect(r.status, what).toBeGreaterThanOrEqual(400);
      expect(r.status, what).toBeLessThan(500);
      expect(r.body.error?.code, what).toBe('invalid_input');
      expect(await stored(server), what).toEqual(before);
    }
    // Past the documented limit, refused before the object is read.
    const huge = await fetch(`${server.url}/sync/push?branch=hostile&to=${head}`, {
      method: 'POST',
      headers: { authorization: 'Bearer admin-token-1' },
      body: `${JSON.stringify({ key: 'runs/P/x.arrow', size: 2 ** 40, level: 0 })}\n`,
    });
    expect(huge.status).toBe(413);
    // The same pack, whole and honest, lands.
    const ok = await push(objects);
    expect(ok.status).toBe(200);
    expect((await new RestClient(server.url, 'admin-token-1').getBranch({ name: 'hostile' })).head.id).toBe(head);
  });
});

describe.skipIf(!s3Available())('through the real S3 server', () => {
  it('clones a directory into a bucket and back, and pushes and fetches between them', async () => {
    if (!s3Available()) return void console.log(S3_SKIP_REASON);
    const source = new FsStore(path.join(dir, 's3-source'));
    await buildGraph(source);
    const bucket = await freshS3Store('remotes');
    await clone(source, bucket);
    const back = new FsStore(path.join(dir, 's3-back'));
    await clone(bucket, back);
    expect(await view(back)).toEqual(await view(source));
    const b = await open(back, 'me');
    await b.api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'via-s3', v: 1 } }] });
    const pushed = await pushTo(b.service.graph, {
      remote: 'origin',
      peer: graphPeer(Graph.attach(bucket, { actor: 'bucket' })),
      branch: 'main',
      actor: 'me',
    });
    expect(pushed.outcome).toBe('fast_forward');
    await b.service.close();
    const s = await open(source, 'them');
    await s.api.setRemote({ name: 'bucket', url: 'mem:unused' });
    await s.service.close();
    const fetched = await fetchFrom(Graph.attach(source, { actor: 'them' }), {
      remote: 'bucket',
      peer: graphPeer(Graph.attach(bucket, { actor: 'bucket' })),
    });
    expect(fetched.updated.map((u) => u.branch)).toContain('main');
    const t = await open(source);
    expect((await allRows(t.api, 'P', 'remote:bucket/main')).map((r) => r.key)).toContain('via-s3');
    await t.service.close();
    await bucket.close?.();
  });
});
