/**
 * Merge forwarding: several servers of one graph merging into one branch,
 * as fast as one.
 *
 * One process publishes the merges it runs into a branch in batches
 * (graph/publication-lanes.ts). Two processes merging into one branch race
 * for every version at the store instead, and a batch that loses plans
 * again. So a server that publishes merges into a branch records itself as
 * the branch's publisher (graph/branch-publishers.ts), and the other
 * servers forward the merges they are asked for into that branch to it:
 * they join its lane. The caller's token goes with the merge, so the
 * publisher authorises it as its own caller, and the answer comes back as
 * the publisher gave it.
 *
 * Per merge (`route`):
 * - a forwarded merge, a dry run, a merge not asked over HTTP (only those
 *   carry their caller's token on), or a server the others cannot reach
 *   (no advertised URL): run here;
 * - the branch's record names this process: here;
 * - it names another process not known to be gone: forward;
 * - there is no record, or its process is gone: run here, and once the
 *   merge published, claim the branch (a refused or failed merge writes
 *   nothing, not even a claim).
 * A branch's first claim is create-only: of two servers claiming it at
 * once, one wins and the other forwards to it from then on. Records are
 * read again after RECORD_TTL_MS, so a claim over a gone process reaches
 * the others within that time; until then they race, as any two
 * publishers may, safely.
 *
 * When the publisher dies. A forward that cannot connect (refused, the
 * host unknown) was never delivered: the process is taken as gone for
 * GONE_MS, the merge runs here, and once it published, the branch is
 * claimed here. A forward
 * whose connection breaks after the merge was sent has an unknown outcome
 * (it may have landed): the caller is told `publisher_unreachable`, which
 * is retryable, and a retried merge that landed answers up to date. A
 * publisher that hangs without closing its connections holds the merges
 * forwarded to it until their callers give up.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { BranchPublisher, BranchPublishers } from '../graph/branch-publishers.js';
import type { EventWriter } from '../graph/writer-lease.js';
import type { RequestContext } from './request-context.js';

/** The header that marks a merge another server forwarded. */
export const FORWARDED_HEADER = 'branchgraph-forwarded';

/** How long a branch's record read here is trusted before it is read again. */
export const RECORD_TTL_MS = 2_000;
/** The most branches whose records are kept here. */
const MAX_RECORDS = 10_000;
/** How long a process a forward could not reach is taken as gone. */
export const GONE_MS = 15_000;

/** Sends a merge to the server at `url` as the caller `ctx` (the HTTP transport's, http/merge-forwarder.ts). */
export interface MergeForwarder {
  forward<T>(a: { url: string; input: Record<string, unknown>; ctx: RequestContext }): Promise<T>;
}

/** Where this process can be reached, and how it sends merges on. */
export interface ForwardingSetup {
  /** The URL of this graph's REST API as the other servers reach it. */
  url: string;
  forwarder: MergeForwarder;
}

/**
 * What to do with one merge: run it here (and, once it published, claim the branch: create-only when
 * it has no record, over the record when it names a process that is gone), or send it to the branch's
 * publisher.
 */
export type Route = 'here' | { claim: 'create' | 'over' } | { forward: BranchPublisher };

/** The route for a merge into a branch whose record (if read) is `record`; pure. */
export function routeFor(a: { record: BranchPublisher | undefined; me: EventWriter; gone: (writer: EventWriter) => boolean }): Route {
  const { record, me } = a;
  if (record === undefined) return { claim: 'create' };
  if (a.gone(record.writer)) return { claim: 'over' };
  // A writer id names one running process at a time (its shard): a record of this id with another
  // incarnation is this server's earlier life, gone.
  if (record.writer.id === me.id) return record.writer.incarnation === me.incarnation ? 'here' : { claim: 'over' };
  return { forward: record };
}

export class MergeForwarding {
  private readonly records = new Map<string, { record: BranchPublisher | undefined; until: number }>();
  /** Incarnations a forward could not reach, until when they count as gone. */
  private readonly gone = new Map<string, number>();

  constructor(
    private readonly o: {
      publishers: BranchPublishers;
      me: EventWriter;
      setup: ForwardingSetup;
      /** Monotonic milliseconds (record ages are this process's own). */
      now?: () => number;
    },
  ) {}

  private now(): number {
    return this.o.now?.() ?? performance.now();
  }

  /**
   * Run a merge into `branch` where it belongs (see the header): at the branch's publisher, or
   * `here`. A merge run here that published (`published`) claims the branch for this process when
   * its route says so; a claim that fails or loses changes nothing the caller is told.
   */
  async merge<T>(a: {
    branch: string;
    ctx: RequestContext;
    input: Record<string, unknown>;
    here: () => Promise<T>;
    published: (result: T) => boolean;
  }): Promise<T> {
    const { branch, ctx } = a;
    const route = await this.route(branch, ctx);
    let claim = route !== 'here' && 'claim' in route ? route.claim : undefined;
    if (route !== 'here' && 'forward' in route) {
      const there = await this.forward<T>({ branch, to: route.forward, input: a.input, ctx });
      if (there !== undefined) return there;
      claim = 'over';
    }
    const result = await a.here();
    if (claim !== undefined && a.published(result)) await this.claim(branch, { over: claim === 'over' }).catch(() => false);
    return result;
  }

  /** Where a merge into `branch` runs (see the header). */
  async route(branch: string, ctx: RequestContext): Promise<Route> {
    // Only a request that came over HTTP carries its caller's token on to the publisher.
    if (ctx.forwarded === true || ctx.transport !== 'http') return 'here';
    const gone = (w: EventWriter) => (this.gone.get(w.incarnation) ?? 0) > this.now();
    return routeFor({ record: await this.record(branch, ctx.signal), me: this.o.me, gone });
  }

  /**
   * Run `input` (a merge into `branch`) at the branch's publisher `to`. Undefined when it could not
   * be delivered: its process is then taken as gone, and the merge runs here.
   */
  async forward<T>(a: {
    branch: string;
    to: BranchPublisher;
    input: Record<string, unknown>;
    ctx: RequestContext;
  }): Promise<T | undefined> {
    try {
      return await this.o.setup.forwarder.forward<T>({ url: a.to.url, input: a.input, ctx: a.ctx });
    } catch (e) {
      if (!isBranchgraphError(e, 'server_unreachable')) throw e;
      if ((e as BranchgraphError<'server_unreachable'>).details.sent === false) {
        for (const [incarnation, until] of this.gone) if (until <= this.now()) this.gone.delete(incarnation);
        this.gone.set(a.to.writer.incarnation, this.now() + GONE_MS);
        this.records.delete(a.branch);
        return undefined;
      }
      throw new BranchgraphError(
        'publisher_unreachable',
        `the server publishing ${a.branch} (${a.to.url}) stopped answering; the merge may have landed: retry`,
        {
          details: { branch: a.branch, url: a.to.url },
          cause: e,
        },
      );
    }
  }

  /**
   * Record this process as the branch's publisher (see BranchPublishers.claim), remembering what the
   * record says after: this process, or, when another claim got there first, that one (read afresh).
   */
  private async claim(branch: string, o: { over: boolean }): Promise<boolean> {
    const mine = { branch, writer: this.o.me, url: this.o.setup.url };
    if (!(await this.o.publishers.claim(mine, o))) {
      await this.record(branch, undefined, { fresh: true });
      return false;
    }
    this.remember(branch, mine);
    return true;
  }

  /** Keep `record` for RECORD_TTL_MS; the oldest kept goes once MAX_RECORDS branches are. */
  private remember(branch: string, record: BranchPublisher | undefined): void {
    this.records.delete(branch);
    this.records.set(branch, { record, until: this.now() + RECORD_TTL_MS });
    const oldest = this.records.keys().next().value;
    if (this.records.size > MAX_RECORDS && oldest !== undefined) this.records.delete(oldest);
  }

  private async record(branch: string, signal?: AbortSignal, o: { fresh?: boolean } = {}): Promise<BranchPublisher | undefined> {
    const cached = this.records.get(branch);
    if (o.fresh !== true && cached !== undefined && cached.until > this.now()) return cached.record;
    const record = await this.o.publishers.read(branch, signal);
    this.remember(branch, record);
    return record;
  }
}
