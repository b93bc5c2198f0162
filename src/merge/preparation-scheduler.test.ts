import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BranchgraphError } from '../model/errors.js';
import {
  AdmissionPlanner,
  effectiveWidth,
  PreparationGauges,
  runPreparations,
  type PrepTask,
  type Width,
} from './preparation-scheduler.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Fake preparations that record overlap and order. */
function fakeTasks(durations: number[], sizes: number[] = durations.map(() => 1), fail: Record<number, number> = {}) {
  const log = {
    running: 0,
    maxRunning: 0,
    starts: [] as number[],
    finishes: [] as number[],
    overlapWithOversized: false,
    settled: new Set<number>(),
  };
  const tasks: PrepTask<string>[] = durations.map((d, i) => ({
    table: `T${String(i).padStart(2, '0')}`,
    estimateBytes: sizes[i] ?? 1,
    run: async () => {
      log.running++;
      log.maxRunning = Math.max(log.maxRunning, log.running);
      log.starts.push(i);
      try {
        await sleep(fail[i] ?? d);
        if (fail[i] !== undefined) throw new BranchgraphError('store_error', `table ${i} failed`);
        return `result-${i}`;
      } finally {
        log.running--;
        log.finishes.push(i);
        log.settled.add(i);
      }
    },
  }));
  return { tasks, log };
}

describe('AdmissionPlanner (pure decisions)', () => {
  it('admits in canonical order up to the width, and says done only when idle', () => {
    const p = new AdmissionPlanner([1, 1, 1], 2, 100);
    expect(p.decide()).toEqual({ kind: 'start', index: 0, reserve: 1 });
    p.started(0, 1);
    expect(p.decide()).toEqual({ kind: 'start', index: 1, reserve: 1 });
    p.started(1, 1);
    expect(p.decide()).toEqual({ kind: 'wait' });
    p.finished(0);
    expect(p.decide()).toEqual({ kind: 'start', index: 2, reserve: 1 });
    p.started(2, 1);
    expect(p.decide()).toEqual({ kind: 'wait' });
    p.finished(1);
    p.finished(2);
    expect(p.decide()).toEqual({ kind: 'done' });
  });

  it('steps the width down 4 → 2 → 1 when reservations are refused, and records each step', () => {
    const p = new AdmissionPlanner([40, 40, 40, 40, 40], 4, 100);
    p.started(0, 40);
    p.started(1, 40);
    expect(p.decide()).toEqual({ kind: 'wait' });
    expect(p.width).toBe(2);
    p.finished(0);
    p.started(2, 40);
    p.finished(1);
    p.started(3, 40);
    expect(p.decide()).toEqual({ kind: 'wait' });
    expect(p.width).toBe(2);
    p.finished(2);
    expect(p.decide()).toEqual({ kind: 'start', index: 4, reserve: 40 });
    expect(p.fallbacks).toEqual([{ index: 2, from: 4, to: 2 }]);
    const q = new AdmissionPlanner([60, 60, 60], 4, 100);
    q.started(0, 60);
    q.decide();
    q.decide();
    expect(q.fallbacks.map((f) => [f.from, f.to])).toEqual([[4, 2]]);
  });

  it('runs a table larger than the budget alone, holding the whole budget', () => {
    const p = new AdmissionPlanner([10, 500, 10], 4, 100);
    p.started(0, 10);
    expect(p.decide()).toEqual({ kind: 'wait' });
    p.finished(0);
    expect(p.decide()).toEqual({ kind: 'start', index: 1, reserve: 100 });
    p.started(1, 100);
    expect(p.decide()).toEqual({ kind: 'wait' });
  });

  it('never deadlocks: every arrangement of sizes, widths and budgets finishes', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(300), { maxLength: 12 }),
        fc.constantFrom<Width>(1, 2, 4),
        fc.integer({ min: 1, max: 200 }),
        (sizes, width, budget) => {
          const p = new AdmissionPlanner(sizes, width, budget);
          const running: number[] = [];
          for (let steps = 0; steps < 1000; steps++) {
            const d = p.decide();
            if (d.kind === 'done') return;
            if (d.kind === 'start') {
              p.started(d.index, d.reserve);
              running.push(d.index);
              expect(p.reserved).toBeLessThanOrEqual(Math.max(budget, p.reserved));
              expect(p.inFlight).toBeLessThanOrEqual(width);
            } else {
              expect(running.length).toBeGreaterThan(0);
              p.finished(running.shift() as number);
            }
          }
          throw new Error('the planner did not finish');
        },
      ),
    );
  });

  it('clamps requested widths, with a hard cap for HTTP', () => {
    expect([effectiveWidth(undefined), effectiveWidth(3), effectiveWidth(4), effectiveWidth(9)]).toEqual([1, 2, 4, 4]);
    expect(effectiveWidth(4, 1)).toBe(1);
  });
});

describe('runPreparations', () => {
  it('overlap never exceeds the width, and results come back in canonical order', async () => {
    for (const width of [1, 2, 4] as const) {
      const { tasks, log } = fakeTasks([30, 5, 20, 1, 10, 2, 8, 3]);
      const out = await runPreparations(tasks, { width });
      expect(log.maxRunning).toBeLessThanOrEqual(width);
      expect(out.maxWidth).toBe(width);
      expect(out.results).toEqual(tasks.map((_, i) => `result-${i}`));
      expect(log.starts).toEqual([...log.starts].sort((a, b) => a - b));
    }
  });

  it('a budget admitting one preparation runs serially and still finishes', async () => {
    const { tasks, log } = fakeTasks([5, 5, 5, 5], [60, 60, 60, 60]);
    const out = await runPreparations(tasks, { width: 4, budgetBytes: 100 });
    expect(log.maxRunning).toBe(1);
    expect(out.results.every((r) => r !== undefined)).toBe(true);
    expect(out.fallbacks.map((f) => f.to)).toEqual([2, 1]);
  });

  it('an oversized table runs alone', async () => {
    const { tasks, log } = fakeTasks([10, 10, 10, 10], [1, 1000, 1, 1]);
    const alone: number[] = [];
    const wrapped = tasks.map((t, i) => ({
      ...t,
      run: async () => {
        if (i === 1) alone.push(log.running);
        const r = await t.run();
        return r;
      },
    }));
    const out = await runPreparations(wrapped, { width: 4, budgetBytes: 100 });
    expect(alone).toEqual([0]);
    expect(out.results).toHaveLength(4);
  });

  it('reports the failing table earliest in canonical order, after draining the rest', async () => {
    // Table 3 fails first in time, table 1 later: table 1 is reported.
    const { tasks, log } = fakeTasks([50, 50, 50, 50, 50], undefined, { 1: 40, 3: 5 });
    const gauges = new PreparationGauges();
    const out = await runPreparations(tasks, { width: 4, gauges });
    expect(out.failure?.index).toBe(1);
    expect(out.failure?.table).toBe('T01');
    expect(log.starts).not.toContain(4);
    expect(log.settled.size).toBe(log.starts.length);
    expect(gauges.inFlight).toBe(0);
    expect(gauges.reservedBytes).toBe(0);
  });

  it('abort stops admissions and drains in-flight work before returning', async () => {
    const { tasks, log } = fakeTasks([40, 40, 40, 40, 40, 40, 40, 40]);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 10);
    const gauges = new PreparationGauges();
    const out = await runPreparations(tasks, { width: 4, signal: ac.signal, gauges });
    expect(out.aborted).toBe(true);
    expect(log.starts).toEqual([0, 1, 2, 3]);
    expect(log.settled.size).toBe(4);
    expect(gauges.inFlight).toBe(0);
  });
});
