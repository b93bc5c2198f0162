import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ReservationRefused, runCatchUpPipeline, type PipelineHooks, type PipelineOptions } from './catch-up-pipeline.js';

/** A fake batch: `gens` generations of `bytes` each; reads and commits finish when the test says so. */
interface Batch {
  id: number;
  gens: number;
  bytes: number;
  failRead?: boolean;
  failCommit?: boolean;
  stale?: boolean;
}

interface Trace {
  events: string[];
  alive: number;
  maxAlive: number;
  reserved: number[];
  discarded: number[];
}

/**
 * Hooks that log every step. Each read and commit yields to the event loop a
 * few times, so overlap is real but the order of events is deterministic.
 */
function fakeHooks(trace: Trace, readTicks = 3, commitTicks = 3): PipelineHooks<Batch, Batch> {
  const ticks = async (n: number, signal?: AbortSignal): Promise<void> => {
    for (let i = 0; i < n; i++) {
      await new Promise((r) => setImmediate(r));
      if (signal?.aborted) throw new Error('read aborted');
    }
  };
  return {
    estimate: (b) => b.gens * b.bytes,
    read: async (b, reservation, signal) => {
      trace.events.push(`read+${b.id}`);
      trace.alive++;
      trace.maxAlive = Math.max(trace.maxAlive, trace.alive);
      try {
        for (let i = 0; i < b.gens; i++) {
          reservation.grow(b.bytes);
          trace.reserved.push(reservation.bytes);
          await ticks(readTicks, signal);
        }
        if (b.failRead) throw new Error(`read ${b.id} failed`);
        trace.events.push(`read-${b.id}`);
        return b;
      } catch (e) {
        trace.alive--;
        trace.events.push(`readfail${e instanceof ReservationRefused ? '(oversized)' : ''}-${b.id}`);
        throw e;
      }
    },
    commit: async (b) => {
      trace.events.push(`commit+${b.id}`);
      await ticks(commitTicks);
      trace.alive--;
      if (b.failCommit) {
        trace.events.push(`commitfail-${b.id}`);
        throw new Error(`commit ${b.id} failed`);
      }
      trace.events.push(`commit-${b.id}`);
      return b.stale ? 'stale' : 'committed';
    },
    discard: async (b) => {
      trace.discarded.push(b.id);
      trace.alive--;
    },
  };
}

const newTrace = (): Trace => ({ events: [], alive: 0, maxAlive: 0, reserved: [], discarded: [] });
const batches = (n: number, gens = 2, bytes = 10): Batch[] => Array.from({ length: n }, (_, id) => ({ id, gens, bytes }));
const run = (bs: Batch[], trace: Trace, opts: Partial<PipelineOptions> = {}, ticks?: [number, number]) =>
  runCatchUpPipeline(bs, fakeHooks(trace, ...(ticks ?? [])), { pipeline: true, budgetBytes: 1000, ...opts });

describe('catch-up pipeline', () => {
  it('reads the next batch while the current one commits, with at most two alive', async () => {
    const t = newTrace();
    const out = await run(batches(4), t);
    expect(out.committed).toBe(4);
    expect(out.stopped).toBeUndefined();
    expect(out.overlapped).toBe(3);
    expect(out.maxAlive).toBe(2);
    expect(t.maxAlive).toBe(2);
    // Batch 1's read starts before batch 0's commit ends.
    expect(t.events.indexOf('read+1')).toBeLessThan(t.events.indexOf('commit-0'));
  });

  it('commits strictly in batch order, one at a time', async () => {
    const t = newTrace();
    await run(batches(5), t, {}, [1, 6]);
    const commits = t.events.filter((e) => e.startsWith('commit'));
    expect(commits).toEqual([
      'commit+0',
      'commit-0',
      'commit+1',
      'commit-1',
      'commit+2',
      'commit-2',
      'commit+3',
      'commit-3',
      'commit+4',
      'commit-4',
    ]);
  });

  it('bounded lookahead: a slow commit never lets more than one batch be read ahead', async () => {
    const t = newTrace();
    const out = await run(batches(6), t, {}, [1, 20]);
    expect(out.maxAlive).toBe(2);
    for (let k = 2; k < 6; k++) expect(t.events.indexOf(`read+${k}`)).toBeGreaterThan(t.events.indexOf(`commit-${k - 2}`));
  });

  it('serial mode reads only after the previous commit finished', async () => {
    const t = newTrace();
    const out = await run(batches(3), t, { pipeline: false });
    expect(out.overlapped).toBe(0);
    expect(out.maxAlive).toBe(1);
    expect(t.events).toEqual([
      'read+0',
      'read-0',
      'commit+0',
      'commit-0',
      'read+1',
      'read-1',
      'commit+1',
      'commit-1',
      'read+2',
      'read-2',
      'commit+2',
      'commit-2',
    ]);
  });

  it('a budget admitting only one batch degrades to serial, without retries', async () => {
    const t = newTrace();
    const out = await run(batches(4, 2, 10), t, { budgetBytes: 30 });
    expect(out.committed).toBe(4);
    expect(out.overlapped).toBe(0);
    expect(out.retries).toBe(0);
    expect(out.maxAlive).toBe(1);
  });

  it('an oversized prefetch waits for the preceding commit and is retried exactly once, alone', async () => {
    const t = newTrace();
    // Estimates fit (batch 1 looks small) but its second generation is huge.
    const hooks = fakeHooks(t, 2, 8);
    const bs: Batch[] = [
      { id: 0, gens: 2, bytes: 40 },
      { id: 1, gens: 2, bytes: 40 },
      { id: 2, gens: 1, bytes: 10 },
    ];
    const out = await runCatchUpPipeline(bs, { ...hooks, estimate: (b) => b.bytes }, { pipeline: true, budgetBytes: 120 });
    expect(out.retries).toBe(1);
    expect(out.committed).toBe(3);
    const ev = t.events;
    expect(ev.filter((e) => e === 'readfail(oversized)-1')).toHaveLength(1);
    // The retry starts only after batch 0 committed, and no later batch is read meanwhile.
    const retry = ev.lastIndexOf('read+1');
    expect(retry).toBeGreaterThan(ev.indexOf('commit-0'));
    expect(ev.indexOf('read+2')).toBeGreaterThan(ev.indexOf('read-1'));
    // Alone, a batch may exceed the budget rather than never folding.
    expect(Math.max(...t.reserved)).toBe(80);
  });

  it('a read failure lets the preceding commit finish, then stops', async () => {
    const t = newTrace();
    const bs = batches(4);
    (bs[1] as Batch).failRead = true;
    const out = await run(bs, t, {}, [1, 6]);
    expect(out.stopped).toBe('error');
    expect((out.error as Error).message).toBe('read 1 failed');
    expect(out.committed).toBe(1);
    expect(t.events).toContain('commit-0');
    expect(t.events).not.toContain('read+2');
  });

  it('a commit failure drops the queued batch and releases its memory', async () => {
    const t = newTrace();
    const bs = batches(4);
    (bs[0] as Batch).failCommit = true;
    const out = await run(bs, t, {}, [1, 6]);
    expect(out.stopped).toBe('error');
    expect((out.error as Error).message).toBe('commit 0 failed');
    expect(out.committed).toBe(0);
    expect(t.events).not.toContain('commit+1');
    // Batch 1 was read (or aborted while reading) and never committed; nothing stays alive.
    expect(t.alive).toBe(0);
  });

  it('a stale commit stops the round and discards the queued batch', async () => {
    const t = newTrace();
    const bs = batches(3);
    (bs[0] as Batch).stale = true;
    const out = await run(bs, t, {}, [1, 6]);
    expect(out.stopped).toBe('stale');
    expect(t.discarded).toContain(0);
    expect(t.events).not.toContain('commit+1');
  });

  it('cancellation aborts the read in progress and releases every reservation', async () => {
    const t = newTrace();
    const ctl = new AbortController();
    const hooks = fakeHooks(t, 5, 5);
    const commit = hooks.commit;
    hooks.commit = async (b, s) => {
      if (b.id === 1) ctl.abort();
      return commit(b, s);
    };
    const out = await runCatchUpPipeline(batches(5), hooks, { pipeline: true, budgetBytes: 1000, signal: ctl.signal });
    expect(out.stopped).toBe('aborted');
    expect(out.committed).toBeLessThanOrEqual(2);
    expect(t.events).not.toContain('read+4');
    expect(t.alive).toBe(0);
  });

  it('never deadlocks and never exceeds two alive, for any sizes and budgets (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ gens: fc.integer({ min: 1, max: 4 }), bytes: fc.integer({ min: 1, max: 60 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.integer({ min: 1, max: 200 }),
        fc.boolean(),
        async (sizes, budget, pipeline) => {
          const t = newTrace();
          const out = await runCatchUpPipeline(
            sizes.map((s, id) => ({ id, ...s })),
            { ...fakeHooks(t, 1, 2), estimate: (b) => b.bytes },
            { pipeline, budgetBytes: budget },
          );
          expect(out.committed).toBe(sizes.length);
          expect(out.maxAlive).toBeLessThanOrEqual(pipeline ? 2 : 1);
          expect(out.retries).toBeLessThanOrEqual(sizes.length);
          expect(t.alive).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });
});
