import { describe, expect, it } from 'vitest';
import { parseSchema } from '../model/schema-parser.js';
import { LatencyStore } from '../store/latency-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { RunStore } from './run-store.js';
import { COMPACT_RUN_SUFFIX } from './keys.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import { CountingStore } from '../store/counting-store.js';
import { BranchgraphError } from '../model/errors.js';
import { listAll } from '../store/object-store.js';
import type { TableType } from '../model/schema.js';
import type { RunRef } from '../table/run.js';

describe('RunStore', () => {
  it('a read another request started and aborted does not fail a caller that shares it', async () => {
    const type = parseSchema('node T { id: string @key\n a: int }').types[0];
    if (type === undefined) throw new Error('no type');
    const inner = new MemoryStore();
    const ref = await new RunStore(inner).write(type, [{ key: 'k', tomb: false, hash: 'h', props: { id: 'k', a: 1 } }]);
    // A cold cache over a slow store: both callers wait on the one read the first started.
    const runs = new RunStore(new LatencyStore(inner, 20));
    const ac = new AbortController();
    const first = runs.load(type, ref, { signal: ac.signal });
    const second = runs.load(type, ref);
    ac.abort();
    await expect(first).rejects.toMatchObject({ code: 'aborted' });
    expect((await second).length).toBe(1);
  });
});

describe('RunStore.openRun', () => {
  const type = parseSchema('node T { id: string @key\n a: int }').types[0] as TableType;
  const row = (n: number) => ({ key: `k${String(n).padStart(6, '0')}`, tomb: false, hash: `h${n}`, props: { id: `k${n}`, a: n } });

  it('a run pushed a few rows at a time reads back as the run written whole would', async () => {
    const store = new MemoryStore();
    const runs = new RunStore(store);
    const rows = Array.from({ length: 2500 }, (_, n) => row(n));
    const sink = runs.openRun(type);
    for (let at = 0; at < rows.length; at += 333) await sink.push(rows.slice(at, at + 333));
    const ref = (await sink.close()) as RunRef;
    expect(ref).toMatchObject({ rows: 2500, minKey: rows[0]?.key, maxKey: rows[2499]?.key, segmented: true });
    const fresh = new RunStore(store);
    const segments = await fresh.segments(ref);
    const back = (await Promise.all(segments.map((s) => fresh.load(type, s)))).flatMap((d) =>
      Array.from({ length: d.length }, (_, i) => d.rowAt(i)),
    );
    expect(back.map((r) => r.key)).toEqual(rows.map((r) => r.key));
  });

  it('refuses a row out of key order, and an aborted run leaves nothing behind', async () => {
    const store = new MemoryStore();
    const sink = new RunStore(store).openRun(type);
    await sink.push(Array.from({ length: 2100 }, (_, n) => row(n)));
    await expect(sink.push([row(5)])).rejects.toThrow(/out of order/);
    await sink.abort();
    expect(await listAll(store, 'runs/')).toEqual([]);
  });

  it('a run of no rows is no run', async () => {
    expect(await new RunStore(new MemoryStore()).openRun(type).close()).toBeUndefined();
  });
});

describe('run formats', () => {
  it('reads small runs written as Arrow files by earlier versions beside compact ones, and compacts them together', async () => {
    const { Graph } = await import('./graph.js');
    const { keys } = await import('./keys.js');
    const { runRefOf } = await import('../table/run.js');
    const { encodeRun } = await import('../table/run-encode.js');
    const { rowHash } = await import('../model/values.js');
    const { allRows } = await import('./reads.js');
    const store = new MemoryStore();
    const g = await Graph.open(store);
    await g.applySchema('main', 'node T { id: string @key\n a: int }');
    await g.write('main', [{ op: 'insert', table: 'T', values: { id: 'new', a: 1 } }]);
    const type = (await g.branchHead('main')).schema.types[0] as NonNullable<ReturnType<typeof parseSchema>['types'][0]>;
    // A one-row run as an earlier version wrote it: an Arrow file at the .arrow key.
    const props = { id: 'old', a: 2 };
    const rows = [{ key: 'old', tomb: false, hash: rowHash(props), props }];
    const key = keys.run('T', '01JZZZZZZZZZZZZZZZZZZZZZZZ');
    const bytes = encodeRun(type, rows);
    await store.putIfAbsent(key, bytes);
    await g.ports.publication.commitChange('main', {}, async (head) => ({
      kind: 'write',
      tables: { T: { runs: [...(head.tables.T?.runs ?? []), runRefOf({ key, rows, file: bytes })] } },
      scratch: [],
      result: null,
    }));
    const fresh = await Graph.open(store);
    const runKeys = (await fresh.branchHead('main')).manifest.tables.T?.runs.map((r) => r.key) ?? [];
    expect(runKeys.some((k) => k.endsWith('.rows.json')) && runKeys.some((k) => k.endsWith('.arrow'))).toBe(true);
    const read = async () =>
      (await allRows({ tables: fresh.ports.tables, snap: await fresh.branchHead('main'), table: 'T' })).map((r) => r.row);
    expect(await read()).toEqual([
      { id: 'new', a: 1 },
      { id: 'old', a: 2 },
    ]);
    await fresh.compact('main', { mode: 'full' });
    expect((await fresh.branchHead('main')).manifest.tables.T?.runs.map((r) => r.key.endsWith('.rows.json'))).toEqual([true]);
    expect(await read()).toEqual([
      { id: 'new', a: 1 },
      { id: 'old', a: 2 },
    ]);
  });
});

describe('compacted runs', () => {
  /** Puts held until released, so a test sees which are in flight together; a key pattern can fail. */
  class HeldPuts extends StoreWrapper {
    inFlight = 0;
    most = 0;
    constructor(
      inner: MemoryStore,
      private readonly failing?: RegExp,
    ) {
      super(inner);
    }
    protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
      if (ctx.op !== 'putIfAbsent') return call();
      this.inFlight++;
      this.most = Math.max(this.most, this.inFlight);
      await new Promise((r) => setTimeout(r, 5));
      this.inFlight--;
      if (this.failing?.test(ctx.key)) throw new BranchgraphError('store_unavailable', `put of ${ctx.key} failed`);
      return call();
    }
  }
  const type = parseSchema('node T { id: string @key\n a: int }').types[0] as TableType;
  const row = (k: string, a: number) => ({ key: k, tomb: false, hash: `h${a}`, props: { id: k, a } });

  it('a compacted run counts as stored only once its list is too, however the two puts finish', async () => {
    const inner = new MemoryStore();
    const setup = new RunStore(inner);
    const refs = [await setup.write(type, [row('a', 1)]), await setup.write(type, [row('b', 2)])];
    await setup.stored(refs);
    let release!: () => void;
    const listHeld = new Promise<void>((r) => (release = r));
    class SlowList extends StoreWrapper {
      protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
        if (ctx.op === 'putIfAbsent' && ctx.key?.endsWith('.replaced.json') === true) await listHeld;
        return call();
      }
    }
    const runs = new RunStore(new SlowList(inner));
    const ref = (await runs.writeCompacted({ type, refs, dropTombstones: true })) as RunRef;
    // The run's own put lands; the list's does not yet. Asked only now, the run is still not stored.
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect((await listAll(inner, 'runs/')).some((o) => o.key === ref.key)).toBe(true);
    let stored = false;
    const waiting = runs.stored([ref]).then(() => (stored = true));
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(stored).toBe(false);
    release();
    await waiting;
    expect((await new RunStore(inner).replacedBy(ref)).map((r) => r.key)).toEqual(refs.map((r) => r.key));
  });

  it('writes the run and the list of what it replaced together; either failing fails the run as stored, and deleting it leaves neither', async () => {
    const inner = new MemoryStore();
    const setup = new RunStore(inner);
    const refs = [await setup.write(type, [row('a', 1)]), await setup.write(type, [row('a', 2), row('b', 3)])];
    await setup.stored(refs);
    const held = new HeldPuts(inner);
    const compacting = new RunStore(held);
    const ref = (await compacting.writeCompacted({ type, refs, dropTombstones: true })) as RunRef;
    await compacting.stored([ref]);
    expect(held.most).toBe(2);
    expect((await new RunStore(inner).replacedBy(ref)).map((r) => r.key)).toEqual(refs.map((r) => r.key));
    const before = (await listAll(inner, 'runs/')).map((o) => o.key).sort();
    for (const failing of [/\.replaced\.json$/, /\.rows\.json$/]) {
      const runs = new RunStore(new HeldPuts(inner, failing));
      const failed = (await runs.writeCompacted({ type, refs, dropTombstones: true })) as RunRef;
      await expect(runs.stored([failed])).rejects.toMatchObject({ code: 'store_unavailable' });
      await runs.delete([failed]);
      expect((await listAll(inner, 'runs/')).map((o) => o.key).sort()).toEqual(before);
    }
  });
});

describe('RunStore cache budget', () => {
  const type = parseSchema('node T { id: string @key\n email: string\n a: int }').types[0] as TableType;
  const rows = (from: number, length = 100) =>
    Array.from({ length }, (_, n) => {
      const id = `k${String(from + n).padStart(6, '0')}`;
      return { key: id, tomb: false, hash: `h${from + n}`, props: { id, email: `${id}@example.com`, a: from + n } };
    });
  /** The newest of `refs` is still held; the oldest went when the budget filled, and is read again. */
  const newestHeldOldestRead = async (runs: RunStore, counting: CountingStore, refs: RunRef[]) => {
    counting.reset();
    const [oldest, newest] = [refs[0] as RunRef, refs.at(-1) as RunRef];
    expect((await runs.load(type, newest)).length).toBe(newest.rows);
    expect(counting.snapshot().total.calls).toBe(0);
    expect((await runs.load(type, oldest)).length).toBe(oldest.rows);
    expect(counting.snapshot().get.calls).toBe(1);
  };

  it('weighs a compact run by the row objects it is held as, not by its compressed bytes', async () => {
    const counting = new CountingStore(new MemoryStore());
    // Ten 100-row compact runs are about 2 KB each stored, and about 30 KB each held as rows.
    const runs = new RunStore(counting, { cacheBytes: 128 * 1024 });
    const refs: RunRef[] = [];
    for (let i = 0; i < 10; i++) refs.push(await runs.write(type, rows(i * 100)));
    expect(refs.every((r) => r.key.endsWith(COMPACT_RUN_SUFFIX) && r.bytes < 4096)).toBe(true);
    await newestHeldOldestRead(runs, counting, refs);
  });

  it('weighs an Arrow run by its bytes and the keys, hashes and values decoded from them', async () => {
    const counting = new CountingStore(new MemoryStore());
    const probe = await new RunStore(new MemoryStore()).write(type, rows(0, 1000));
    expect(probe.key.endsWith(COMPACT_RUN_SUFFIX)).toBe(false);
    // Room for three runs by their stored bytes, not for two once their rows are counted.
    const runs = new RunStore(counting, { cacheBytes: 3 * probe.bytes });
    await newestHeldOldestRead(runs, counting, [await runs.write(type, rows(0, 1000)), await runs.write(type, rows(1000, 1000))]);
  });
});
