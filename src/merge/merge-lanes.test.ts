/**
 * Many merges into one branch from one process (graph/publication-lanes.ts): each is planned on
 * the manifest the one before it built and lands after it. These tests hold what callers rely
 * on: every merge lands as its own commit with the right parents, nobody sees contention, event
 * order is commit order, and a manifest that fails to land takes nobody's answer with it.
 */
import { describe, expect, it } from 'vitest';
import { merge, mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { Graph } from '../graph/graph.js';
import type { Manifest, ManifestRef } from '../graph/manifest.js';
import type { WriteOp } from '../graph/write-batch.js';
import { BranchgraphError } from '../model/errors.js';
import { LatencyStore } from '../store/latency-store.js';
import { MemoryStore } from '../store/memory-store.js';
import type { ObjectStore } from '../store/object-store.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import { WalWriter } from '../wal/wal-writer.js';
import { WaveStore } from '../../test/support/wave-store.js';
import { mergeBranches, mergeSpec } from './merge.js';
import { keys } from '../graph/keys.js';
import { refOf } from '../graph/manifest.js';
import { MAX_PUBLISH_ATTEMPTS } from '../graph/change.js';
import { storedText } from '../model/compress-stored.js';
import { listAll } from '../store/object-store.js';

const upd = (id: string, values: Record<string, unknown>) => ({ op: 'update' as const, table: 'Person', values: { id, ...values } });

/** main with one person, `n` branches each adding its own person (or changing `shared` when given), and main moved on. */
async function branches(store: ObjectStore, n: number, change?: (i: number) => WriteOp[]): Promise<void> {
  const g = await peopleGraph(store);
  await mustWrite(g, 'main', [person('shared', { age: 1 })]);
  for (let i = 0; i < n; i++) {
    await g.createBranch(`b${i}`, { branch: 'main' });
    await mustWrite(g, `b${i}`, change?.(i) ?? [person(`p${i}`)]);
  }
  await mustWrite(g, 'main', [{ op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } }]);
}

/** A graph on `store` answering in waves (test/support/wave-store.ts) that knows main and the first `n` branches' heads, as a busy server does. */
async function warmInWaves(store: ObjectStore, n: number): Promise<{ waves: WaveStore; g: Graph }> {
  const waves = new WaveStore(store);
  const g = await Graph.open(waves, { actor: 'test' });
  for (let i = 0; i < n; i++) await g.branchHead(`b${i}`);
  await g.branchHead('main');
  return { waves, g };
}

/** Each version in `line` (newest first) names the one after it as its first parent. */
function expectOneChain(line: Manifest[]): void {
  for (const [i, m] of line.entries()) if (i + 1 < line.length) expect(m.commit.parentIds[0]).toBe(line[i + 1]?.commit.id);
}

/** main's commit events after `after` are exactly those of `newest` (newest first), oldest first. */
async function expectEventsInCommitOrder(g: Graph, a: { after: number; newest: Manifest[] }): Promise<void> {
  const events = (await g.events({ after: a.after, limit: 1000 })).events.filter((e) => e.kind === 'commit' && e.branch === 'main');
  expect(events.map((e) => e.commit)).toEqual(a.newest.map((m) => m.commit.id).reverse());
}

/** main's first-parent chain (or the one below `from`), newest first, down to the first commit. */
async function chain(g: Graph, from?: ManifestRef): Promise<Manifest[]> {
  const out: Manifest[] = [];
  const start = from === undefined ? await g.branchHead('main') : await g.snapshotAt(from);
  for (let m: Manifest | undefined = start.manifest; m !== undefined; ) {
    out.push(m);
    const parent: ManifestRef | undefined = m.commit.parents[0];
    m = parent === undefined ? undefined : await g.ports.manifests.readManifest(parent);
  }
  return out;
}

/** Fails the first manifest PUT whose key starts with one of `prefixes` (as a store that errs). */
class FailFirstManifest extends StoreWrapper {
  failed: string | undefined;
  constructor(
    inner: ObjectStore,
    private readonly prefix: () => string | undefined,
  ) {
    super(inner);
  }
  protected around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const p = this.prefix();
    if (this.failed === undefined && p !== undefined && ctx.op === 'putIfAbsent' && ctx.key.startsWith(p)) {
      this.failed = ctx.key;
      return Promise.reject(new BranchgraphError('store_error', 'the store refused the manifest'));
    }
    return call();
  }
}

describe('merges into one branch from one process', () => {
  it('land each as its own two-parent commit, in one chain, with no contention, events in commit order', async () => {
    const mem = new MemoryStore();
    await branches(mem, 8);
    const g = await Graph.open(new LatencyStore(mem, 3), { actor: 'test' });
    const before = (await g.events({ after: 0, limit: 1000 })).next;
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => merge(g, `b${i}`)));
    for (const r of results) expect(r).toMatchObject({ status: 'success', outcome: 'merged', metrics: { attempts: 1 } });
    const commits = results.map((r) => (r.status === 'success' ? r.commit?.id : undefined));
    const fresh = await Graph.open(mem);
    const line = await chain(fresh);
    // Newest first: the eight merges, then main's own history; each version's parent is the one below.
    expect(new Set(line.slice(0, 8).map((m) => m.commit.id))).toEqual(new Set(commits));
    expectOneChain(line);
    for (const [i, r] of results.entries()) {
      const m = line.find((x) => x.commit.id === commits[i]) as Manifest;
      expect(m.commit.parentIds[1]).toBe(r.sourceHead);
    }
    expect(Object.keys(await rowsOf(fresh, 'main', 'Person')).sort()).toEqual(
      [...Array.from({ length: 8 }, (_, i) => `p${i}`), 'shared'].sort(),
    );
    await expectEventsInCommitOrder(fresh, { after: before, newest: line.slice(0, 8) });
  });

  it('overlap: each merge writes its commit and event while the one before it publishes, one round trip per merge', async () => {
    const mem = new MemoryStore();
    await branches(mem, 5);
    const { waves, g } = await warmInWaves(mem, 5);
    const one = await waves.waves(() => merge(g, 'b0'));
    const four = await waves.waves(() => Promise.all([1, 2, 3, 4].map((i) => merge(g, `b${i}`))));
    for (const r of [one.value, ...four.value]) expect(r).toMatchObject({ status: 'success', outcome: 'merged', metrics: { attempts: 1 } });
    // The later three each wait only for the manifest below theirs: one round trip each. Waiting
    // for it before writing their commit and event would cost two.
    expect(four.waves).toBeLessThanOrEqual(one.waves + 3);
  });

  it('plan again when the manifest they were planned on does not land: only its own caller sees the failure', async () => {
    const mem = new MemoryStore();
    await branches(mem, 4);
    let lineage: string | undefined;
    const failing = new FailFirstManifest(mem, () => lineage);
    const g = await Graph.open(new LatencyStore(failing, 3), { actor: 'test' });
    const head = (await g.branchHead('main')).manifest;
    lineage = `manifests/${head.lineage}/`;
    const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => merge(g, `b${i}`)));
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(1);
    expect((refused[0] as PromiseRejectedResult).reason).toMatchObject({ code: 'store_error' });
    const landed = results.flatMap((r) => (r.status === 'fulfilled' && r.value.status === 'success' ? [r.value] : []));
    expect(landed).toHaveLength(3);
    const line = await chain(await Graph.open(mem));
    expect(line[0]?.version).toBe(head.version + 3);
    expectOneChain(line);
    expect(new Set(line.slice(0, 3).map((m) => m.commit.id))).toEqual(new Set(landed.map((r) => r.commit?.id)));
  });

  it('never report conflicts with a change that did not land', async () => {
    const mem = new MemoryStore();
    // Both branches set the same property to different values: whichever lands first conflicts with the other.
    await branches(mem, 2, (i) => [upd('shared', { age: 10 + i })]);
    let lineage: string | undefined;
    const g = await Graph.open(new LatencyStore(new FailFirstManifest(mem, () => lineage), 3), { actor: 'test' });
    lineage = `manifests/${(await g.branchHead('main')).manifest.lineage}/`;
    const [a, b] = await Promise.allSettled([merge(g, 'b0'), merge(g, 'b1')]);
    // The first to publish fails at the store; the other was planned on it, saw a conflict, and
    // must have planned again on the stored head instead of reporting it.
    const outcomes = [a, b].map((r) => (r.status === 'rejected' ? 'error' : r.value.status));
    expect(outcomes.sort()).toEqual(['error', 'success']);
    const age = (await rowsOf(await Graph.open(mem), 'main', 'Person')).shared?.age;
    expect([10, 11]).toContain(age);
  });

  it('a keyed merge takes its turn among writes queued in the lane: planned on a stored head, it loses no race', async () => {
    const mem = new MemoryStore();
    await branches(mem, 1);
    const { waves, g } = await warmInWaves(mem, 1);
    const writes = (from: number) => [0, 1, 2].map((i) => g.write('main', [person(`w${from + i}`)]));
    const idempotency = { keyHash: 'a'.repeat(64), fingerprint: 'f' };
    const { value } = await waves.waves(() =>
      Promise.all([...writes(0), mergeBranches(g.ports, mergeSpec({ source: 'b0' }), { idempotency }), ...writes(3)]),
    );
    expect(value[3]).toMatchObject({ status: 'success', outcome: 'merged', metrics: { attempts: 1 } });
    const line = await chain(await Graph.open(mem));
    const merged = line.find((m) => m.commit.kind === 'merge');
    expect(merged?.commit.idempotency).toEqual(idempotency);
    expectOneChain(line);
  });

  it('on a branch that ingests, take turns without planning on unlanded manifests, and keep every pending row', async () => {
    const mem = new MemoryStore();
    await branches(mem, 4);
    const g = await Graph.open(new LatencyStore(mem, 3), { actor: 'test' });
    const wal = new WalWriter(g.ports, { shard: 's1' });
    await wal.ingest('main', [person('ingested-1')]);
    const results = await Promise.all([...[0, 1, 2, 3].map((i) => merge(g, `b${i}`)), wal.ingest('main', [person('ingested-2')])]);
    for (const r of results.slice(0, 4)) expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
    const fresh = await Graph.open(mem);
    const line = await chain(fresh);
    expectOneChain(line);
    expect(Object.keys(await rowsOf(fresh, 'main', 'Person')).sort()).toEqual(
      ['ingested-1', 'ingested-2', 'p0', 'p1', 'p2', 'p3', 'shared'].sort(),
    );
  });

  it('keep every merge exact when another process publishes to the branch meanwhile', async () => {
    const mem = new MemoryStore();
    await branches(mem, 6);
    const here = await Graph.open(new LatencyStore(mem, 2), { actor: 'here' });
    const there = await Graph.open(new LatencyStore(mem, 2), { actor: 'there' });
    const results = await Promise.all([
      ...[0, 1, 2].map((i) => merge(here, `b${i}`)),
      ...[3, 4, 5].map((i) => merge(there, `b${i}`)),
      ...[0, 1, 2].map((i) => there.write('main', [person(`w${i}`)])),
    ]);
    for (const r of results.slice(0, 6)) expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
    const fresh = await Graph.open(mem);
    const line = await chain(fresh);
    expectOneChain(line);
    const people = Object.keys(await rowsOf(fresh, 'main', 'Person')).sort();
    expect(people).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'shared', 'w0', 'w1', 'w2']);
  });

  describe('in batches', () => {
    /** Every batch's first version's object in `store`: the versions it holds (manifest.ts, format 4). */
    async function batchesIn(store: MemoryStore): Promise<{ key: string; lineage: string; first: number; last: number }[]> {
      const out: { key: string; lineage: string; first: number; last: number }[] = [];
      for (const o of await listAll(store, 'manifests/')) {
        const stored = JSON.parse(storedText(await store.get(o.key))) as { lineage: string; version: number; later?: unknown[] };
        if (stored.later !== undefined)
          out.push({ key: o.key, lineage: stored.lineage, first: stored.version, last: stored.version + stored.later.length });
      }
      return out;
    }

    it('publish the merges ready while the one below them lands as one batch: round trips stay flat as merges grow', async () => {
      const mem = new MemoryStore();
      await branches(mem, 9);
      const { waves, g } = await warmInWaves(mem, 9);
      const before = (await g.events({ after: 0, limit: 1000 })).next;
      const one = await waves.waves(() => merge(g, 'b0'));
      const eight = await waves.waves(() => Promise.all([1, 2, 3, 4, 5, 6, 7, 8].map((i) => merge(g, `b${i}`))));
      for (const r of [one.value, ...eight.value])
        expect(r).toMatchObject({ status: 'success', outcome: 'merged', metrics: { attempts: 1 } });
      // One merge leads alone (nothing else is ready); the other seven land in one batch a round trip later.
      expect(eight.waves).toBeLessThanOrEqual(one.waves + 1);
      await g.idle();
      const [batch] = await batchesIn(mem);
      expect(batch && batch.last - batch.first + 1).toBe(7);
      // Once idle, every version of the batch is also written at its own key.
      for (let v = batch?.first ?? 0; v <= (batch?.last ?? -1); v++)
        expect(await mem.head(keys.manifest(batch?.lineage ?? '', v))).toBeDefined();
      // Each merge is still its own version and commit, in one chain, with its event in commit order.
      const fresh = await Graph.open(mem);
      const line = await chain(fresh);
      expect(new Set(line.slice(0, 9).map((m) => m.commit.id))).toEqual(
        new Set([one.value, ...eight.value].map((r) => r.status === 'success' && r.commit?.id)),
      );
      expectOneChain(line);
      await expectEventsInCommitOrder(fresh, { after: before, newest: line.slice(0, 9) });
    });

    it('are read whole from the batch before their versions are written on their own (a crash in between)', async () => {
      const mem = new MemoryStore();
      await branches(mem, 6);
      const { waves, g } = await warmInWaves(mem, 6);
      const head = (await g.branchHead('main')).manifest;
      await waves.waves(() => Promise.all([0, 1, 2, 3, 4, 5].map((i) => merge(g, `b${i}`))));
      await g.idle();
      const whole = await Graph.open(mem);
      const expected = await chain(whole);
      // As a crash right after the batch landed leaves it: its later versions only in its first's object.
      const [batch] = await batchesIn(mem);
      if (batch === undefined) throw new Error('no batch was published');
      await mem.deleteMany(Array.from({ length: batch.last - batch.first }, (_, i) => keys.manifest(batch.lineage, batch.first + 1 + i)));
      // A process that knew an older head, and one that knows nothing, both find the batch's last version.
      const knew = await Graph.open(mem);
      expect((await knew.snapshotAt(refOf(head))).manifest.version).toBe(head.version);
      for (const fresh of [knew, await Graph.open(mem)]) {
        expect((await fresh.branchHead('main')).manifest.version).toBe(head.version + 6);
        expect((await chain(fresh)).map((m) => m.commit.id)).toEqual(expected.map((m) => m.commit.id));
        for (let v = batch.first; v <= batch.last; v++) expect(await fresh.holds({ lineage: batch.lineage, version: v })).toBe(true);
        expect(await fresh.holds({ lineage: batch.lineage, version: batch.last + 1 })).toBe(false);
        expect(Object.keys(await rowsOf(fresh, 'main', 'Person')).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'shared']);
      }
      // A copy to another store writes each version as its own object, the bytes it is written as here.
      const fresh = await Graph.open(mem);
      const target = await Graph.open(new MemoryStore());
      const plan = await fresh.planTransfer({ wants: [refOf(expected[0] as Manifest)], haves: [], holds: (r) => target.holds(r) });
      await fresh.sendTransfer({ plan, destination: target.store });
      for (let v = batch.first + 1; v <= batch.last; v++) expect(await target.store.head(keys.manifest(batch.lineage, v))).toBeDefined();
      const copied = await chain(await Graph.open(target.store), refOf(expected[0] as Manifest));
      expect(copied.map((m) => m.commit.id)).toEqual(expected.map((m) => m.commit.id));
      // And the next publication goes on from the batch's last version.
      await mustWrite(fresh, 'main', [person('after')]);
      expect((await fresh.branchHead('main')).manifest.version).toBe(batch.last + 1);
    });

    it('a batch whose response is lost is looked up: landed, every merge in it is told so, once', async () => {
      const mem = new MemoryStore();
      await branches(mem, 5);
      const head = (await (await Graph.open(mem)).branchHead('main')).manifest;
      // The batch (the second publication: the first merge leads alone) lands, and its answer is lost.
      const lossy = new LoseResponse(mem, keys.manifest(head.lineage, head.version + 2));
      const { waves, g } = await warmInWaves(lossy, 5);
      const { value } = await waves.waves(() => Promise.all([0, 1, 2, 3, 4].map((i) => merge(g, `b${i}`))));
      for (const r of value) expect(r).toMatchObject({ status: 'success', outcome: 'merged', metrics: { attempts: 1 } });
      expect(lossy.lost).toBe(true);
      const fresh = await Graph.open(mem);
      const line = await chain(fresh);
      expect(line[0]?.version).toBe(head.version + 5);
      expect(new Set(line.slice(0, 5).map((m) => m.commit.id))).toEqual(new Set(value.map((r) => r.status === 'success' && r.commit?.id)));
    });

    it('a publication that loses every race gives up after MAX_PUBLISH_ATTEMPTS of them, each counted, with publish_contention', async () => {
      const mem = new MemoryStore();
      await branches(mem, 1);
      // Another process publishes to main just before each of this one's manifests goes out.
      const rival = await Graph.open(mem, { actor: 'rival' });
      let n = 0;
      const racing = new RivalBefore(mem, 'manifests/', () => rival.write('main', [person(`rival${n++}`)]).then(() => undefined), {
        every: true,
      });
      const g = await Graph.open(racing, { actor: 'test', random: () => 0 });
      await expect(merge(g, 'b0')).rejects.toMatchObject({ code: 'publish_contention', details: { attempts: MAX_PUBLISH_ATTEMPTS } });
      expect(n).toBe(MAX_PUBLISH_ATTEMPTS);
    });

    it('a batch that loses its version to another process lands none of its merges, and each plans again', async () => {
      const mem = new MemoryStore();
      await branches(mem, 5);
      const head = (await (await Graph.open(mem)).branchHead('main')).manifest;
      // Another process publishes the version the batch is about to take, just before it does.
      const rival = await Graph.open(mem, { actor: 'rival' });
      const racing = new RivalBefore(mem, keys.manifest(head.lineage, head.version + 2), () =>
        rival.write('main', [person('rival')]).then(() => undefined),
      );
      const { waves, g } = await warmInWaves(racing, 5);
      const { value } = await waves.waves(() => Promise.all([0, 1, 2, 3, 4].map((i) => merge(g, `b${i}`))));
      for (const r of value) expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
      expect(racing.fired).toBe(true);
      expect(value.filter((r) => r.status === 'success' && r.metrics.attempts > 1).length).toBeGreaterThanOrEqual(2);
      const fresh = await Graph.open(mem);
      const line = await chain(fresh);
      expectOneChain(line);
      expect(Object.keys(await rowsOf(fresh, 'main', 'Person')).sort()).toEqual(['p0', 'p1', 'p2', 'p3', 'p4', 'rival', 'shared']);
      expect(
        line
          .slice(0, 6)
          .map((m) => m.commit.kind)
          .filter((k) => k === 'merge'),
      ).toHaveLength(5);
    });
  });
});

/** Runs `rival` just before the create-only write of `key` (once, or before every write under `key` as a prefix). */
class RivalBefore extends StoreWrapper {
  fired = false;
  constructor(
    inner: ObjectStore,
    private readonly key: string,
    private readonly rival: () => Promise<void>,
    private readonly o: { every?: boolean } = {},
  ) {
    super(inner);
  }
  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const hit = this.o.every === true ? ctx.key.startsWith(this.key) : ctx.key === this.key && !this.fired;
    if (ctx.op === 'putIfAbsent' && hit) {
      this.fired = true;
      await this.rival();
    }
    return call();
  }
}

/** Lets the create-only write of `key` land, then loses its answer (as a dropped connection would). */
class LoseResponse extends StoreWrapper {
  lost = false;
  constructor(
    inner: ObjectStore,
    private readonly key: string,
  ) {
    super(inner);
  }
  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const out = await call();
    if (!this.lost && ctx.op === 'putIfAbsent' && ctx.key === this.key) {
      this.lost = true;
      throw new BranchgraphError('store_unavailable', 'the connection dropped before the answer came');
    }
    return out;
  }
}
