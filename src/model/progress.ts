/**
 * Progress of a long operation (a merge, a load): rows done of rows
 * planned. The engine reports into a `ProgressSink` as it works; the
 * service's `Progress` keeps the figures for the operations list, the
 * metrics and the log, and tells its observer at most once per interval so
 * a million-row merge does not log a million lines.
 *
 * A merge that loses a race plans again against the new head: `restart`
 * sets the new plan and starts the count over, so `done` never exceeds what
 * the current attempt planned.
 */

/** What the engine reports into. */
export interface ProgressSink {
  /** A new attempt, or a new phase of one (`parse`, `validate`, `write`): this many rows are planned, none done yet. */
  restart(planned: number, phase?: string): void;
  /** This many more rows are done. */
  advance(rows: number): void;
}

export interface ProgressState {
  planned: number;
  done: number;
  /** What the rows are going through now, for operations of several phases (a load); null for one. */
  phase: string | null;
}

export class Progress implements ProgressSink {
  planned = 0;
  done = 0;
  phase: string | null = null;
  private lastReport = -Infinity;

  constructor(
    private readonly onReport?: (p: ProgressState) => void,
    private readonly everyMs = 5000,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  restart(planned: number, phase?: string): void {
    this.planned = Math.max(0, planned);
    this.done = 0;
    this.phase = phase ?? null;
  }

  advance(rows: number): void {
    this.done = Math.min(this.planned, this.done + rows);
    const now = this.clock();
    if (this.onReport !== undefined && now - this.lastReport >= this.everyMs) {
      this.lastReport = now;
      this.onReport({ planned: this.planned, done: this.done, phase: this.phase });
    }
  }

  /** Everything planned is done (the operation finished). */
  complete(): void {
    this.done = this.planned;
  }
}

/** Sinks that ignore reports, for callers that do not watch. */
export const NO_PROGRESS: ProgressSink = { restart: () => undefined, advance: () => undefined };
