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

export async function runCatchUpPipeline<B, P>(batches: readonly B[], hooks: PipelineHooks<B, P>, opts: PipelineOptions): Promise<PipelineOutcome> {
  const budget = new Budget(opts.budgetBytes);
  const out: PipelineOutcome = { committed: 0, overlapped: 0, retries: 0, maxAlive: 0, maxReservedBytes: 0 };
  let alive = 0;
  const enter = (): void => {
    alive++;
    out.maxAlive = Math.max(out.maxAlive, alive);
  };
  let inFlight: { done: Promise<'committed' | 'stale'>; release: () => void } | undefined;
  let readCtl: AbortController | undefined;
  const onAbort = (): void => readCtl?.abort();
  opts.signal?.addEventListener('abort', onAbort);

  /** Wait for the commit in flight; returns why to stop, if anything. */
  const settle = async (): Promise<PipelineOutcome['stopped']> => {
    if (inFlight === undefined) return undefined;
    const f = inFlight;
    inFlight = undefined;
    try {
      const r = await f.done;
      if (r === 'committed') out.committed++;
      return r === 'stale' ? 'stale' : undefined;
    } catch (e) {
      out.error = e;
      return opts.signal?.aborted ? 'aborted' : 'error';
    } finally {
      f.release();
      alive--;
    }
  };

  const read = async (batch: B): Promise<{ prepared: P; release: () => void }> => {
    const reservation = budget.open();
    readCtl = new AbortController();
    if (opts.signal?.aborted) readCtl.abort();
    const ctl = readCtl;
    // A failing commit makes the batch being read pointless: stop reading it.
    inFlight?.done.then(
      (r) => r === 'stale' && ctl.abort(),
      () => ctl.abort(),
    );
    try {
      const prepared = await hooks.read(batch, reservation, ctl.signal);
      return { prepared, release: reservation.release };
    } catch (e) {
      reservation.release();
      throw e;
    }
  };

  try {
    for (const batch of batches) {
      if (opts.signal?.aborted) {
        out.stopped = 'aborted';
        break;
      }
      // Read ahead only when pipelined and the estimate fits beside the committing batch.
      if (!(opts.pipeline && inFlight !== undefined && budget.used + hooks.estimate(batch) <= budget.total)) {
        const why = await settle();
        if (why !== undefined) {
          out.stopped = why;
          break;
        }
      }
      enter();
      const overlapping = inFlight !== undefined;
      let got: { prepared: P; release: () => void } | undefined;
      try {
        got = await read(batch);
        if (overlapping) out.overlapped++;
      } catch (e) {
        if (e instanceof ReservationRefused && inFlight !== undefined && !opts.signal?.aborted) {
          out.retries++;
          const why = await settle();
          if (why !== undefined) {
            alive--;
            out.stopped = why;
            break;
          }
          try {
            got = await read(batch);
          } catch (e2) {
            alive--;
            out.stopped = opts.signal?.aborted ? 'aborted' : 'error';
            out.error = e2;
            break;
          }
        } else {
          alive--;
          // The preceding commit still finishes; its outcome is reported too.
          const why = await settle();
          out.stopped = opts.signal?.aborted ? 'aborted' : (why ?? 'error');
          if (why === undefined || why === 'stale') out.error = e;
          break;
        }
      }
      const why = await settle();
      if (why !== undefined) {
        await hooks.discard(got.prepared).catch(() => undefined);
        got.release();
        alive--;
        out.stopped = why;
        break;
      }
      out.maxReservedBytes = Math.max(out.maxReservedBytes, budget.peak);
      inFlight = { done: hooks.commit(got.prepared, opts.signal ?? new AbortController().signal), release: got.release };
      // A stale commit published nothing, so its runs can go. A failed one may have landed
      // (a lost response): its runs stay for garbage collection to judge.
      const prepared = got.prepared;
      inFlight.done.then(
        (r) => (r === 'stale' ? hooks.discard(prepared).catch(() => undefined) : undefined),
        () => undefined,
      );
    }
    // The last commit (or the one in flight when something stopped the loop) finishes either way.
    const why = await settle();
    out.stopped ??= why;
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    out.maxReservedBytes = Math.max(out.maxReservedBytes, budget.peak);
  }
  return out;
}
