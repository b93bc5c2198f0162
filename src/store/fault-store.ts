/**
 * Deterministic fault injection for simulation and crash tests.
 *
 * Calls are numbered from 1 in the order they reach this wrapper. A schedule
 * can fail one call, "crash" at one call, inject transient errors at a seeded
 * rate, and delay calls before or after their effect. A crash models the
 * process dying: the crashing call takes effect or not (`crashEffect`), and
 * from then on every call fails with `store_crashed`, so nothing the dead
 * process would still do can reach the store. Tests then reopen the inner
 * store directly, as a restarted process would.
 */
import { BranchgraphError, type ErrorCode } from '../model/errors.js';
import { Prng } from '../model/prng.js';
import { abortableSleep } from './abortable-sleep.js';
import type { ObjectStore, StoreOp } from './object-store.js';
import { StoreWrapper, type CallContext } from './store-wrapper.js';

export interface FaultSchedule {
  seed?: number;
  /** Crash at this call number (1-based). */
  crashAtCall?: number;
  /** Whether the crashing call's effect lands before the crash. Default: 'before' (it does not). */
  crashEffect?: 'before' | 'after';
  /** Fail exactly this call with `failCode` (default `store_error`); later calls proceed. */
  failAtCall?: number;
  failCode?: ErrorCode;
  /** Probability that a call fails with `store_unavailable` before its effect. */
  transientRate?: number;
  /** Probability that a put lands but its caller sees `store_unavailable` (a lost response). */
  lostResponseRate?: number;
  /** Random delay before each call, in [0, maxDelayBeforeMs). */
  maxDelayBeforeMs?: number;
  /** Random delay after each call's effect, in [0, maxDelayAfterMs). */
  maxDelayAfterMs?: number;
  /** Only these operations are eligible for rate-based faults. */
  ops?: readonly StoreOp[];
}

export interface CallRecord {
  n: number;
  op: StoreOp;
  key: string;
}

export class FaultStore extends StoreWrapper {
  private readonly rng: Prng;
  private calls = 0;
  private crashed = false;
  readonly log: CallRecord[] = [];

  constructor(
    inner: ObjectStore,
    private schedule: FaultSchedule = {},
  ) {
    super(inner);
    this.rng = new Prng(schedule.seed ?? 1);
  }

  /** Replace the schedule; call numbering continues. */
  setSchedule(schedule: FaultSchedule): void {
    this.schedule = schedule;
  }

  get callCount(): number {
    return this.calls;
  }

  get hasCrashed(): boolean {
    return this.crashed;
  }

  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const s = this.schedule;
    if (this.crashed) throw new BranchgraphError('store_crashed', 'the process crashed (injected)');
    const n = ++this.calls;
    this.log.push({ n, op: ctx.op, key: ctx.key });
    const eligible = s.ops === undefined || s.ops.includes(ctx.op);
    if (s.maxDelayBeforeMs) await abortableSleep(this.rng.int(s.maxDelayBeforeMs), ctx.signal);
    if (s.crashAtCall === n) {
      this.crashed = true;
      if (s.crashEffect === 'after') await call().catch(() => undefined);
      throw new BranchgraphError('store_crashed', `the process crashed at store call ${n} (injected)`);
    }
    if (s.failAtCall === n) throw new BranchgraphError(s.failCode ?? 'store_error', `injected failure at store call ${n}`);
    if (eligible && s.transientRate && this.rng.chance(s.transientRate)) {
      throw new BranchgraphError('store_unavailable', `injected transient failure at store call ${n}`);
    }
    const result = await call();
    if (this.crashed) throw new BranchgraphError('store_crashed', 'the process crashed (injected)');
    const isPut = ctx.op === 'putIfAbsent' || ctx.op === 'putOverwrite';
    if (eligible && isPut && s.lostResponseRate && this.rng.chance(s.lostResponseRate)) {
      throw new BranchgraphError('store_unavailable', `injected lost response at store call ${n}`);
    }
    if (s.maxDelayAfterMs) await abortableSleep(this.rng.int(s.maxDelayAfterMs), ctx.signal);
    return result;
  }
}
