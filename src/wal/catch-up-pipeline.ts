/**
 * The catch-up pipeline: prepare the next batch while the current one
 * commits. No I/O here; reading and committing are injected.
 *
 * Rules (each is tested directly with fake batches):
 * - Commits happen one at a time, in batch order.
 * - Pipelined: while batch k commits, batch k+1 is read. The queue holds one
 *   entry and its slot is reserved before reading starts, so at most two
 *   batches are alive (one committing, one reading or waiting to commit).
 * - Both share one memory budget. A batch is read ahead only when its
 *   estimate fits next to the committing batch's reservation; otherwise the
 *   pipeline waits for the commit first, so a budget that admits one batch
 *   runs serially.
 * - A read grows its reservation generation by generation. When growth is
 *   refused because the committing batch holds memory, the read gives its
 *   reservation back, waits for that commit, and is retried once, alone (a
 *   batch with nothing else alive may always grow, so the retry proceeds).
 *   No later batch is read meanwhile.
 * - Any other read error lets the preceding commit finish, then stops.
 * - A commit failure, a stale commit (someone else folded first) or
 *   cancellation aborts the batch being read, discards what it prepared
 *   and releases its memory. A failed commit's own runs are left for
 *   garbage collection: its manifest may have landed.
 * - Serial mode (`pipeline: false`) reads a batch only after the previous
 *   commit finished.
 */

export class ReservationRefused extends Error {
  constructor(readonly wanted: number) {
    super(`catch-up memory reservation of ${wanted} more bytes refused`);
  }
}

/** A batch's share of the budget; `grow` throws ReservationRefused when it does not fit. */
export interface Reservation {
  readonly bytes: number;
  grow(bytes: number): void;
}

export interface PipelineHooks<B, P> {
  estimate(batch: B): number;
  read(batch: B, reservation: Reservation, signal: AbortSignal): Promise<P>;
  /** 'stale' when the branch moved so that the batch no longer applies; nothing was published then. */
  commit(prepared: P, signal: AbortSignal): Promise<'committed' | 'stale'>;
  /** Drop a prepared batch that will not be committed (its scratch runs). */
  discard(prepared: P): Promise<void>;
}

export interface PipelineOptions {
  pipeline: boolean;
  budgetBytes: number;
  signal?: AbortSignal;
}

export interface PipelineOutcome {
  committed: number;
  /** Why the pipeline stopped before the last batch, if it did. */
  stopped?: 'stale' | 'error' | 'aborted';
  error?: unknown;
  /** Reads that ran while a commit was in flight. */
  overlapped: number;
  /** Oversized reads retried alone. */
  retries: number;
  maxAlive: number;
  maxReservedBytes: number;
}

class Budget {
  used = 0;
  peak = 0;
  holders = 0;
  constructor(readonly total: number) {}

  open(): Reservation & { release(): void } {
    this.holders++;
    let bytes = 0;
    let open = true;
    return {
      get bytes() {
        return bytes;
      },
      grow: (n: number) => {
        // A released reservation stays released (concurrent readers of a refused batch may still ask).
        if (!open) throw new ReservationRefused(n);
        // Alone, a batch may exceed the budget: otherwise one huge generation could never fold.
        if (this.used + n > this.total && this.holders > 1) throw new ReservationRefused(n);
        bytes += n;
        this.used += n;
        this.peak = Math.max(this.peak, this.used);
      },
      release: () => {
        if (!open) return;
        open = false;
        this.used -= bytes;
        this.holders--;
        bytes = 0;
      },
    };
  }
}

export function runCatchUpPipeline<B, P>(
  batches: readonly B[],
  hooks: PipelineHooks<B, P>,
  opts: PipelineOptions,
): Promise<PipelineOutcome> {
  return new PipelineRun(hooks, opts).run(batches);
}

type Stop = NonNullable<PipelineOutcome['stopped']>;
interface Read<P> {
  prepared: P;
  release: () => void;
}

/** One pass of the pipeline over its batches: the committing batch, the batch being read, and the shared budget. */
class PipelineRun<B, P> {
  readonly out: PipelineOutcome = { committed: 0, overlapped: 0, retries: 0, maxAlive: 0, maxReservedBytes: 0 };
  private readonly budget: Budget;
  private alive = 0;
  private inFlight: { done: Promise<'committed' | 'stale'>; release: () => void } | undefined;
  private readCtl: AbortController | undefined;

  constructor(
    private readonly hooks: PipelineHooks<B, P>,
    private readonly opts: PipelineOptions,
  ) {
    this.budget = new Budget(opts.budgetBytes);
  }

  private get aborted(): boolean {
    return this.opts.signal?.aborted === true;
  }

  async run(batches: readonly B[]): Promise<PipelineOutcome> {
    const onAbort = (): void => this.readCtl?.abort();
    this.opts.signal?.addEventListener('abort', onAbort);
    try {
      for (const batch of batches) {
        const stop = await this.step(batch);
        if (stop !== undefined) {
          this.out.stopped = stop;
          break;
        }
      }
      // The last commit (or the one in flight when something stopped the loop) finishes either way.
      const why = await this.settle();
      this.out.stopped ??= why;
    } finally {
      this.opts.signal?.removeEventListener('abort', onAbort);
      this.out.maxReservedBytes = Math.max(this.out.maxReservedBytes, this.budget.peak);
    }
    return this.out;
  }

  /** Read one batch (ahead of the commit in flight when it fits), then start its commit. */
  private async step(batch: B): Promise<Stop | undefined> {
    if (this.aborted) return 'aborted';
    // Read ahead only when pipelined and the estimate fits beside the committing batch.
    if (!(this.opts.pipeline && this.inFlight !== undefined && this.budget.used + this.hooks.estimate(batch) <= this.budget.total)) {
      const why = await this.settle();
      if (why !== undefined) return why;
    }
    this.alive++;
    this.out.maxAlive = Math.max(this.out.maxAlive, this.alive);
    const got = await this.readOrStop(batch);
    if ('stop' in got) return got.stop;
    const why = await this.settle();
    if (why !== undefined) {
      await this.hooks.discard(got.prepared).catch(() => undefined);
      got.release();
      this.alive--;
      return why;
    }
    this.out.maxReservedBytes = Math.max(this.out.maxReservedBytes, this.budget.peak);
    const done = this.hooks.commit(got.prepared, this.opts.signal ?? new AbortController().signal);
    this.inFlight = { done, release: got.release };
    // A stale commit published nothing, so its runs can go. A failed one may have landed
    // (a lost response): its runs stay for garbage collection to judge.
    done.then(
      (r) => (r === 'stale' ? this.hooks.discard(got.prepared).catch(() => undefined) : undefined),
      () => undefined,
    );
    return undefined;
  }

  /** Read a batch; a refused reservation waits for the commit in flight and retries once, alone. */
  private async readOrStop(batch: B): Promise<Read<P> | { stop: Stop }> {
    const overlapping = this.inFlight !== undefined;
    try {
      const got = await this.read(batch);
      if (overlapping) this.out.overlapped++;
      return got;
    } catch (e) {
      if (e instanceof ReservationRefused && this.inFlight !== undefined && !this.aborted) {
        this.out.retries++;
        const why = await this.settle();
        if (why !== undefined) {
          this.alive--;
          return { stop: why };
        }
        try {
          return await this.read(batch);
        } catch (e2) {
          this.alive--;
          this.out.error = e2;
          return { stop: this.aborted ? 'aborted' : 'error' };
        }
      }
      this.alive--;
      // The preceding commit still finishes; its outcome is reported too.
      const why = await this.settle();
      if (why === undefined || why === 'stale') this.out.error = e;
      return { stop: this.aborted ? 'aborted' : (why ?? 'error') };
    }
  }

  private async read(batch: B): Promise<Read<P>> {
    const reservation = this.budget.open();
    const ctl = new AbortController();
    this.readCtl = ctl;
    if (this.aborted) ctl.abort();
    // A failing commit makes the batch being read pointless: stop reading it.
    this.inFlight?.done.then(
      (r) => r === 'stale' && ctl.abort(),
      () => ctl.abort(),
    );
    try {
      const prepared = await this.hooks.read(batch, reservation, ctl.signal);
      return { prepared, release: reservation.release };
    } catch (e) {
      reservation.release();
      throw e;
    }
  }

  /** Wait for the commit in flight; returns why to stop, if anything. */
  private async settle(): Promise<Stop | undefined> {
    const f = this.inFlight;
    if (f === undefined) return undefined;
    this.inFlight = undefined;
    try {
      const r = await f.done;
      if (r === 'committed') this.out.committed++;
      return r === 'stale' ? 'stale' : undefined;
    } catch (e) {
      this.out.error = e;
      return this.aborted ? 'aborted' : 'error';
    } finally {
      f.release();
      this.alive--;
    }
  }
}
