/**
 * The service: what every transport's requests run on. It owns one graph
 * and the work around it (the WAL writer, catch-up, background compaction,
 * long-operation progress, metrics) and the helpers operations share. The
 * operations themselves are defined one per file under operations/ and
 * reach the service through `operation-table.ts`.
 */
import type { BranchRecord } from '../graph/branch-record.js';
import type { Logger } from 'pino';
import type { Graph } from '../graph/graph.js';
import type { Ref, Snapshot } from '../graph/snapshot.js';
import type { TableReader } from '../graph/ports.js';
import type { LoadRun } from '../table/table-version.js';
import type { RunRef } from '../table/run.js';
import { canonicalJson } from '../model/canonical.js';
import type { Commit } from '../graph/manifest.js';
import type { Width } from '../merge/preparation-scheduler.js';
import { LongOperations, type LongOperationKind } from './long-operations.js';
import { WalWriter } from '../wal/wal-writer.js';
import { CatchUpManager, DEFAULT_CATCHUP_SETTINGS, type CatchUpSettings } from '../wal/catch-up-manager.js';
import { ServiceMetrics } from './metrics.js';
import { Compactor, DEFAULT_COMPACTION_SETTINGS, type CompactionSettings } from './compactor.js';
import { commitDto, type BranchDto, type MergeResultDto } from './dtos.js';
import { DEFAULT_HOOK_SETTINGS, HookDispatcher, type HookSettings } from './hook-dispatcher.js';
import { ManagedTokens } from './managed-tokens.js';
import type { TypedGraphqlPort } from './typed-graphql-port.js';
import type { HttpPeerFactory } from './sync-peers.js';
import { BranchExpiry, DEFAULT_EXPIRY_SETTINGS, type ExpirySettings } from './branch-expiry.js';

import { MergeForwarding, type ForwardingSetup } from './merge-forwarding.js';
import { BranchgraphError } from '../model/errors.js';
import { BranchPublishers } from '../graph/branch-publishers.js';
import type { RequestContext } from './request-context.js';
import { checkRefName, checkSnapshot } from './access.js';

/** Service settings: merge width and budget, WAL shard and sealing, catch-up triggers, logger. */
export interface ServiceOptions {
  /** Width for merges that do not ask, on transports that may choose. */
  defaultWidth?: Width;
  budgetBytes?: number;
  /** This process's WAL writer identity and sealing thresholds. */
  wal?: { shard: string; sealAfterMs?: number; generationRows?: number };
  catchUp?: CatchUpSettings;
  compaction?: CompactionSettings;
  log?: Logger;
  /** How often a long merge or load logs its progress (default 5 s). */
  progressLogMs?: number;
  /** The most bytes one NDJSON ingest body may stream (default 1 GiB). */
  maxIngestBytes?: number;
  /**
   * The most bytes of a request body held whole (the server's body limit): what an HTTP load that
   * cannot stream through (NDJSON, Parquet, rows into a table that holds some) may read.
   */
  maxBodyBytes?: number;
  /** Webhook and check delivery: the host allowlist, timeouts, retries, queue. */
  hooks?: HookSettings;
  /** How often expired branches are swept (branch-expiry.ts). */
  expiry?: ExpirySettings;
  /** The server's managed tokens (every graph a server hosts shares its root store's); the graph's own store's by default. */
  tokens?: ManagedTokens;
}

/** One graph's service: the graph, its WAL writer, catch-up and compaction, long operations and metrics. */
export class BranchgraphService {
  readonly catchUps: CatchUpManager;
  readonly compactor: Compactor;
  /** Long operations running here (and recently finished), with their progress. */
  readonly operations = new LongOperations();
  /** This service's counters and gauges (every merge it runs reports into them). */
  readonly metrics = new ServiceMetrics(this.operations);
  readonly writer: WalWriter;
  /** Keyed merges running in this process, so retries with one key wait for each other (idempotent-merge.ts). */
  readonly keyedMerges = new Map<string, Promise<MergeResultDto>>();
  /** Delivers this process's events to the graph's webhooks and asks its checks. */
  readonly hooks: HookDispatcher;
  /** Deletes branches past their expiry (branch-expiry.ts). */
  readonly expiry: BranchExpiry;
  /** Tokens admins create and revoke (managed-tokens.ts). */
  readonly tokens: ManagedTokens;
  /** A branch's typed GraphQL, for stored queries: given by the edge that serves it (http/typed-graphql-endpoint.ts). */
  typed: TypedGraphqlPort | undefined;
  /** How syncs reach a server remote: given by the edge that speaks HTTP (http/http-peer.ts). */
  httpPeers: HttpPeerFactory | undefined;
  /** Work started for a request that outlives it (check runs), waited for when the service stops. */
  private readonly backgroundWork = new Set<Promise<unknown>>();

  constructor(
    readonly graph: Graph,
    readonly opts: ServiceOptions = {},
  ) {
    const wal = { shard: opts.wal?.shard ?? 'default', sealAfterMs: opts.wal?.sealAfterMs, maxGenerationRows: opts.wal?.generationRows };
    this.writer = new WalWriter(graph.ports, wal);
    this.catchUps = new CatchUpManager({
      ports: graph.ports,
      settings: opts.catchUp ?? DEFAULT_CATCHUP_SETTINGS,
      log: opts.log,
      observer: this.metrics,
    });
    this.compactor = new Compactor(graph, opts.compaction ?? DEFAULT_COMPACTION_SETTINGS, opts.log);
    this.hooks = new HookDispatcher(graph, opts.hooks ?? DEFAULT_HOOK_SETTINGS, { shard: wal.shard, log: opts.log });
    this.expiry = new BranchExpiry(graph, opts.expiry ?? DEFAULT_EXPIRY_SETTINGS, opts.log);
    this.tokens = opts.tokens ?? new ManagedTokens(graph.store, graph.clock);
    // Listening costs nothing until a hook is registered; embedded use delivers too.
    this.hooks.start();
  }

  /** Keep `work` (which handles its own errors) running past the request that started it, until the service stops. */
  background(work: Promise<unknown>): void {
    this.backgroundWork.add(work);
    void work.finally(() => this.backgroundWork.delete(work));
  }

  /**
   * The quiescence hook: resolves once this process does nothing in the background — no request
   * checks, catch-up, compaction or hook delivery running, and every event confirmation and head
   * hint it started written. Work one of these starts (a compaction after a catch-up, say) is waited
   * for too. Scheduled work that has not started (a hook retry's backoff, the next catch-up tick, a
   * compaction's delay) is not. Tests and benchmarks compare stored state only after it.
   */
  async idle(): Promise<void> {
    do {
      await Promise.allSettled([...this.backgroundWork]);
      await this.catchUps.idle();
      await this.compactor.settled();
      await this.hooks.idle();
      await this.expiry.idle();
      await this.graph.idle();
    } while (this.backgroundWork.size > 0 || this.catchUps.active || this.hooks.active);
  }

  /** Start background work (the catch-up trigger, background compaction) and take the writer lease of this process's shard. */
  async start(): Promise<void> {
    await this.graph.takeWriterLease(this.writer.shard);
    // Events appended under the lease name this shard: deliveries a crash left owed are offered again.
    this.hooks.resume();
    this.catchUps.start();
    this.compactor.start();
    this.expiry.start();
  }

  /** Where merges into branches other servers publish go (merge-forwarding.ts); none unless `forwardMerges` was called. */
  forwarding: MergeForwarding | undefined;

  /**
   * Publish merges for the graph's other servers and forward ours to theirs (merge-forwarding.ts).
   * Needs the writer lease `start` takes: its writer names this process in the branches' records.
   */
  forwardMerges(setup: ForwardingSetup): void {
    const me = this.graph.writer;
    if (me === undefined)
      throw new BranchgraphError('internal', 'merges are forwarded only by a started service (it holds a writer lease)');
    this.forwarding = new MergeForwarding({ publishers: new BranchPublishers(this.graph.store), me, setup });
  }

  /** Aborted when the service stops: long-lived streams (the event feed) end with it. */
  readonly stopping = new AbortController();

  async stop(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled([...this.backgroundWork]);
    await Promise.all([this.catchUps.stop(), this.compactor.stop(), this.hooks.stop(), this.expiry.stop()]);
  }

  /** Stop background work and release the store. */
  async close(): Promise<void> {
    await this.stop();
    await this.graph.close();
  }

  /**
   * The snapshot a read names, resolved once per request (per ref, when the request pins its
   * snapshots). Every read of a named ref comes through here, so here a scoped token's reads are
   * judged (access.ts): by the branch's name before resolving, by what was resolved after.
   */
  snapshot(ref: Ref, ctx: RequestContext): Promise<Snapshot> {
    if (ctx.scope === undefined) return this.resolve(ref, ctx);
    checkRefName(ctx, ref);
    return this.resolve(ref, ctx).then(async (snap) => {
      await checkSnapshot(this, { ref, snap, ctx });
      return snap;
    });
  }

  private resolve(ref: Ref, ctx: RequestContext): Promise<Snapshot> {
    if (ctx.pins === undefined) return this.graph.resolve(ref, ctx.signal);
    const id = canonicalJson(ref);
    let snap = ctx.pins.get(id);
    if (snap === undefined) {
      snap = this.graph.resolve(ref, ctx.signal);
      ctx.pins.set(id, snap);
      // A failed resolution is not pinned: the request's next read of that ref tries again.
      snap.catch(() => ctx.pins?.delete(id));
    }
    return snap;
  }

  /** Read at a ref under the request's meter: the snapshot `at` names (pinned for the request), and `read` over its tables. */
  async readAt<T>(
    at: Ref,
    ctx: RequestContext,
    read: (r: { tables: TableReader; snap: Snapshot }) => Promise<{ value: T; rows: number }>,
  ): Promise<T> {
    const snap = await this.snapshot(at, ctx);
    return this.metered(ctx, (tables) => read({ tables, snap }));
  }

  /**
   * Run `read` over the graph's tables; with a meter on the request, over the same tables through
   * a counting store, adding the store calls and the rows `read` reports to the meter.
   */
  async metered<T>(ctx: RequestContext, read: (tables: TableReader) => Promise<{ value: T; rows: number }>): Promise<T> {
    if (ctx.meter === undefined) return (await read(this.graph.ports.tables)).value;
    const { ports, counting } = this.graph.ports.counted();
    const touched = new Set<string>();
    const tables: TableReader = {
      table: (snap, name, signal) => {
        const view = ports.tables.table(snap, name, signal);
        return { ...view, load: touching(view.load, touched) };
      },
      indexes: (snap, type, signal) => ports.tables.indexes(snap, type, signal),
    };
    const { value, rows } = await read(tables);
    ctx.meter.storeCalls += counting.snapshot().total.calls;
    ctx.meter.rowsRead += rows;
    ctx.meter.segmentsRead += touched.size;
    return value;
  }

  /** A branch as clients see it, with the commit it was forked from. */
  async branchDto(
    b: { name: string; head: Commit; rec: Pick<BranchRecord, 'time' | 'from' | 'protection' | 'expiresAt' | 'owner' | 'labels'> },
    ctx: RequestContext,
  ): Promise<BranchDto> {
    const { name, head, rec } = b;
    const forkedFrom = rec.from === null ? null : (await this.graph.ports.manifests.readManifest(rec.from, ctx.signal)).commit.id;
    return {
      name,
      head: commitDto(head),
      createdAt: rec.time,
      forkedFrom,
      protection: rec.protection ?? null,
      expiresAt: rec.expiresAt ?? null,
      owner: rec.owner ?? null,
      labels: rec.labels ?? [],
    };
  }

  /** Run `work` as a tracked long operation: listed while it runs, then with its outcome. */
  async tracked<T>(
    what: { kind: LongOperationKind; branch: string; source: string | null; log?: Logger | undefined },
    ctx: RequestContext,
    work: (progress: ReturnType<LongOperations['start']>['progress']) => Promise<T>,
  ): Promise<T> {
    const { kind, log } = what;
    // Registered under the client's id (or a new one), logging its progress as it goes.
    const op = this.operations.start(
      { kind, branch: what.branch, source: what.source },
      {
        ...(ctx.operationId !== undefined ? { id: LongOperations.checkId(ctx.operationId) } : {}),
        onReport: (p) => log?.info({ progress: { rowsDone: p.done, rowsPlanned: p.planned } }, `${kind} progress`),
        everyMs: this.opts.progressLogMs ?? 5000,
      },
    );
    let ok = false;
    try {
      const out = await work(op.progress);
      ok = true;
      return out;
    } finally {
      this.operations.finish(op.id, ok);
    }
  }
}

/** `load`, noting each run or segment it is asked for in `touched`. */
function touching(load: LoadRun, touched: Set<string>): LoadRun {
  const counted = ((ref: RunRef) => {
    touched.add(ref.key);
    return load(ref);
  }) as LoadRun;
  counted.segments = load.segments;
  if (load.uncached !== undefined) {
    const uncached = load.uncached;
    counted.uncached = (ref) => {
      touched.add(ref.key);
      return uncached(ref);
    };
  }
  if (load.replaced !== undefined) counted.replaced = load.replaced;
  return counted;
}
