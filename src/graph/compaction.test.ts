import { describe, expect, it } from 'vitest';
import { mergeOk, mustWrite, person, rowsOf, PEOPLE_SCHEMA } from '../../test/support/fixtures.js';
import { CountingStore } from '../store/counting-store.js';
import { LatencyStore } from '../store/latency-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll } from '../store/object-store.js';
import { COMPACTION_FANOUT } from '../table/compaction-policy.js';
import { WalWriter } from '../wal/wal-writer.js';
import { MIN_GC_GRACE_MS } from './gc.js';
import { Graph } from './graph.js';

const ITEMS = 'node Item { id: string @key\n v: int }';
const item = (i: number, v = 0) => ({ op: 'upsert' as const, table: 'Item', values: { id: `i${String(i).padStart(5, '0')}`, v } });

describe('compaction', () => {
  it('tiered compaction after every write keeps runs logarithmic, and reads the same', async () => {
    const g = await Graph.open(new MemoryStore());
    await g.applySchema('main', ITEMS);
    for (let i = 0; i < 200; i++) {
      await mustWrite(g, 'main', [item(i % 150, i)]);
      await g.compact('main');
    }
    const runs = (await g.branchHead('main')).manifest.tables.Item?.runs ?? [];
    expect(runs.length).toBeLessThanOrEqual(COMPACTION_FANOUT * Math.ceil(Math.log(200) / Math.log(COMPACTION_FANOUT)));
    const rows = await rowsOf(g, 'main', 'Item');
    expect(Object.keys(rows)).toHaveLength(150);
    expect(rows.i00049?.v).toBe(199);
    // Nothing is due right after compacting.
    expect((await g.compact('main')).status).toBe('unchanged');
  });

  it('a merge whose base predates compactions on both sides still reads only the delta', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store);
    await g.applySchema('main', ITEMS);
    for (let k = 0; k < 4; k++)
      await mustWrite(
        g,
        'main',
        Array.from({ length: 6000 }, (_, i) => item(k * 6000 + i)),
      );
    await g.createBranch('f', { branch: 'main' });
    for (let k = 0; k < 3; k++) {
      await mustWrite(g, 'f', [item(10 + k, 7)]);
      await mustWrite(g, 'main', [item(12000 + k, 9)]);
    }
    await g.compact('main', { mode: 'full' });
    await g.compact('f', { mode: 'full' });
    const tableBytes = (await g.branchHead('main')).manifest.tables.Item?.runs.reduce((n, r) => n + r.bytes, 0) ?? 0;
    const counting = new CountingStore(store);
    const cold = await Graph.open(counting);
    const r = await mergeOk(cold, 'f');
    expect(r.outcome).toBe('merged');
    const read = counting.snapshot().get.bytesRead;
    expect(read).toBeLessThan(tableBytes / 4);
    const rows = await rowsOf(g, 'main', 'Item');
    expect([rows.i00010?.v, rows.i00012?.v, rows.i12002?.v, Object.keys(rows).length]).toEqual([7, 7, 9, 24000]);
  });

  it('what compaction replaced stays readable after GC, so later merges across it still find their base', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore(() => now);
    const g = await Graph.open(store, { clock: () => now });
    await g.applySchema('main', PEOPLE_SCHEMA);
    for (let i = 0; i < 6; i++) await mustWrite(g, 'main', [person(`p${i}`)]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [{ op: 'update', table: 'Person', values: { id: 'p1', age: 7 } }]);
    await mustWrite(g, 'main', [{ op: 'update', table: 'Person', values: { id: 'p3', age: 9 } }]);
    await g.compact('main', { mode: 'full' });
    now += MIN_GC_GRACE_MS + 60_000;
    await g.gc({ graceMs: 0 });
    const r = await mergeOk(await Graph.open(store, { clock: () => now }), 'f');
    expect(r.outcome).toBe('merged');
    const people = await rowsOf(g, 'main', 'Person');
    expect([people.p1?.age, people.p3?.age, Object.keys(people).length]).toEqual([7, 9, 6]);
  });

  it('concurrent writers are never blocked or lost while a compactor runs beside them', async () => {
    const store = new LatencyStore(new MemoryStore(), 1);
    // The writers leave compaction to the compactor, which then has work on every round.
    const g = await Graph.open(store, { inlineCompaction: false });
    await g.applySchema('main', ITEMS);
    const other = await Graph.open(store);
    let writing = true;
    const writers = Array.from({ length: 3 }, async (_, w) => {
      for (let i = 0; i < 30; i++) await mustWrite(g, 'main', [item(w * 100 + i, i)]);
    });
    const compactor = (async () => {
      let published = 0;
      while (writing) {
        const r = await other.compact('main');
        if (r.status === 'published') published++;
        await new Promise((res) => setTimeout(res, 1));
      }
      return published;
    })();
    await Promise.all(writers);
    writing = false;
    expect(await compactor).toBeGreaterThan(0);
    expect(Object.keys(await rowsOf(g, 'main', 'Item'))).toHaveLength(90);
    // Runs a lost compaction attempt wrote and did not reuse are gone: every stored run is referenced.
    const head = await g.branchHead('main');
    expect((head.manifest.tables.Item?.runs.length ?? 0) < 90).toBe(true);
  });

  it('in one process, a compaction takes its turn among a stream of writes instead of racing them', async () => {
    const g = await Graph.open(new LatencyStore(new MemoryStore(), 1));
    await g.applySchema('main', ITEMS);
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; i < 40; i++) await mustWrite(g, 'main', [item(w * 100 + i, i)]);
    });
    const attempts: number[] = [];
    const compactor = (async () => {
      while (writing) {
        const r = await g.compact('main');
        if (r.status === 'published') attempts.push(r.attempts);
      }
    })();
    await Promise.all(writers);
    writing = false;
    await compactor;
    // Each compaction published on the first manifest it planned: it lost no race to the writers.
    expect(attempts.length).toBeGreaterThan(3);
    expect(attempts.every((a) => a === 1)).toBe(true);
    expect(Object.keys(await rowsOf(g, 'main', 'Item'))).toHaveLength(160);
    const runs = (await g.branchHead('main')).manifest.tables.Item?.runs.length ?? 0;
    expect(runs).toBeLessThan(40);
  });

  it('pending WAL rows stay pending through a compaction and read the same', async () => {
    const g = await Graph.open(new MemoryStore());
    await g.applySchema('main', ITEMS);
    for (let i = 0; i < 8; i++) await mustWrite(g, 'main', [item(i, 1)]);
    await new WalWriter(g.ports, { shard: 'a' }).ingest('main', [item(3, 2), item(100, 2)]);
    const r = await g.compact('main', { mode: 'full' });
    expect(r.status).toBe('published');
    const head = await g.branchHead('main');
    expect(head.pending.generations).toHaveLength(1);
    const rows = await rowsOf(g, 'main', 'Item');
    expect([rows.i00003?.v, rows.i00100?.v, rows.i00004?.v]).toEqual([2, 2, 1]);
  });

  it('a compaction that finds nothing due publishes nothing and writes nothing', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store);
    await g.applySchema('main', ITEMS);
    await mustWrite(g, 'main', [item(1)]);
    const before = (await listAll(store, '')).length;
    expect((await g.compact('main')).status).toBe('unchanged');
    expect((await listAll(store, '')).length).toBe(before);
  });
});
