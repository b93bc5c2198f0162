/**
 * The preparation scheduler: how many tables a merge prepares at once.
 *
 * Tables are admitted in canonical (name) order, at most `width` at a time
 * (1, 2 or 4). Each admission first reserves its estimated bytes from a
 * shared budget. When a reservation cannot be granted while others run, the
 * width steps down (4 → 2 → 1) for the rest of the merge and the step is
 * recorded. A table estimated above the whole budget waits until nothing
 * else runs, then runs alone holding the whole budget. Because an empty
 * scheduler always admits the next table, no arrangement of sizes deadlocks.
 *
 * On the first failure or on abort, admission stops and in-flight work is
 * drained: the runner returns only once every started preparation has
 * settled. The error reported is the failing table earliest in canonical
 * order, whatever failed first in time.
 *
 * `AdmissionPlanner` holds the decisions and is pure; `runPreparations`
 * drives it with real promises.
 */
import { BranchgraphError, toBranchgraphError } from '../model/errors.js';

export type Width = 1 | 2 | 4;
export const WIDTHS: readonly Width[] = [1, 2, 4];
export const DEFAULT_BUDGET_BYTES = 128 * 1024 * 1024;

export type Decision = { kind: 'start'; index: number; reserve: number } | { kind: 'wait' } | { kind: 'done' };

export interface Fallback {
  /** The table whose reservation was refused. */
  index: number;
  from: Width;
  to: Width;
}

export class AdmissionPlanner {
  private nextIndex = 0;
  private readonly running = new Map<number, number>();
  private reservedBytes = 0;
  private stopped = false;
  private refusedSinceChange = false;
  private currentWidth: Width;
  readonly fallbacks: Fallback[] = [];
  maxObservedWidth = 0;

  constructor(
    private readonly estimates: readonly number[],
    width: Width,
    readonly budget: number,
  ) {
    this.currentWidth = width;
  }

  get width(): Width {
    return this.currentWidth;
  }

  get inFlight(): number {
    return this.running.size;
  }

  get reserved(): number {
    return this.reservedBytes;
  }

  decide(): Decision {
    const idle = this.running.size === 0;
    if (this.stopped || this.nextIndex >= this.estimates.length) return idle ? { kind: 'done' } : { kind: 'wait' };
    if (this.running.size >= this.currentWidth) return { kind: 'wait' };
    const index = this.nextIndex;
    const est = Math.max(0, this.estimates[index] ?? 0);
    if (est > this.budget) {
      // Oversized: alone, holding the whole budget so nothing joins it.
      return idle ? { kind: 'start', index, reserve: this.budget } : { kind: 'wait' };
    }
    if (this.reservedBytes + est <= this.budget) return { kind: 'start', index, reserve: est };
    // One step per refusal: asking again before anything changes must not step twice.
    if (this.currentWidth > 1 && !this.refusedSinceChange) {
      const to: Width = this.currentWidth === 4 ? 2 : 1;
      this.fallbacks.push({ index, from: this.currentWidth, to });
      this.currentWidth = to;
    }
    this.refusedSinceChange = true;
    return { kind: 'wait' };
  }

  started(index: number, reserve: number): void {
    if (index !== this.nextIndex) throw new Error(`admission out of order: ${index} != ${this.nextIndex}`);
    this.nextIndex++;
    this.refusedSinceChange = false;
    this.running.set(index, reserve);
    this.reservedBytes += reserve;
    this.maxObservedWidth = Math.max(this.maxObservedWidth, this.running.size);
  }

  finished(index: number): void {
    const r = this.running.get(index);
    if (r === undefined) throw new Error(`finish of a preparation that is not running: ${index}`);
    this.running.delete(index);
    this.refusedSinceChange = false;
    this.reservedBytes -= r;
  }

  /** Stop admitting; running preparations still finish. */
  stop(): void {
    this.stopped = true;
  }
}

/**
 * What merges are holding right now, for metrics: the owner (a service)
 * passes one instance to every merge it runs. The first three return to
 * zero when no merge is preparing.
 */
export class PreparationGauges {
  inFlight = 0;
  reservedBytes = 0;
  /** Scratch runs written and not yet published or deleted. */
  pendingScratch = 0;
  fallbacksTotal = 0;
}

export interface PrepTask<T> {
  table: string;
  estimateBytes: number;
  run: () => Promise<T>;
}

export interface PreparationOutcome<T> {
  /** In canonical order; undefined where a task did not run or failed. */
  results: (T | undefined)[];
  /** The failure of the earliest failing task in canonical order. */
  failure?: { index: number; table: string; error: BranchgraphError };
  aborted: boolean;
  maxWidth: number;
  fallbacks: Fallback[];
}

export interface RunOptions {
  width: Width;
  budgetBytes?: number;
  signal?: AbortSignal;
  onStart?: (table: string, inFlight: number) => void;
  gauges?: PreparationGauges;
}

export async function runPreparations<T>(tasks: readonly PrepTask<T>[], opts: RunOptions): Promise<PreparationOutcome<T>> {
  const planner = new AdmissionPlanner(
    tasks.map((t) => t.estimateBytes),
    opts.width,
    opts.budgetBytes ?? DEFAULT_BUDGET_BYTES,
  );
  const results: (T | undefined)[] = new Array(tasks.length).fill(undefined);
  const failures: { index: number; error: BranchgraphError }[] = [];
  const running = new Map<number, Promise<void>>();
  const gauges = opts.gauges ?? new PreparationGauges();
  let aborted = opts.signal?.aborted === true;
  const onAbort = (): void => {
    aborted = true;
    planner.stop();
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  if (aborted) planner.stop();
  try {
    for (;;) {
      const d = planner.decide();
      if (d.kind === 'done') break;
      if (d.kind === 'wait') {
        await Promise.race(running.values());
        continue;
      }
      const task = tasks[d.index] as PrepTask<T>;
      planner.started(d.index, d.reserve);
      gauges.inFlight++;
      gauges.reservedBytes += d.reserve;
      opts.onStart?.(task.table, planner.inFlight);
      const p = (async () => {
        try {
          results[d.index] = await task.run();
        } catch (e) {
          failures.push({ index: d.index, error: toBranchgraphError(e) });
          planner.stop();
        } finally {
          planner.finished(d.index);
          gauges.inFlight--;
          gauges.reservedBytes -= d.reserve;
          running.delete(d.index);
        }
      })();
      running.set(d.index, p);
    }
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    // Drain: never return while a preparation is still running.
    await Promise.allSettled(running.values());
  }
  gauges.fallbacksTotal += planner.fallbacks.length;
  failures.sort((a, b) => a.index - b.index);
  const first = failures[0];
  const outcome: PreparationOutcome<T> = { results, aborted, maxWidth: planner.maxObservedWidth, fallbacks: planner.fallbacks };
  if (first !== undefined) outcome.failure = { index: first.index, table: (tasks[first.index] as PrepTask<T>).table, error: first.error };
  return outcome;
}

/** Clamp a requested width to 1, 2 or 4; transports that must run serially pass `cap: 1`. */
export function effectiveWidth(requested: number | undefined, cap?: Width): Width {
  const w: Width = requested === undefined ? 1 : requested >= 4 ? 4 : requested >= 2 ? 2 : 1;
  return cap !== undefined && w > cap ? cap : w;
}

export function assertWidth(w: number): asserts w is Width {
  if (!WIDTHS.includes(w as Width)) {
    throw new BranchgraphError('invalid_input', `width must be 1, 2 or 4, got ${w}`, { issues: [{ path: 'width', message: '1, 2 or 4' }] });
  }
}
