/**
 * Branch expiry: the maintenance sweep that deletes branches past their
 * `expiresAt` (service/operations/branches/create-branch.ts gives it).
 *
 * - It never deletes a protected branch, nor `main`.
 * - A branch that is the source or the target of an open merge request is
 *   held, not deleted: the work under review stays until the request is
 *   merged or closed, and the first sweep after that deletes it. The sweep
 *   reports each held branch with the request that holds it.
 * - It deletes only the very record it found expired (graph/branches.ts
 *   `expire`): a branch reset, re-protected or given a new expiry meanwhile
 *   is left alone.
 * - Each deletion is a `branch_expired` event in the feed, by the actor
 *   `maintenance`.
 *
 * The sweep runs every `intervalMs` in a started server (one sweep at a time
 * in a process; two replicas sweeping at once each delete a record once, as
 * records are create-only), and on demand through the `expireBranches`
 * operation. Time is the graph's clock.
 */
import type { Logger } from 'pino';
import type { Graph } from '../graph/graph.js';

export interface ExpirySettings {
  /** How often a started service sweeps (default one minute); 0 never sweeps on its own. */
  intervalMs: number;
}

export const DEFAULT_EXPIRY_SETTINGS: ExpirySettings = { intervalMs: 60_000 };

/** What a sweep did: the branches it deleted, and the expired ones open requests hold. */
export interface ExpirySweep {
  expired: string[];
  held: { branch: string; request: string }[];
}

/** The actor expiry deletions are recorded under. */
export const EXPIRY_ACTOR = 'maintenance';

/** Delete every branch past its expiry that nothing holds (see the header). */
export async function sweepExpiredBranches(graph: Graph, signal?: AbortSignal): Promise<ExpirySweep> {
  const now = graph.clock();
  const due = await graph.branchRecords(
    (rec) => rec.expiresAt !== undefined && Date.parse(rec.expiresAt) <= now && rec.protection === undefined && rec.name !== 'main',
    signal,
  );
  const out: ExpirySweep = { expired: [], held: [] };
  if (due.length === 0) return out;
  const holders = await openRequestsByBranch(graph, signal);
  for (const rec of due) {
    const request = holders.get(rec.name);
    if (request !== undefined) {
      out.held.push({ branch: rec.name, request });
      continue;
    }
    const r = await graph.expireBranch(rec, { actor: EXPIRY_ACTOR, ...(signal !== undefined ? { signal } : {}) });
    if (r !== 'changed') out.expired.push(rec.name);
  }
  return out;
}

/** The open requests by the branches they hold (source and target), each the newest such request. */
async function openRequestsByBranch(graph: Graph, signal?: AbortSignal): Promise<Map<string, string>> {
  const held = new Map<string, string>();
  let after: string | undefined;
  do {
    const page = await graph.requests.list({ after, limit: 1000, keep: (doc) => doc.state === 'open', signal });
    for (const doc of page.requests) {
      if (!held.has(doc.source)) held.set(doc.source, doc.id);
      if (!held.has(doc.target)) held.set(doc.target, doc.id);
    }
    after = page.next;
  } while (after !== undefined);
  return held;
}

/** The sweep on a timer, one at a time; `idle` waits for a running one. */
export class BranchExpiry {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<ExpirySweep> | undefined;
  private readonly stopping = new AbortController();

  constructor(
    private readonly graph: Graph,
    private readonly settings: ExpirySettings,
    private readonly log?: Logger,
  ) {}

  start(): void {
    if (this.settings.intervalMs <= 0 || this.timer !== undefined) return;
    this.timer = setInterval(() => {
      if (this.running === undefined) void this.sweep().catch(() => undefined);
    }, this.settings.intervalMs);
    this.timer.unref();
  }

  /** Sweep now (after one already running here). */
  async sweep(signal?: AbortSignal): Promise<ExpirySweep> {
    while (this.running !== undefined) await this.running.catch(() => undefined);
    const sig = signal === undefined ? this.stopping.signal : AbortSignal.any([signal, this.stopping.signal]);
    const run = sweepExpiredBranches(this.graph, sig);
    this.running = run;
    try {
      const out = await run;
      if (out.expired.length > 0 || out.held.length > 0) this.log?.info({ expiry: out }, 'expired branches swept');
      return out;
    } catch (e) {
      if (!this.stopping.signal.aborted) this.log?.warn({ err: e }, 'the branch expiry sweep failed; it runs again on the next tick');
      throw e;
    } finally {
      if (this.running === run) this.running = undefined;
    }
  }

  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping.abort();
    await this.idle();
  }
}
