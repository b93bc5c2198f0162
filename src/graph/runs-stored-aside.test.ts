/**
 * A write's run is stored beside its commit and event, not a round trip before them
 * (run-store.ts header), and still no manifest names a run that is not stored.
 */
import { describe, expect, it } from 'vitest';
import { mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { WaveStore } from '../../test/support/wave-store.js';
import { BranchgraphError } from '../model/errors.js';
import { parseSchema } from '../model/schema-parser.js';
import type { TableType } from '../model/schema.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll, type ObjectStore } from '../store/object-store.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import { RunStore } from './run-store.js';
import { Graph } from './graph.js';
import { namedRuns } from './manifest.js';

/** Puts of runs (those of objects whose key `matches`) fail while `failing`; or are held until `release()`. */
class RunPuts extends StoreWrapper {
  failing = false;
  holding = false;
  private held: (() => void)[] = [];
  constructor(
    inner: ObjectStore,
    private readonly matches = (key: string) => key.endsWith('.rows.json'),
  ) {
    super(inner);
  }
  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    if (ctx.op === 'putIfAbsent' && ctx.key !== undefined && this.matches(ctx.key)) {
      if (this.failing) throw new BranchgraphError('store_unavailable', `put of ${ctx.key} failed`);
      if (this.holding) await new Promise<void>((r) => this.held.push(r));
    }
    return call();
  }
  release(): void {
    for (const r of this.held.splice(0)) r();
  }
}

const type = parseSchema('node T { id: string @key\n a: int }').types[0] as TableType;
const row = (k: string, a: number) => ({ key: k, tomb: false, hash: `h${a}`, props: { id: k, a } });
const keysUnder = async (store: ObjectStore, prefix: string) => (await listAll(store, prefix)).map((o) => o.key).sort();

describe('runs stored aside', () => {
  it('a warm write takes two round trips: its runs, commit and event together, then its manifest', async () => {
    const waves = new WaveStore(new MemoryStore());
    const g = await peopleGraph(waves);
    await mustWrite(g, 'main', [person('a')]);
    await g.idle();
    // Enough writes for the write path to fold the table's piled-up runs, and its index's, on the way.
    const ids = Array.from({ length: 12 }, (_, i) => `p${i}`);
    for (const id of ids) {
      const { value, waves: n } = await waves.waves(() => g.write('main', [person(id)]));
      expect(value.status).toBe('published');
      expect(n).toBe(2);
      await g.idle();
    }
    const head = await g.branchHead('main');
    expect([...namedRuns(head.manifest.tables)].some((r) => r.compacted === true)).toBe(true);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a', ...ids].sort());
    await g.close();
  });

  it('a run whose put fails fails its write, which publishes nothing and leaves no run behind', async () => {
    const store = new RunPuts(new MemoryStore());
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a')]);
    await g.idle();
    const before = await g.branchHead('main');
    const runs = await keysUnder(store, 'runs/');
    store.failing = true;
    await expect(g.write('main', [person('b')])).rejects.toMatchObject({ code: 'store_unavailable' });
    store.failing = false;
    await g.idle();
    expect((await g.branchHead('main')).ref).toEqual(before.ref);
    expect(await keysUnder(store, 'runs/')).toEqual(runs);
    // The next write goes ahead as if the failed one had never been.
    await mustWrite(g, 'main', [person('c')]);
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a', 'c']);
    await g.close();
  });

  it('a write of a hundred rows whose fold makes a run of several segments still takes two round trips', async () => {
    const waves = new WaveStore(new MemoryStore());
    const g = await peopleGraph(waves);
    await mustWrite(g, 'main', [person('a')]);
    await g.idle();
    let segmented = 0;
    for (let w = 0; w < 24; w++) {
      const batch = Array.from({ length: 100 }, (_, i) => person(`p${w}_${String(i).padStart(3, '0')}`));
      const { value, waves: n } = await waves.waves(() => g.write('main', batch));
      expect(value.status).toBe('published');
      expect(n, `write ${w}`).toBe(2);
      await g.idle();
      const head = await g.branchHead('main');
      if ([...namedRuns(head.manifest.tables)].some((r) => r.segmented === true && r.compacted === true)) segmented++;
    }
    // Folds of more than a segment's rows happened on the way, and were counted above.
    expect(segmented).toBeGreaterThan(0);
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toHaveLength(2401);
    await g.close();
  });

  it('a segment whose put fails fails its write, which publishes nothing and leaves none of the run behind', async () => {
    const store = new RunPuts(new MemoryStore(), (key) => /\/\d{6}\.arrow$/.test(key));
    const g = await peopleGraph(store);
    const runs = async () => keysUnder(store, 'runs/');
    // A first write of more than a segment's rows makes a run of two segments.
    store.failing = true;
    const batch = Array.from({ length: 1500 }, (_, i) => person(`p${String(i).padStart(4, '0')}`));
    await expect(g.write('main', batch)).rejects.toMatchObject({ code: 'store_unavailable' });
    store.failing = false;
    await g.idle();
    expect(await runs()).toEqual([]);
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toEqual([]);
    await mustWrite(g, 'main', batch);
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toHaveLength(1500);
    expect((await runs()).some((k) => /\/000001\.arrow$/.test(k))).toBe(true);
    await g.close();
  });

  it('a segmented run whose segment put failed is forgotten whole by its delete', async () => {
    const store = new RunPuts(new MemoryStore(), (key) => key.endsWith('/000000.arrow'));
    store.failing = true;
    const runs = new RunStore(store);
    const ref = await runs.write(
      type,
      Array.from({ length: 1500 }, (_, i) => row(`k${String(i).padStart(4, '0')}`, i)),
    );
    const segments = await runs.segments(ref);
    expect(segments).toHaveLength(2);
    await expect(runs.stored([ref])).rejects.toMatchObject({ code: 'store_unavailable' });
    await expect(runs.stored(segments)).rejects.toMatchObject({ code: 'store_unavailable' });
    await runs.delete([ref]);
    // Nothing of it is waited for any more, the failure included; nothing of it is left stored.
    await expect(runs.stored([ref, ...segments])).resolves.toBeUndefined();
    expect(await keysUnder(store, 'runs/')).toEqual([]);
  });

  it('a run still being stored is read once its put lands, and a delete lets the put land first', async () => {
    const store = new RunPuts(new MemoryStore());
    store.holding = true;
    const runs = new RunStore(store);
    const ref = await runs.write(type, [row('a', 1)]);
    // Out of the cache, as after an eviction: the read must come from the store.
    runs.clear();
    let read = false;
    const loaded = runs.load(type, ref).then((d) => {
      read = true;
      return d.length;
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(read).toBe(false);
    store.release();
    expect(await loaded).toBe(1);

    const doomed = await runs.write(type, [row('b', 2)]);
    const deleted = runs.delete([doomed]);
    store.release();
    await deleted;
    expect(await keysUnder(store, 'runs/')).toEqual([ref.key]);
    await expect(runs.stored([ref, doomed])).resolves.toBeUndefined();
  });
});

describe('a write planned on the head this process last published', () => {
  /** Two processes on one store, both knowing main as `a`'s write left it. */
  async function twoProcesses() {
    const store = new MemoryStore();
    const a = await peopleGraph(store);
    await mustWrite(a, 'main', [person('a1')]);
    await a.idle();
    const b = await Graph.open(store, { actor: 'b' });
    return { store, a, b };
  }

  /** Every run stored is named by main's head, and every commit stored is in main's history: a speculation left nothing. */
  async function nothingLeftOver(store: ObjectStore, g: Graph): Promise<void> {
    await g.idle();
    const head = await g.branchHead('main');
    const named = new Set([...namedRuns(head.manifest.tables)].map((r) => r.key));
    for (const key of await keysUnder(store, 'runs/')) if (key.endsWith('.rows.json')) expect(named).toContain(key);
    const events = (await g.events({ after: 0, limit: 100 })).events;
    const commits = await keysUnder(store, 'commits/');
    // The graph's first commit has no event.
    expect(commits.length).toBe(events.filter((e) => e.kind === 'commit').length + 1);
  }

  it('writes beside the stored head read, and when another process moved the head, plans again and lands on it', async () => {
    const { store, a, b } = await twoProcesses();
    await mustWrite(b, 'main', [person('b1')]);
    await b.idle();
    // a still knows main as its own write left it: its next write is planned on that, found out, and planned again.
    await mustWrite(a, 'main', [person('a2')]);
    expect(Object.keys(await rowsOf(b, 'main', 'Person')).sort()).toEqual(['a1', 'a2', 'b1']);
    const events = (await b.events({ after: 0, limit: 100 })).events.filter((e) => e.kind === 'commit');
    expect(events.map((e) => e.actor)).toEqual(['test', 'test', 'b', 'test']);
    await nothingLeftOver(store, b);
  });

  it('a branch protected by another process meanwhile refuses the write, which leaves nothing behind', async () => {
    const { store, a, b } = await twoProcesses();
    await b.protectBranch('main', { requiredApprovals: 1, allowAdminBypass: false, staleApprovals: 'result_change', requiredChecks: [] });
    const before = (await b.branchHead('main')).ref;
    await expect(a.write('main', [person('a2')])).rejects.toMatchObject({ code: 'branch_protected' });
    expect((await b.branchHead('main')).ref).toEqual(before);
    await nothingLeftOver(store, b);
  });

  it('unprotected by another process meanwhile, the branch takes the write', async () => {
    const { a, b } = await twoProcesses();
    await b.protectBranch('main', { requiredApprovals: 1, allowAdminBypass: false, staleApprovals: 'result_change', requiredChecks: [] });
    await expect(a.write('main', [person('a2')])).rejects.toMatchObject({ code: 'branch_protected' });
    await b.protectBranch('main', null);
    await mustWrite(a, 'main', [person('a3')]);
    expect(Object.keys(await rowsOf(b, 'main', 'Person')).sort()).toEqual(['a1', 'a3']);
  });
});

describe('work holding a branch', () => {
  const turn = () => new Promise((r) => setImmediate(r));

  it('publishes on the head it read while a steady writer in the process waits, and the writer goes on after', async () => {
    const g = await peopleGraph();
    let stop = false;
    let writes = 0;
    const writer = (async () => {
      while (!stop) {
        await turn();
        await mustWrite(g, 'main', [person(`w${writes++}`)]);
      }
    })();
    while (writes < 3) await turn();
    for (let i = 0; i < 5; i++) {
      const before = writes;
      const r = await g.holdingWriters('main', async () => {
        const head = await g.branchHead('main');
        // Time enough for the writer to land a write or two, were it not held.
        for (let t = 0; t < 30; t++) await turn();
        return await g.write('main', [person(`h${i}`)], { expectedHead: head.manifest.commit.id });
      });
      expect(r.status).toBe('published');
      while (writes < before + 2) await turn();
    }
    stop = true;
    await writer;
    const rows = Object.keys(await rowsOf(g, 'main', 'Person'));
    expect(rows.filter((k) => k.startsWith('h')).sort()).toEqual(['h0', 'h1', 'h2', 'h3', 'h4']);
    expect(rows.filter((k) => k.startsWith('w')).length).toBe(writes);
    await g.close();
  });
});
