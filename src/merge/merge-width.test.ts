import { describe, expect, it } from 'vitest';
import { mustWrite } from '../../test/support/fixtures.js';
import { Graph } from '../graph/graph.js';
import { LatencyStore } from '../store/latency-store.js';
import { abortableSleep } from '../store/abortable-sleep.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll, type ObjectStore } from '../store/object-store.js';
import { mergeBranches, mergeSpec, type MergeResult } from './merge.js';
import { PreparationGauges } from './preparation-scheduler.js';
import { cloneMemoryStore as clone } from '../../test/support/stores.js';

/** Delays every call on a run object by 30 ms, abortably. */
class SlowRuns extends StoreWrapper {
  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    if (ctx.key.startsWith('runs/')) await abortableSleep(30, ctx.signal);
    return call();
  }
}

const TABLES = Array.from({ length: 10 }, (_, i) => `T${String(i).padStart(2, '0')}`);

/** Ten tables changed on both sides; with `conflicting`, two of them conflict. */
async function setup(conflicting: boolean): Promise<MemoryStore> {
  const store = new MemoryStore();
  const g = await Graph.open(store);
  await g.applySchema('main', TABLES.map((t) => `node ${t} { id: string @key\n a: int\n b: int }`).join('\n'));
  for (const t of TABLES)
    await mustWrite(
      g,
      'main',
      [1, 2, 3, 4].map((i) => ({ op: 'insert' as const, table: t, values: { id: `r${i}`, a: 0, b: 0 } })),
    );
  await g.createBranch('f', { branch: 'main' });
  for (const [i, t] of TABLES.entries()) {
    await mustWrite(g, 'f', [
      { op: 'update', table: t, values: { id: 'r1', a: 1 } },
      { op: 'update', table: t, values: { id: 'r2', a: 1 } },
    ]);
    const clash = conflicting && (i === 3 || i === 7);
    await mustWrite(g, 'main', [
      { op: 'update', table: t, values: { id: clash ? 'r1' : 'r3', a: 2 } },
      { op: 'update', table: t, values: { id: 'r4', b: 2 } },
    ]);
  }
  return store;
}

/** The published manifest with ids, times and the keys of runs new to this merge blanked out. */
async function normalizedHead(store: ObjectStore, before: Set<string>): Promise<unknown> {
  const g = await Graph.open(store);
  const { tableTree: _t, ancestry, ...head } = (await g.branchHead('main')).manifest;
  const m = structuredClone({ ...head, ancestry: Object.fromEntries([...ancestry.entries()].sort()) }) as unknown as Record<
    string,
    unknown
  > & { commit: Record<string, unknown> };
  delete m.commit.id;
  delete m.commit.time;
  return JSON.parse(JSON.stringify(m, (k, v) => (k === 'key' && typeof v === 'string' && !before.has(v) ? '<new run>' : v)));
}

describe('merges at widths 1, 2 and 4', () => {
  it('publish identical manifests (apart from ids and times)', async () => {
    const original = await setup(false);
    const before = new Set((await listAll(original, '')).map((o) => o.key));
    const heads: unknown[] = [];
    for (const width of [1, 2, 4] as const) {
      const store = await clone(original);
      const r = await mergeBranches((await Graph.open(store)).ports, mergeSpec({ source: 'f', width }));
      expect(r).toMatchObject({ status: 'success', outcome: 'merged' });
      expect(r.metrics.maxWidth).toBe(width);
      heads.push(await normalizedHead(store, before));
    }
    expect(heads[1]).toEqual(heads[0]);
    expect(heads[2]).toEqual(heads[0]);
  });

  it('report identical conflict lists', async () => {
    const original = await setup(true);
    const reports: MergeResult[] = [];
    for (const width of [1, 2, 4] as const)
      reports.push(await mergeBranches((await Graph.open(await clone(original))).ports, mergeSpec({ source: 'f', width })));
    const lists = reports.map((r) => (r.status === 'conflicts' ? r.report.items.map((c) => [c.kind, c.table, c.key, c.property]) : []));
    expect(lists[0]).toEqual([
      ['DivergentUpdate', 'T03', 'r1', 'a'],
      ['DivergentUpdate', 'T07', 'r1', 'a'],
    ]);
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
  });

  it('an abort in the middle of width-4 preparation drains, publishes nothing, removes scratch; a retry succeeds', async () => {
    const original = await setup(false);
    const inner = await clone(original);
    const before = new Set((await listAll(inner, '')).map((o) => o.key));
    // Run objects answer slowly, so preparations wait on them (their reads were started early, with
    // the merge's signal) long enough to be caught in flight.
    const slow = new SlowRuns(new LatencyStore(inner, 5));
    const g = await Graph.open(slow);
    const headBefore = (await g.branchHead('main')).manifest.commit.id;
    const ac = new AbortController();
    const gauges = new PreparationGauges();
    const poll = setInterval(() => {
      if (gauges.inFlight >= 2) ac.abort();
    }, 1);
    const err = await mergeBranches(g.ports, mergeSpec({ source: 'f', width: 4 }), { gauges, signal: ac.signal }).catch((e: unknown) => e);
    clearInterval(poll);
    expect(err).toMatchObject({ code: 'aborted' });
    expect(gauges).toMatchObject({ inFlight: 0, reservedBytes: 0, pendingScratch: 0 });
    expect((await Graph.open(inner).then((x) => x.branchHead('main'))).manifest.commit.id).toBe(headBefore);
    const leftovers = (await listAll(inner, '')).map((o) => o.key).filter((k) => !before.has(k) && !k.startsWith('hints/'));
    expect(leftovers).toEqual([]);
    const retry = await mergeBranches((await Graph.open(slow)).ports, mergeSpec({ source: 'f', width: 4 }));
    expect(retry).toMatchObject({ status: 'success', outcome: 'merged' });
  });
});
