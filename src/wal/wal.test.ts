import { describe, expect, it } from 'vitest';
import { Graph } from '../graph/graph.js';
import { CountingStore } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll } from '../store/object-store.js';
import { BranchgraphError } from '../model/errors.js';
import { merge, mergeOk, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { WalWriter } from './wal-writer.js';
import { catchUp, planBatches } from './catch-up.js';
import type { WriteOp } from '../graph/write-batch.js';
import { GenerationFoldedError, type GenerationInfo } from '../pending/generation.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import { allRows } from '../graph/reads.js';
import type { Snapshot } from '../graph/snapshot.js';

const rowsOfSnapshot = (g: Graph, snap: Snapshot) => allRows({ tables: g.ports.tables, snap, table: 'Person' });

const upsert = (id: string, name: string, extra: Record<string, unknown> = {}): WriteOp => ({
  op: 'upsert',
  table: 'Person',
  values: { id, name, ...extra },
});

/** A clock the test moves by hand, so generation stamps are exact. */
function clock(start = 1_000_000): { now: () => number; tick: (ms?: number) => number } {
  let t = start;
  return { now: () => t, tick: (ms = 1) => (t += ms) };
}

async function walKeys(store: MemoryStore): Promise<string[]> {
  return (await listAll(store, 'wal/')).map((o) => o.key);
}

describe('WAL ingest', () => {
  it('acknowledged rows are visible on the branch at once, and survive a restart', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    const w = new WalWriter(g.ports, { shard: 'a' });
    const r = await w.ingest('main', [upsert('p1', 'One'), upsert('p2', 'Two')]);
    expect(r.generations).toHaveLength(1);
    expect(r.summary.inserted).toBe(2);
    expect(await rowsOf(g, 'main', 'Person')).toEqual({
      p1: { id: 'p1', name: 'One', email: null, age: null, role: null },
      p2: { id: 'p2', name: 'Two', email: null, age: null, role: null },
    });
    const reopened = await Graph.open(store);
    expect(Object.keys(await rowsOf(reopened, 'main', 'Person'))).toEqual(['p1', 'p2']);
  });

  it('seals by size: one generation per maxGenerationRows operations', async () => {
    const g = await peopleGraph();
    const w = new WalWriter(g.ports, { shard: 'a', maxGenerationRows: 3 });
    const r = await w.ingest(
      'main',
      Array.from({ length: 7 }, (_, i) => upsert(`p${i}`, `n${i}`)),
    );
    expect(r.generations.map((x) => [x.seq, x.rows])).toEqual([
      [1, 3],
      [2, 3],
      [3, 1],
    ]);
  });

  it('seals by time while a stream waits for more rows', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    const w = new WalWriter(g.ports, { shard: 'a', sealAfterMs: 20 });
    let sealedWhileWaiting = 0;
    async function* slow(): AsyncGenerator<WriteOp> {
      yield upsert('p1', 'One');
      // The stream stalls; the open generation must not wait for it.
      for (let i = 0; i < 100 && sealedWhileWaiting === 0; i++) {
        await new Promise((r) => setTimeout(r, 10));
        sealedWhileWaiting = (await walKeys(store)).length;
      }
      yield upsert('p2', 'Two');
    }
    const r = await w.ingest('main', slow());
    expect(sealedWhileWaiting).toBe(1);
    expect(r.generations).toHaveLength(2);
  });

  it('validates like an ordinary write; a bad generation is refused and earlier ones stay acknowledged', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    const w = new WalWriter(g.ports, { shard: 'a', maxGenerationRows: 2 });
    const err = await w
      .ingest('main', [upsert('p1', 'One'), upsert('p2', 'Two'), upsert('p3', 'Three', { age: 999 }), upsert('p4', 'Four')])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BranchgraphError);
    expect((err as BranchgraphError).code).toBe('constraint_violation');
    expect((err as BranchgraphError).details.acknowledged).toEqual({ generations: 1, rows: 2, lastSeq: 1 });
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toEqual(['p1', 'p2']);
    expect(await walKeys(store)).toHaveLength(1);
  });

  it('refuses a bad shard name with a typed error', () => {
    expect(() => new WalWriter({} as Graph['ports'], { shard: '../x' })).toThrow(BranchgraphError);
  });

  it('orders pending generations across shards by (stamp, shard, seq): the newest wins', async () => {
    const g = await peopleGraph();
    const c = clock();
    const a = new WalWriter(g.ports, { shard: 'a', now: c.now });
    const b = new WalWriter(g.ports, { shard: 'b', now: c.now });
    await b.ingest('main', [upsert('k', 'from b, older')]);
    c.tick();
    await a.ingest('main', [upsert('k', 'from a, newer')]);
    expect((await rowsOf(g, 'main', 'Person')).k?.name).toBe('from a, newer');
    // Same stamp: the shard name decides.
    const x = new WalWriter(g.ports, { shard: 'x', now: c.now });
    const y = new WalWriter(g.ports, { shard: 'y', now: c.now });
    await x.ingest('main', [upsert('warm', 'x')]);
    await y.ingest('main', [upsert('warm', 'y')]);
    c.tick(10);
    await y.ingest('main', [upsert('t', 'y')]);
    await x.ingest('main', [upsert('t', 'x')]);
    expect((await rowsOf(g, 'main', 'Person')).t?.name).toBe('y');
  });

  it('an ordinary write folds the pending rows it saw, so an older pending row never overrides it', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    const w = new WalWriter(g.ports, { shard: 'a' });
    await w.ingest('main', [upsert('p1', 'ingested'), upsert('p2', 'kept')]);
    await g.write('main', [{ op: 'update', table: 'Person', values: { id: 'p1', name: 'written' } }]);
    const rows = await rowsOf(g, 'main', 'Person');
    expect([rows.p1?.name, rows.p2?.name]).toEqual(['written', 'kept']);
    const head = await g.branchHead('main');
    expect(head.pending.generations).toHaveLength(0);
    expect(head.manifest.wal).toEqual({ a: 1 });
  });

  it('reading a commit shows only folded rows; the branch head shows pending ones too', async () => {
    const g = await peopleGraph();
    await g.write('main', [person('p0')]);
    const w = new WalWriter(g.ports, { shard: 'a' });
    await w.ingest('main', [upsert('p1', 'x')]);
    const head = await g.branchHead('main');
    const atCommit = await g.commitSnapshot(head.manifest.commit.id);
    expect(atCommit.pending.generations).toHaveLength(0);
    expect(Object.keys(atCommit.tables.Person?.runs ?? []).length).toBeLessThan(head.tables.Person?.runs.length ?? 0);
  });
});

describe('catch-up', () => {
  it('folds every pending generation, keeps what readers see, then deletes the generations', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    const c = clock();
    const shards = ['a', 'b', 'c'].map((s) => new WalWriter(g.ports, { shard: s, now: c.now, maxGenerationRows: 2 }));
    for (let i = 0; i < 12; i++) {
      c.tick();
      await (shards[i % 3] as WalWriter).ingest('main', [upsert(`k${i % 5}`, `v${i}`), upsert(`u${i}`, `w${i}`)]);
    }
    const before = await rowsOf(g, 'main', 'Person');
    expect((await g.branchHead('main')).pending.generations).toHaveLength(12);
    const r = await catchUp(g.ports, 'main', { maxGenerations: 5 });
    expect(r.outcome).toBe('caught_up');
    expect(r.generations).toBe(12);
    expect(r.batches).toBe(3);
    expect(r.pendingAfter).toBe(0);
    expect(await walKeys(store)).toEqual([]);
    g.dropCaches();
    expect(await rowsOf(g, 'main', 'Person')).toEqual(before);
    expect((await g.branchHead('main')).manifest.wal).toEqual({ a: 4, b: 4, c: 4 });
    // A second run finds nothing to do.
    expect((await catchUp(g.ports, 'main')).outcome).toBe('nothing_pending');
  });

  it('merges see pending rows on both sides and fold them', async () => {
    const g = await peopleGraph();
    await g.write('main', [person('base')]);
    await g.createBranch('feature', { branch: 'main' });
    await new WalWriter(g.ports, { shard: 'f' }).ingest('feature', [upsert('fromFeature', 'f')]);
    await new WalWriter(g.ports, { shard: 'm' }).ingest('main', [upsert('fromMain', 'm')]);
    await mergeOk(g, 'feature');
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['base', 'fromFeature', 'fromMain']);
    expect((await g.branchHead('main')).pending.generations).toHaveLength(0);
    // The merge folded the source's pending rows on the source first, so its recorded parent holds them.
    expect((await g.branchHead('feature')).pending.generations).toHaveLength(0);
    expect((await mergeOk(g, 'feature')).outcome).toBe('already_up_to_date');
  });

  it('regression (simulation seed 149): pending rows taken by a merge are in its recorded parent, so a later update of them merges cleanly', async () => {
    const g = await peopleGraph();
    await g.createBranch('b1', { branch: 'main' });
    const w = new WalWriter(g.ports, { shard: 'w2' });
    await w.ingest('main', [upsert('k3', 'first')]);
    expect((await mergeOk(g, 'main', { into: 'b1' })).outcome).toBe('fast_forward');
    await w.ingest('main', [{ op: 'update', table: 'Person', values: { id: 'k3', name: 'second' } }]);
    // Before the fix the merge base predated k3, so b1's copy looked like a divergent insert.
    await mergeOk(g, 'main', { into: 'b1' });
    expect((await rowsOf(g, 'b1', 'Person')).k3?.name).toBe('second');
  });

  it('a refused merge or a dry run changes nothing, pending source rows included', async () => {
    const g = await peopleGraph();
    await g.write('main', [person('k')]);
    await g.createBranch('f', { branch: 'main' });
    await new WalWriter(g.ports, { shard: 's' }).ingest('f', [{ op: 'update', table: 'Person', values: { id: 'k', name: 'from f' } }]);
    await g.write('main', [{ op: 'update', table: 'Person', values: { id: 'k', name: 'from main' } }]);
    const before = await g.branchHead('f');
    const dry = await merge(g, 'f', { dryRun: true });
    expect(dry.status).toBe('conflicts');
    const refused = await merge(g, 'f');
    expect(refused.status === 'conflicts' ? refused.report.items.map((c) => [c.kind, c.key, c.property]) : []).toEqual([
      ['DivergentUpdate', 'k', 'name'],
    ]);
    const after = await g.branchHead('f');
    expect(after.manifest.commit.id).toBe(before.manifest.commit.id);
    expect(after.pending.generations).toHaveLength(1);
  });

  it('a branch created from a branch with pending rows starts from what its readers saw', async () => {
    const g = await peopleGraph();
    await new WalWriter(g.ports, { shard: 'a' }).ingest('main', [upsert('p1', 'x')]);
    await g.createBranch('copy', { branch: 'main' });
    expect(Object.keys(await rowsOf(g, 'copy', 'Person'))).toEqual(['p1']);
  });
});

describe('planBatches', () => {
  const gen = (shard: string, seq: number, stamp: number, bytes = 10): GenerationInfo => ({
    key: `wal/L/${shard}/${seq}`,
    shard,
    seq,
    stamp,
    bytes,
    digest: 'd',
    rows: {},
  });
  it('caps by count and bytes, records watermarks, and sends an oversized generation alone', () => {
    const gens = [gen('a', 3, 1), gen('b', 1, 2), gen('a', 4, 3, 100), gen('b', 2, 4), gen('a', 5, 5)];
    const batches = planBatches({ generations: gens, start: { a: 2, b: 0 }, maxGenerations: 2, maxBytes: 50 });
    expect(batches.map((b) => b.generations.map((x) => `${x.shard}${x.seq}`))).toEqual([['a3', 'b1'], ['a4'], ['b2', 'a5']]);
    expect(batches.map((b) => b.end)).toEqual([
      { a: 3, b: 1 },
      { a: 4, b: 1 },
      { a: 5, b: 2 },
    ]);
    expect(batches[1]?.start).toEqual({ a: 3, b: 1 });
    expect(planBatches({ generations: gens, start: {}, maxGenerations: 0, maxBytes: 1_000 })).toHaveLength(1);
    expect(() => planBatches({ generations: gens, start: {}, maxGenerations: -1, maxBytes: 10 })).toThrow(BranchgraphError);
  });
});

describe('folds racing readers', () => {
  /** Runs `hook` once, just before the `nth` GET of a WAL generation through this store. */
  class BeforeNthGenerationGet extends StoreWrapper {
    private seen = 0;
    constructor(
      inner: MemoryStore,
      private readonly nth: number,
      private readonly hook: () => Promise<unknown>,
    ) {
      super(inner);
    }
    protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
      if (ctx.op === 'get' && ctx.key.startsWith('wal/') && ++this.seen === this.nth) await this.hook();
      return call();
    }
  }

  it('regression (S3 concurrency run): catch-up whose listed generations another process folds and deletes starts over instead of failing', async () => {
    const store = new MemoryStore();
    const other = await peopleGraph(store);
    const w = new WalWriter(other.ports, { shard: 'a' });
    for (const id of ['p1', 'p2', 'p3']) await w.ingest('main', [upsert(id, id)]);
    // A process whose generation cache holds one object, so catch-up must read generations again after listing them.
    const racing = new BeforeNthGenerationGet(store, 4, () => other.write('main', [upsert('p4', 'written')]));
    const g = await Graph.open(racing, { runCacheBytes: 1 });
    const r = await catchUp(g.ports, 'main');
    expect(r.staleRounds).toBe(1);
    expect(r.pendingAfter).toBe(0);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['p1', 'p2', 'p3', 'p4']);
  });

  it('a read whose pending rows were folded and deleted meanwhile gets the retryable publish_contention, never a 404', async () => {
    const store = new MemoryStore();
    const other = await peopleGraph(store);
    await new WalWriter(other.ports, { shard: 'a' }).ingest('main', [upsert('p1', 'x'), upsert('p2', 'y')]);
    const g = await Graph.open(store, { runCacheBytes: 1 });
    const head = await g.branchHead('main');
    await other.write('main', [upsert('p3', 'z')]);
    g.dropCaches();
    const err = await rowsOfSnapshot(g, head).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GenerationFoldedError);
    expect(err).toMatchObject({ code: 'publish_contention', retryable: true });
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['p1', 'p2', 'p3']);
  });
});

describe('WAL housekeeping', () => {
  it('the background trigger catches up a watched branch once enough generations are pending', async () => {
    const { CatchUpManager } = await import('./catch-up-manager.js');
    const g = await peopleGraph();
    const m = new CatchUpManager({
      ports: g.ports,
      settings: { maxGenerations: 64, maxBytes: 1 << 26, pipeline: true, budgetBytes: 1 << 28, triggerGenerations: 3, intervalMs: 1000 },
    });
    const w = new WalWriter(g.ports, { shard: 'a' });
    const ingest = async (id: string) => m.sealed('main', (await w.ingest('main', [upsert(id, 'x')])).generations.length);
    await ingest('p1');
    await ingest('p2');
    await m.tick();
    expect(m.lastRun('main')).toBeNull();
    await ingest('p3');
    await m.tick();
    expect(m.lastRun('main')).toMatchObject({ trigger: 'background', outcome: 'caught_up', report: { generations: 3 } });
    expect((await g.branchHead('main')).pending.generations).toHaveLength(0);
    await m.stop();
  });

  it('a started trigger looks at a branch as soon as what was sealed there reaches it, not at the next pass', async () => {
    const { CatchUpManager } = await import('./catch-up-manager.js');
    const g = await peopleGraph();
    // A pass an hour apart: only the look at sealing can catch up within this test.
    const m = new CatchUpManager({
      ports: g.ports,
      settings: {
        maxGenerations: 64,
        maxBytes: 1 << 26,
        pipeline: true,
        budgetBytes: 1 << 28,
        triggerGenerations: 3,
        intervalMs: 3_600_000,
      },
    });
    m.start();
    const w = new WalWriter(g.ports, { shard: 'a' });
    let most = 0;
    for (let i = 0; i < 12; i++) {
      m.sealed('main', (await w.ingest('main', [upsert(`p${i}`, 'x')])).generations.length);
      await m.idle();
      most = Math.max(most, (await g.branchHead('main')).pending.generations.length);
    }
    expect(most).toBeLessThan(3);
    expect(m.lastRun('main')).toMatchObject({ trigger: 'background', outcome: 'caught_up', report: { generations: 3 } });
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toHaveLength(12);
    await m.stop();
  });

  it('after a run, what it left pending counts: the next ingest does not read the branch again', async () => {
    const { CatchUpManager } = await import('./catch-up-manager.js');
    const g = await peopleGraph();
    const looked: number[] = [];
    const m = new CatchUpManager({
      ports: g.ports,
      settings: {
        maxGenerations: 64,
        maxBytes: 1 << 26,
        pipeline: true,
        budgetBytes: 1 << 28,
        triggerGenerations: 3,
        intervalMs: 3_600_000,
      },
      observer: { catchUpFinished: () => undefined, walPendingSeen: (_b, n) => void looked.push(n), branchGone: () => undefined },
    });
    m.start();
    const w = new WalWriter(g.ports, { shard: 'a' });
    for (let i = 0; i < 4; i++) {
      m.sealed('main', (await w.ingest('main', [upsert(`p${i}`, 'x')])).generations.length);
      await m.idle();
    }
    // One look, at the third ingest, which caught up; the fourth left one pending, below the trigger.
    expect(looked).toEqual([3]);
    expect((await g.branchHead('main')).pending.generations).toHaveLength(1);
    await m.stop();
  });

  it('regression: a pass reads no branch whose sealed generations are below the trigger, however many branches were ingested into', async () => {
    const { CatchUpManager } = await import('./catch-up-manager.js');
    const store = new CountingStore(new MemoryStore());
    const g = await peopleGraph(store);
    const m = new CatchUpManager({
      ports: g.ports,
      settings: { maxGenerations: 64, maxBytes: 1 << 26, pipeline: true, budgetBytes: 1 << 28, triggerGenerations: 3, intervalMs: 1000 },
    });
    const w = new WalWriter(g.ports, { shard: 'a' });
    for (let i = 0; i < 40; i++) {
      await g.createBranch(`b${i}`, { branch: 'main' });
      m.sealed(`b${i}`, (await w.ingest(`b${i}`, [upsert('p', 'x')])).generations.length);
    }
    // The branches' hints land after their creation: what the passes read is counted, not those.
    await g.idle();
    store.reset();
    await m.tick();
    await m.tick();
    expect(store.snapshot().total.calls).toBe(0);
    await m.stop();
  });

  it('GC removes folded generations a crash left behind and those of long-deleted branches, never pending ones', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await g.createBranch('gone', { branch: 'main' });
    await new WalWriter(g.ports, { shard: 'a' }).ingest('gone', [upsert('x', 'x')]);
    await g.deleteBranch('gone');
    const w = new WalWriter(g.ports, { shard: 'a' });
    await w.ingest('main', [upsert('p1', 'x')]);
    await w.ingest('main', [upsert('p2', 'x')]);
    // A fold whose generation deletes were lost: put the first generation back after publication.
    const lineage = (await g.branchHead('main')).branch?.lineage ?? '?';
    const first = (await walKeys(store)).find((k) => k.includes(lineage) && k.endsWith('000000000001.json')) as string;
    const bytes = await store.get(first);
    await g.write('main', [upsert('p3', 'y')]);
    await store.putIfAbsent(first, bytes);
    await w.ingest('main', [upsert('p4', 'x')]);
    const later = Date.now() + 3 * 60 * 60 * 1000;
    const report = await g.gc({ now: later });
    expect(report.deleted.wal).toBe(2);
    const left = await walKeys(store);
    expect(left).toHaveLength(1);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['p1', 'p2', 'p3', 'p4']);
  });
});

describe('corrupt generations', () => {
  it('a changed digit, a truncation or a generation stored under another name is corrupt_object, and nothing is folded', async () => {
    for (const damage of [
      (t: string) => t.replace('"age":41', '"age":47'),
      (t: string) => t.slice(0, t.length - 9),
      (t: string) => t.replace('"seq":1', '"seq":2'),
    ]) {
      const store = new MemoryStore();
      const g = await peopleGraph(store);
      await new WalWriter(g.ports, { shard: 'a' }).ingest('main', [upsert('p1', 'x', { age: 41 })]);
      const [key] = await walKeys(store);
      const text = new TextDecoder().decode(await store.get(key as string));
      await store.deleteMany([key as string]);
      await store.putIfAbsent(key as string, new TextEncoder().encode(damage(text)));
      const fresh = await Graph.open(store);
      await expect(rowsOf(fresh, 'main', 'Person')).rejects.toMatchObject({ code: 'corrupt_object' });
      await expect(catchUp(fresh.ports, 'main')).rejects.toMatchObject({ code: 'corrupt_object' });
      expect(await walKeys(store)).toEqual([key]);
    }
  });
});

describe('two processes sharing one shard name', () => {
  /** Runs `hook` once, before or after the first create-only PUT of a WAL generation through this store. */
  class AroundGenerationPut extends StoreWrapper {
    private armed = true;
    constructor(
      inner: MemoryStore,
      private readonly when: 'before' | 'after',
      private readonly hook: () => Promise<unknown>,
    ) {
      super(inner);
    }
    protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
      const fire = this.armed && ctx.op === 'putIfAbsent' && ctx.key.startsWith('wal/');
      if (fire) this.armed = false;
      if (fire && this.when === 'before') await this.hook();
      const r = await call();
      if (fire && this.when === 'after') await this.hook();
      return r;
    }
  }

  const names = async (g: Graph) =>
    Object.fromEntries(Object.entries(await rowsOf(g, 'main', 'Person')).map(([k, v]) => [k, (v as { name: string }).name]));

  it('regression: a process with a stale sequence counter never writes below the watermark another one folded to', async () => {
    const store = new MemoryStore();
    const a = await peopleGraph(store);
    const b = await Graph.open(store);
    const wa = new WalWriter(a.ports, { shard: 'host' });
    const wb = new WalWriter(b.ports, { shard: 'host' });
    await wb.ingest('main', [upsert('b1', 'b1')]);
    for (const id of ['a1', 'a2', 'a3']) await wa.ingest('main', [upsert(id, id)]);
    await catchUp(a.ports, 'main');
    const late = [await wb.ingest('main', [upsert('b2', 'b2')]), await wb.ingest('main', [upsert('b3', 'b3')])];
    expect(late.map((r) => r.generations[0]?.seq)).toEqual([5, 6]);
    for (const g of [a, b, await Graph.open(store)])
      expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
    await catchUp(b.ports, 'main');
    expect(Object.keys(await rowsOf(await Graph.open(store), 'main', 'Person')).sort()).toEqual(['a1', 'a2', 'a3', 'b1', 'b2', 'b3']);
  });

  it('a fold that passes the sequence number between the head read and the PUT makes the writer write again above it', async () => {
    const store = new MemoryStore();
    const a = await peopleGraph(store);
    const wa = new WalWriter(a.ports, { shard: 'host' });
    await wa.ingest('main', [upsert('a0', 'a0')]);
    // B validates against a head with watermark 0 and one pending generation, so it picks seq 2; before its PUT,
    // A writes seq 2 and 3, folds them and deletes them, so B's create-only PUT at 2 succeeds below the watermark.
    const racing = new AroundGenerationPut(store, 'before', async () => {
      await wa.ingest('main', [upsert('a1', 'a1')]);
      await wa.ingest('main', [upsert('a2', 'a2')]);
      await catchUp(a.ports, 'main');
    });
    const b = await Graph.open(racing);
    const r = await new WalWriter(b.ports, { shard: 'host' }).ingest('main', [upsert('b1', 'b1')]);
    expect(r.generations[0]?.seq).toBe(4);
    expect(Object.keys(await rowsOf(await Graph.open(store), 'main', 'Person')).sort()).toEqual(['a0', 'a1', 'a2', 'b1']);
    expect((await walKeys(store)).filter((k) => k.endsWith('000000000002.json'))).toEqual([]);
  });

  it('a fold that took the new generation before the writer checked it is an acknowledgement, not a reason to write again', async () => {
    const store = new MemoryStore();
    const a = await peopleGraph(store);
    await new WalWriter(a.ports, { shard: 'host' }).ingest('main', [upsert('x', 'first')]);
    // Right after B's PUT, A folds B's generation and then overwrites the row with an ordinary write.
    const racing = new AroundGenerationPut(store, 'after', async () => {
      await catchUp(a.ports, 'main');
      await a.write('main', [upsert('b1', 'newer')]);
    });
    const b = await Graph.open(racing);
    const r = await new WalWriter(b.ports, { shard: 'host' }).ingest('main', [upsert('b1', 'from-b')]);
    expect(r.generations.map((x) => x.seq)).toEqual([2]);
    // Writing B's rows again would put the older value back over A's later write.
    expect(await names(await Graph.open(store))).toEqual({ x: 'first', b1: 'newer' });
  });
});

describe('a schema tightened while a generation is sealed', () => {
  class BeforeFirstGenerationPut extends StoreWrapper {
    private armed = true;
    constructor(
      inner: MemoryStore,
      private readonly hook: () => Promise<unknown>,
    ) {
      super(inner);
    }
    protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
      if (this.armed && ctx.op === 'putIfAbsent' && ctx.key.startsWith('wal/')) {
        this.armed = false;
        await this.hook();
      }
      return call();
    }
  }

  it('regression: rows validated under the old schema that break the new one are withdrawn unacknowledged, and the head satisfies its schema', async () => {
    const store = new MemoryStore();
    const other = await peopleGraph(store);
    await new WalWriter(other.ports, { shard: 'w' }).ingest('main', [upsert('p0', 'zero', { age: 10 })]);
    const tight = (await import('../../test/support/fixtures.js')).PEOPLE_SCHEMA.replace('@range(0, 150)', '@range(0, 100)');
    // Between validation (age 120 is fine under 0..150) and the PUT, another process tightens the range.
    const racing = new BeforeFirstGenerationPut(store, () => other.applySchema('main', tight));
    const g = await Graph.open(racing);
    await expect(new WalWriter(g.ports, { shard: 'w' }).ingest('main', [upsert('p1', 'one', { age: 120 })])).rejects.toMatchObject({
      code: 'constraint_violation',
    });
    const fresh = await Graph.open(store);
    expect(Object.keys(await rowsOf(fresh, 'main', 'Person'))).toEqual(['p0']);
    // A row that satisfies the new schema goes through the same race and is acknowledged.
    const racing2 = new BeforeFirstGenerationPut(store, () => other.applySchema('main', tight.replace('@range(0, 100)', '@range(0, 99)')));
    const r = await new WalWriter((await Graph.open(racing2)).ports, { shard: 'w' }).ingest('main', [upsert('p2', 'two', { age: 20 })]);
    expect(r.generations).toHaveLength(1);
    expect(Object.keys(await rowsOf(await Graph.open(store), 'main', 'Person')).sort()).toEqual(['p0', 'p2']);
  });
});
