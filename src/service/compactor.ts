/**
 * Background compaction in one server process.
 *
 * Every publication that adds runs to a branch here (a write, a load, a
 * merge into it, a catch-up) touches it; shortly after (`delayMs`, so a
 * burst of writes is compacted once), the branch's tables are compacted
 * if the size-tiered policy says anything is due. One compaction per
 * branch at a time in this process; across processes the publication loop
 * orders them. Compaction never blocks writers (compaction.ts), and a
 * failed background run is logged and tried again on the next touch.
 */
import type { Logger } from 'pino';
import { compactionDue, type CompactionResult, type CompactOptions } from '../graph/compaction.js';
import type { ChangeResult } from '../graph/change.js';
import type { Graph } from '../graph/graph.js';
import { BranchgraphError } from '../model/errors.js';

export interface CompactionSettings {
  /** Compact in the background after publications (default on). */
  background: boolean;
  /** How long after a touch the branch is looked at. */
  delayMs: number;
}

export const DEFAULT_COMPACTION_SETTINGS: CompactionSettings = { background: true, delayMs: 250 };

export class Compactor {
  private readonly scheduled = new Map<string, NodeJS.Timeout>();
  private readonly running = new Map<string, Promise<unknown>>();
  private readonly stopping = new AbortController();
  private started = false;
  /** Background compactions published, since start. */
  published = 0;

  constructor(
    private readonly graph: Graph,
    readonly settings: CompactionSettings,
    private readonly log?: Logger,
  ) {}

  start(): void {
    this.started = this.settings.background;
  }

  /** A publication added runs to `branch`: look at it soon. */
  touched(branch: string): void {
    if (!this.started || this.stopping.signal.aborted || this.scheduled.has(branch)) return;
    const t = setTimeout(() => {
      this.scheduled.delete(branch);
      void this.background(branch);
    }, this.settings.delayMs);
    t.unref();
    this.scheduled.set(branch, t);
  }

  /** Compact `branch` now, after any compaction already running here. */
  run(
    branch: string,
    opts: CompactOptions & { signal?: AbortSignal | undefined; actor?: string | undefined } = {},
  ): Promise<ChangeResult<CompactionResult>> {
    const { signal, actor, ...which } = opts;
    const prev = this.running.get(branch) ?? Promise.resolve();
    const job = prev
      .catch(() => undefined)
      .then(() =>
        this.graph.compact(branch, {
          ...which,
          ...(actor !== undefined ? { actor } : {}),
          signal: signal === undefined ? this.stopping.signal : AbortSignal.any([signal, this.stopping.signal]),
        }),
      );
    this.running.set(branch, job);
    const clear = (): void => {
      if (this.running.get(branch) === job) this.running.delete(branch);
    };
    job.then(clear, clear);
    return job;
  }

  private async background(branch: string): Promise<void> {
    if (this.running.has(branch)) {
      // Look again once the running one is done; what it compacted may leave more due.
      await this.running.get(branch)?.catch(() => undefined);
    }
    try {
      const head = await this.graph.branchHead(branch, this.stopping.signal, { withoutPending: true });
      if (!compactionDue(head)) return;
      const r = await this.run(branch);
      if (r.status === 'published') {
        this.published++;
        this.log?.info({ compaction: { branch, commit: r.commit.id, tables: r.result.tables } }, 'compaction published');
      }
    } catch (e) {
      if (this.stopping.signal.aborted) return;
      const code = e instanceof BranchgraphError ? e.code : 'internal';
      if (code !== 'not_found')
        this.log?.warn(
          { compaction: { branch, code, message: (e as Error).message } },
          'background compaction failed; it runs again on the next change',
        );
    }
  }

  /** Resolves once no compaction is scheduled or running here (tests, benchmarks, orderly shutdown). */
  async settled(): Promise<void> {
    while (this.scheduled.size > 0 || this.running.size > 0) {
      await Promise.allSettled([...this.running.values()]);
      await new Promise((r) => setTimeout(r, Math.max(1, this.settings.delayMs)));
    }
  }

  async stop(): Promise<void> {
    for (const t of this.scheduled.values()) clearTimeout(t);
    this.scheduled.clear();
    this.stopping.abort();
    await Promise.allSettled([...this.running.values()]);
  }
}
