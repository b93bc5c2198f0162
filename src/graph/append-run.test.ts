import { describe, expect, it } from 'vitest';
import { mergeOk, mustWrite, rowsOf } from '../../test/support/fixtures.js';
import { CountingStore } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { COMPACTION_FANOUT, INLINE_BOUND, INLINE_MIN_RUNS } from '../table/compaction-policy.js';
import type { RunRef } from '../table/run.js';
import type { TableType } from '../model/schema.js';
import { appendRun, ownRuns } from './append-run.js';
import { Graph, type GraphOptions } from './graph.js';
import type { WriteOp } from './write-batch.js';

const ITEMS = 'node Item { id: string @key\n v: int\n tag: string? @unique }';
const id = (i: number): string => `i${String(i).padStart(4, '0')}`;
const put = (i: number, v = i): WriteOp => ({ op: 'upsert', table: 'Item', values: { id: id(i), v, tag: `t${i}` } });
const runsOf = async (g: Graph, branch: string) => (await g.branchHead(branch)).manifest.tables.Item?.runs ?? [];
const values = async (g: Graph, branch: string) =>
  Object.fromEntries(Object.values(await rowsOf(g, branch, 'Item')).map((r) => [r.id as string, r.v as number]));

async function items(store: MemoryStore | CountingStore, opts: GraphOptions = {}): Promise<Graph> {
  const g = await Graph.open(store, opts);
  await g.applySchema('main', ITEMS);
  return g;
}

describe('inline compaction on the write path', () => {
  it('one-row writes with no compactor keep a table a bounded number of runs, and every row reads back', async () => {
    const store = new MemoryStore();
    const g = await items(store);
    const model: Record<string, number> = {};
    let most = 0;
    let mostIndex = 0;
    for (let i = 0; i < 300; i++) {
      // Updates and deletes of earlier keys too: newer versions and tombstones pass through the folds.
      const op: WriteOp = i % 7 === 6 ? { op: 'delete', table: 'Item', values: { id: id(i - 3) } } : put(i % 5 === 4 ? i - 2 : i, i);
      // A delete of a key already gone changes nothing.
      await g.write('main', [op]);
      if (op.op === 'delete') delete model[op.values.id as string];
      else model[op.values.id as string] = i;
      most = Math.max(most, (await runsOf(g, 'main')).length);
      // The @unique index gets a run per change past its tail; those fold too.
      const sets = (await g.branchHead('main')).manifest.tables.Item?.indexes?.sets ?? {};
      mostIndex = Math.max(mostIndex, ...Object.values(sets).map((x) => x.runs.length));
    }
    // The due stretch below F + 1 runs, fewer than F runs on each of the few tiers above it.
    expect(most).toBeLessThanOrEqual(INLINE_MIN_RUNS + (COMPACTION_FANOUT - 1) * 4);
    expect(mostIndex).toBeGreaterThan(0);
    expect(mostIndex).toBeLessThanOrEqual(INLINE_MIN_RUNS + (COMPACTION_FANOUT - 1) * 4);
    expect(await values(g, 'main')).toEqual(model);
    // A cold process reads the same, and the @unique index still answers for folded rows.
    const cold = await Graph.open(store);
    expect(await values(cold, 'main')).toEqual(model);
    // The oldest live key: its row went through every fold.
    const live = Object.keys(model).sort()[0] as string;
    const clash = await cold
      .write('main', [{ op: 'insert', table: 'Item', values: { id: 'new', v: 0, tag: `t${Number(live.slice(1))}` } }])
      .catch((e: unknown) => e);
    expect(clash).toMatchObject({ code: 'constraint_violation' });
  });

  it('concurrent writers grouped into one commit fold too', async () => {
    const g = await items(new MemoryStore());
    await Promise.all(
      Array.from({ length: 4 }, async (_, w) => {
        for (let i = 0; i < 40; i++) await mustWrite(g, 'main', [put(w * 100 + i)]);
      }),
    );
    const runs = await runsOf(g, 'main');
    expect(runs.some((r) => r.compacted === true)).toBe(true);
    expect(runs.length).toBeLessThanOrEqual(INLINE_MIN_RUNS + (COMPACTION_FANOUT - 1) * 4);
    expect(Object.keys(await values(g, 'main'))).toHaveLength(160);
  });

  it('off, every write keeps its own run', async () => {
    const g = await items(new MemoryStore(), { inlineCompaction: false });
    for (let i = 0; i < 3 * INLINE_MIN_RUNS; i++) await mustWrite(g, 'main', [put(i)]);
    expect(await runsOf(g, 'main')).toHaveLength(3 * INLINE_MIN_RUNS);
  });

  it('a branch folds only its own runs: the runs it shares with main stay in place', async () => {
    const g = await items(new MemoryStore());
    for (let i = 0; i < INLINE_MIN_RUNS - 1; i++) await mustWrite(g, 'main', [put(i)]);
    await g.createBranch('f', { branch: 'main' });
    const shared = (await runsOf(g, 'f')).map((r) => r.key);
    for (let i = 0; i < 3 * INLINE_MIN_RUNS; i++) await mustWrite(g, 'f', [put(100 + i)]);
    const runs = await runsOf(g, 'f');
    expect(runs.slice(0, shared.length).map((r) => r.key)).toEqual(shared);
    expect(runs.slice(shared.length).some((r) => r.compacted === true)).toBe(true);
    expect(runs.length).toBeLessThan(shared.length + 3 * INLINE_MIN_RUNS);
  });

  it('a merge after both sides folded reads the deltas, not the tables, and merges exactly', async () => {
    /** Merging f into main, cold, after each side wrote past a fold since the fork: store calls, outcome, rows, main's runs. */
    const scenario = async (opts: GraphOptions) => {
      const store = new CountingStore(new MemoryStore());
      const g = await items(store, opts);
      await mustWrite(
        g,
        'main',
        Array.from({ length: 200 }, (_, i) => put(i)),
      );
      for (let i = 0; i < INLINE_MIN_RUNS - 1; i++) await mustWrite(g, 'main', [put(i, -i - 1)]);
      await g.createBranch('f', { branch: 'main' });
      for (let i = 0; i < INLINE_MIN_RUNS + 2; i++) {
        await mustWrite(g, 'f', [put(300 + i)]);
        await mustWrite(g, 'main', [put(400 + i)]);
      }
      // A fresh process, once the writer's best-effort writes have landed (they would count as its calls).
      await g.idle();
      const cold = await Graph.open(store, opts);
      store.reset();
      const r = await mergeOk(cold, 'f');
      return {
        calls: store.snapshot().total.calls,
        outcome: r.outcome,
        rows: await values(cold, 'main'),
        main: await runsOf(cold, 'main'),
      };
    };
    const folded = await scenario({});
    const kept = await scenario({ inlineCompaction: false });
    expect(folded.outcome).toBe('merged');
    expect(folded.rows).toEqual(kept.rows);
    expect(Object.keys(folded.rows)).toHaveLength(200 + 2 * (INLINE_MIN_RUNS + 2));
    expect(folded.main.length).toBeLessThan(kept.main.length);
    // What a fold costs a merge: the list of runs it replaced, once per folded side (here main's).
    expect(folded.calls).toBeLessThanOrEqual(kept.calls + 2);
  });
});

describe('appendRun', () => {
  const ref = (key: string, extra: Partial<RunRef> = {}): RunRef => ({
    key,
    rows: 1,
    tombstones: 0,
    bytes: 10,
    minKey: 'a',
    maxKey: 'a',
    checksum: '0'.repeat(32),
    ...extra,
  });
  const own = (n: number, lineage = 'L') => Array.from({ length: n }, (_, i) => ref(`${lineage}${i}`, { origin: `${lineage}:${i + 1}` }));
  const type = { kind: 'node', name: 'Item', key: ['id'], props: [] } as unknown as TableType;
  /** A run store that records what it was asked to fold, and can fail either write. */
  const files = (fail: { write?: boolean; fold?: boolean } = {}) => {
    const folded: RunRef[][] = [];
    return {
      folded,
      runFiles: {
        inlineCompaction: INLINE_BOUND,
        write: async () => {
          if (fail.write) throw new Error('write failed');
          return ref('new');
        },
        writeCompacted: async (r: { refs: readonly RunRef[] }) => {
          folded.push([...r.refs]);
          if (fail.fold) throw new Error('fold failed');
          return ref('folded', { compacted: true });
        },
        delete: async () => undefined,
      },
    };
  };

  it("folds the branch's own due stretch, never a pending run or a run another lineage published", async () => {
    const f = files();
    const a = await appendRun({ ...f, type, rows: [], runs: own(INLINE_MIN_RUNS), foldable: ownRuns('L'), scratch: [] });
    expect(a.map((r) => r.key)).toEqual(['folded', 'new']);
    expect(f.folded[0]).toHaveLength(INLINE_MIN_RUNS);
    const pending = ref('p', { source: { kind: 'pending', generation: 'g', table: 'Item' } } as Partial<RunRef>);
    for (const runs of [
      [...own(INLINE_MIN_RUNS), pending],
      [...own(INLINE_MIN_RUNS, 'M'), ...own(2)],
    ]) {
      const g = files();
      expect(await appendRun({ ...g, type, rows: [], runs, foldable: ownRuns('L'), scratch: [] })).toEqual([...runs, ref('new')]);
      expect(g.folded).toEqual([]);
    }
    // Above a pending run, the own runs fold; the pending run stays for the publication to fold.
    const h = files();
    const above = await appendRun({ ...h, type, rows: [], runs: [pending, ...own(INLINE_MIN_RUNS)], foldable: ownRuns('L'), scratch: [] });
    expect(above.map((r) => r.key)).toEqual(['p', 'folded', 'new']);
    // No lineage known: nothing is folded. The new run carries the @unique properties its rows kept.
    const unknown = await appendRun({
      ...files(),
      type,
      rows: [],
      runs: own(INLINE_MIN_RUNS),
      foldable: ownRuns(undefined),
      keptUnique: ['email'],
      scratch: [],
    });
    expect(unknown).toHaveLength(INLINE_MIN_RUNS + 1);
    expect(unknown.at(-1)?.keptUnique).toEqual(['email']);
  });

  it('when one of the two writes fails, both have settled and what landed is in the scratch', async () => {
    const f = files({ write: true });
    const scratch: RunRef[] = [];
    await expect(appendRun({ ...f, type, rows: [], runs: own(INLINE_MIN_RUNS), foldable: ownRuns('L'), scratch })).rejects.toThrow(
      'write failed',
    );
    expect(scratch.map((r) => r.key)).toEqual(['folded']);
    const g = files({ fold: true });
    const scratch2: RunRef[] = [];
    await expect(
      appendRun({ ...g, type, rows: [], runs: own(INLINE_MIN_RUNS), foldable: ownRuns('L'), scratch: scratch2 }),
    ).rejects.toThrow('fold failed');
    expect(scratch2.map((r) => r.key)).toEqual(['new']);
  });
});
