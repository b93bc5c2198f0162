/**
 * Who runs catch-up, and when, in one server process.
 *
 * - One run per branch at a time in this process: a request for a branch
 *   already catching up waits for that run and then runs its own (so
 *   generations acknowledged before the request are folded when it
 *   returns). Across processes, runs are fenced by publication: a batch
 *   built against watermarks that moved publishes nothing (catch-up.ts).
 * - In the background, branches this process ingested into are checked
 *   every `intervalMs`, and as soon as what it sealed into one reaches
 *   `triggerGenerations`; one whose pending generations reach the trigger
 *   is caught up. 0 disables the trigger.
 * - The last run's outcome (report or error) is kept per branch for status.
 */
import type { LogSink } from '../model/log-sink.js';
import { BranchgraphError } from '../model/errors.js';
import type { GraphPorts } from '../graph/ports.js';
import {
  catchUp,
  DEFAULT_CATCHUP_BUDGET_BYTES,
  DEFAULT_CATCHUP_MAX_BYTES,
  DEFAULT_CATCHUP_MAX_GENERATIONS,
  type CatchUpOptions,
  type CatchUpReport,
} from './catch-up.js';

export interface CatchUpSettings {
  maxGenerations: number;
  maxBytes: number;
  pipeline: boolean;
  budgetBytes: number;
  triggerGenerations: number;
  intervalMs: number;
}

export const DEFAULT_CATCHUP_SETTINGS: CatchUpSettings = {
  maxGenerations: DEFAULT_CATCHUP_MAX_GENERATIONS,
  maxBytes: DEFAULT_CATCHUP_MAX_BYTES,
  pipeline: true,
  budgetBytes: DEFAULT_CATCHUP_BUDGET_BYTES,
  triggerGenerations: 16,
  intervalMs: 1000,
};

/** How one catch-up run ended: its branch, trigger, outcome, time and report. */
export interface FinishedCatchUp {
  branch: string;
  trigger: LastCatchUp['trigger'];
  outcome: LastCatchUp['outcome'];
  seconds: number;
  report: CatchUpReport | undefined;
}

/** Who hears how runs end and what the trigger saw pending (the service's metrics). */
export interface CatchUpObserver {
  catchUpFinished(run: FinishedCatchUp): void;
  walPendingSeen(branch: string, generations: number): void;
  /** The branch is gone (deleted here or by another process): its series end. */
  branchGone(branch: string): void;
}

export interface LastCatchUp {
  trigger: 'request' | 'background';
  startedAt: string;
  finishedAt: string;
  outcome: CatchUpReport['outcome'] | 'error';
  report?: CatchUpReport;
  error?: { code: string; message: string };
}

export class CatchUpManager {
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly last = new Map<string, LastCatchUp>();
  /** Branches this process sealed generations into, with how many it sealed since it last looked. */
  private readonly watched = new Map<string, number>();
  /** Branches whose pending generations are being counted (`look`), with that look. */
  private readonly looking = new Map<string, Promise<void>>();
  private timer: NodeJS.Timeout | undefined;
  private readonly stopping = new AbortController();

  private readonly ports: Pick<GraphPorts, 'counted' | 'heads'>;
  readonly settings: CatchUpSettings;
  private readonly log: LogSink | undefined;
  private readonly observer: CatchUpObserver | undefined;

  constructor(setup: {
    ports: Pick<GraphPorts, 'counted' | 'heads'>;
    settings: CatchUpSettings;
    log?: LogSink | undefined;
    observer?: CatchUpObserver | undefined;
  }) {
    ({ ports: this.ports, settings: this.settings, log: this.log, observer: this.observer } = setup);
  }

  /** Run catch-up on `branch` now, after any run already in progress here. */
  run(
    branch: string,
    overrides: Partial<Pick<CatchUpOptions, 'maxGenerations' | 'maxBytes' | 'pipeline'>> = {},
    how: { signal?: AbortSignal | undefined; trigger?: LastCatchUp['trigger'] } = {},
  ): Promise<CatchUpReport> {
    const { signal, trigger = 'request' } = how;
    const prev = this.running.get(branch) ?? Promise.resolve();
    const started = new Date().toISOString();
    const startedMs = performance.now();
    const job = prev
      .catch(() => undefined)
      .then(() =>
        catchUp(this.ports, branch, {
          maxGenerations: overrides.maxGenerations ?? this.settings.maxGenerations,
          maxBytes: overrides.maxBytes ?? this.settings.maxBytes,
          pipeline: overrides.pipeline ?? this.settings.pipeline,
          budgetBytes: this.settings.budgetBytes,
          ...(signal ? { signal: AbortSignal.any([signal, this.stopping.signal]) } : { signal: this.stopping.signal }),
        }),
      );
    this.running.set(branch, job);
    const done = (entry: Omit<LastCatchUp, 'trigger' | 'startedAt' | 'finishedAt'>): void => {
      this.last.set(branch, { trigger, startedAt: started, finishedAt: new Date().toISOString(), ...entry });
      this.observer?.catchUpFinished({
        branch,
        trigger,
        outcome: entry.outcome,
        seconds: (performance.now() - startedMs) / 1000,
        report: entry.report,
      });
      if (this.running.get(branch) === job) this.running.delete(branch);
    };
    job.then(
      (report) => {
        done({ outcome: report.outcome, report });
        this.log?.info(
          {
            catchUp: {
              branch,
              trigger,
              outcome: report.outcome,
              batches: report.batches,
              generations: report.generations,
              totalMs: report.totalMs,
              pendingAfter: report.pendingAfter,
            },
          },
          'catch-up finished',
        );
      },
      (e: unknown) => {
        const code = e instanceof BranchgraphError ? e.code : 'internal';
        done({ outcome: 'error', error: { code, message: (e as Error).message } });
        this.log?.warn({ catchUp: { branch, trigger, code } }, 'catch-up failed');
      },
    );
    return job;
  }

  lastRun(branch: string): LastCatchUp | null {
    return this.last.get(branch) ?? null;
  }

  /** Whether any catch-up runs here now, or a branch is being looked at for one. */
  get active(): boolean {
    return this.running.size > 0 || this.looking.size > 0;
  }

  /** Once no catch-up runs here and none is being decided (a run that starts meanwhile is waited for too). */
  async idle(): Promise<void> {
    while (this.active) await Promise.allSettled([...this.running.values(), ...this.looking.values()]);
  }

  isRunning(branch: string): boolean {
    return this.running.has(branch);
  }

  /** A branch deleted (here, or seen gone): no longer watched, its last run and series forgotten. */
  forget(branch: string): void {
    this.watched.delete(branch);
    this.last.delete(branch);
    this.observer?.branchGone(branch);
  }

  /**
   * This process sealed `generations` into `branch`: the background trigger looks at the branch
   * once what it sealed there since it last looked reaches the trigger. A pass costs the branches
   * that may be due, not every branch ever ingested into, so an idle server costs nothing.
   */
  sealed(branch: string, generations: number): void {
    if (generations <= 0) return;
    this.watched.set(branch, (this.watched.get(branch) ?? 0) + generations);
    // Due now, the branch is looked at now rather than at the next pass: every ingest checks its
    // rows against what is pending, so a fast writer would otherwise pay for a whole interval's
    // generations on each one (a hundred one-row ingests in a second: 28-31 ms each by the last).
    if (this.timer !== undefined) void this.look(branch);
  }

  start(): void {
    if (this.settings.triggerGenerations <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => void this.tick(), this.settings.intervalMs);
    this.timer.unref();
  }

  /** One background pass; exported for tests, which drive time themselves. */
  async tick(): Promise<void> {
    for (const branch of [...this.watched.keys()]) await this.look(branch);
  }

  /** Catch `branch` up in the background if it is due: what this process sealed there reached the trigger, and what is pending does. */
  private look(branch: string): Promise<void> {
    const sealed = this.watched.get(branch) ?? 0;
    if (sealed < this.settings.triggerGenerations || this.running.has(branch) || this.stopping.signal.aborted) return Promise.resolve();
    let look = this.looking.get(branch);
    if (look === undefined) {
      look = this.counted(branch).finally(() => this.looking.delete(branch));
      this.looking.set(branch, look);
    }
    return look;
  }

  private async counted(branch: string): Promise<void> {
    try {
      const head = await this.ports.heads.branchHead(branch, this.stopping.signal, { pendingListedOnly: true });
      const pending = head.pending.generations.length;
      this.observer?.walPendingSeen(branch, pending);
      // What is pending now (another process may have folded some) is what counts from here on.
      if (pending === 0) this.watched.delete(branch);
      else this.watched.set(branch, pending);
      if (pending < this.settings.triggerGenerations) return;
      const report = await this.run(branch, {}, { trigger: 'background' });
      // What the run left pending counts from here on, not what it found: the next ingest is not due at once.
      if (report.pendingAfter === 0) this.watched.delete(branch);
      else this.watched.set(branch, report.pendingAfter);
    } catch (e) {
      // A deleted branch stops being watched; anything else is retried next pass (and logged by run()).
      if (e instanceof BranchgraphError && e.code === 'not_found') this.forget(branch);
    }
  }

  /** Stop the trigger and cancel runs in progress (their batches drain; nothing half-published). */
  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort();
    await Promise.allSettled([...this.looking.values()]);
    await Promise.allSettled([...this.running.values()]);
  }
}
