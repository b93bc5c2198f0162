/**
 * Metrics in the Prometheus text format, through prom-client.
 *
 * Two registries. The process registry holds what belongs to the process
 * whatever graph is asked: Node.js and process metrics, build info, and
 * store-call latency (every graph in a server shares one store). Each
 * service has its own registry for requests, merges, catch-up, GraphQL
 * errors, WAL and preparation gauges; `/metrics` (and
 * `/graphs/<name>/metrics`) renders the process registry then the graph's.
 * Gauges that mirror engine state (preparation, WAL pending) are read at
 * scrape time, so they cannot drift from it.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { MergeMetrics } from '../merge/merge.js';
import type { CatchUpObserver, FinishedCatchUp } from '../wal/catch-up-manager.js';
import { PreparationGauges } from '../merge/preparation-scheduler.js';
import { STORE_OPS, type StoreOp } from '../store/object-store.js';
import { packageVersion } from './package-root.js';
import type { LongOperations } from './long-operations.js';

/** Seconds, from a millisecond store call to a multi-minute merge. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

let processRegistry: { registry: Registry; storeCall: Histogram<'op' | 'outcome'> } | undefined;

/** The process-wide registry (created on first use, once per process). */
export function processMetrics(): { registry: Registry; storeCall: Histogram<'op' | 'outcome'> } {
  if (processRegistry !== undefined) return processRegistry;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'branchgraph_' });
  // prom-client names its handle and request counts `_total`, which the exposition format reserves
  // for counters (promtool refuses them); `branchgraph_nodejs_active_resources` (by type) counts the same things.
  for (const what of ['handles', 'requests', 'resources']) registry.removeSingleMetric(`branchgraph_nodejs_active_${what}_total`);
  const build = new Gauge({
    name: 'branchgraph_build_info',
    help: 'Always 1; the labels say what is running.',
    labelNames: ['version', 'node'],
    registers: [registry],
  });
  build.set({ version: packageVersion(), node: process.version }, 1);
  const storeCall = new Histogram({
    name: 'branchgraph_store_call_duration_seconds',
    help: 'Object store call latency by operation and outcome (ok or error).',
    labelNames: ['op', 'outcome'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  processRegistry = { registry, storeCall };
  return processRegistry;
}

/** What a store wrapper reports per call (see ObservedStore). */
export function observeStoreCall(op: StoreOp, seconds: number, ok: boolean): void {
  processMetrics().storeCall.observe({ op, outcome: ok ? 'ok' : 'error' }, seconds);
}

/** One service's metrics; the service owns an instance and hands its gauges to every merge it runs. */
export class ServiceMetrics implements CatchUpObserver {
  readonly registry = new Registry();
  readonly gauges = new PreparationGauges();
  mergesInFlight = 0;
  /** Pending WAL generations per branch, as this process last saw them (ingest, catch-up, its trigger). */
  readonly walPending = new Map<string, number>();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly requestSeconds: Histogram<'method' | 'route'>;
  private readonly merges: Counter<'outcome'>;
  private readonly mergeSeconds: Histogram<'outcome'>;
  private readonly phaseSeconds: Counter<'phase'>;
  private readonly mergeStoreCalls: Counter<'op'>;
  private readonly catchUpSeconds: Histogram<'outcome' | 'trigger'>;
  private readonly walGenerations: Counter;
  private readonly catchUpGenerations: Counter;
  private readonly graphqlErrors: Counter<'code'>;
  private maxWidthLast = 0;

  constructor(operations?: LongOperations) {
    const registers = [this.registry];
    const histogram = <L extends string>(name: string, help: string, labelNames: L[]): Histogram<L> =>
      new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers });
    this.requests = new Counter({
      name: 'branchgraph_http_requests_total',
      help: 'HTTP requests by method, route and status.',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.requestSeconds = histogram(
      'branchgraph_http_request_duration_seconds',
      'HTTP request latency by method and route, until the response is ready.',
      ['method', 'route'],
    );
    this.merges = new Counter({ name: 'branchgraph_merges_total', help: 'Merges by outcome.', labelNames: ['outcome'], registers });
    this.mergeSeconds = histogram('branchgraph_merge_duration_seconds', 'Merge duration by outcome.', ['outcome']);
    this.phaseSeconds = new Counter({
      name: 'branchgraph_merge_phase_seconds_total',
      help: 'Time spent per merge phase.',
      labelNames: ['phase'],
      registers,
    });
    this.mergeStoreCalls = new Counter({
      name: 'branchgraph_merge_store_calls_total',
      help: 'Object store calls made by merges, by operation.',
      labelNames: ['op'],
      registers,
    });
    this.catchUpSeconds = histogram(
      'branchgraph_catchup_duration_seconds',
      'Catch-up run duration by outcome and trigger (request or background).',
      ['outcome', 'trigger'],
    );
    this.walGenerations = new Counter({
      name: 'branchgraph_wal_generations_sealed_total',
      help: 'WAL generations sealed by ingest requests in this process.',
      registers,
    });
    this.catchUpGenerations = new Counter({
      name: 'branchgraph_catchup_generations_folded_total',
      help: 'WAL generations folded by catch-up runs in this process.',
      registers,
    });
    this.graphqlErrors = new Counter({
      name: 'branchgraph_graphql_errors_total',
      help: 'GraphQL errors by stable code (GraphQL answers them with HTTP 200).',
      labelNames: ['code'],
      registers,
    });
    this.scrapeGauges(operations);
  }

  /** Gauges read at scrape time from the engine's own state, so they cannot drift from it. */
  private scrapeGauges(operations: LongOperations | undefined): void {
    const registers = [this.registry];
    const gauge = (name: string, help: string, read: () => number): void => {
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    };
    gauge('branchgraph_merges_in_flight', 'Merges running now.', () => this.mergesInFlight);
    gauge('branchgraph_preparations_in_flight', 'Table preparations running now.', () => this.gauges.inFlight);
    gauge('branchgraph_preparation_reserved_bytes', 'Bytes reserved from the preparation budget.', () => this.gauges.reservedBytes);
    gauge(
      'branchgraph_preparation_pending_scratch',
      'Scratch runs written but not yet published or deleted.',
      () => this.gauges.pendingScratch,
    );
    gauge('branchgraph_merge_max_width_last', 'Highest preparation width observed in the last merge.', () => this.maxWidthLast);
    const gauges = this.gauges;
    new Counter({
      name: 'branchgraph_preparation_fallbacks_total',
      help: 'Width step-downs taken because the budget refused a reservation.',
      registers,
      collect() {
        this.reset();
        this.inc(gauges.fallbacksTotal);
      },
    });
    type Totals = ReturnType<LongOperations['totals']>;
    const perKind = (name: string, help: string, pick: (t: Totals) => number): void => {
      new Gauge({
        name,
        help,
        labelNames: ['kind'],
        registers,
        collect() {
          for (const kind of ['merge', 'load'] as const) this.set({ kind }, operations === undefined ? 0 : pick(operations.totals(kind)));
        },
      });
    };
    perKind('branchgraph_operations_running', 'Long operations (merges, loads) running now, by kind.', (t) => t.running);
    perKind('branchgraph_operation_rows_planned', 'Rows the running long operations of a kind plan to walk.', (t) => t.planned);
    perKind('branchgraph_operation_rows_done', 'Rows the running long operations of a kind have walked so far.', (t) => t.done);
    const walPending = this.walPending;
    new Gauge({
      name: 'branchgraph_wal_pending_generations',
      help: 'WAL generations not yet folded into the tables, per branch, as this process last saw them.',
      labelNames: ['branch'],
      registers,
      collect() {
        this.reset();
        for (const [branch, n] of walPending) this.set({ branch }, n);
      },
    });
  }

  recordMerge(outcome: string, seconds: number, m: MergeMetrics | undefined): void {
    this.merges.inc({ outcome });
    this.mergeSeconds.observe({ outcome }, seconds);
    if (m === undefined) return;
    this.maxWidthLast = m.maxWidth;
    for (const [phase, ms] of Object.entries(m.phasesMs)) this.phaseSeconds.inc({ phase }, ms / 1000);
    for (const op of STORE_OPS) if (m.storeCalls[op].calls > 0) this.mergeStoreCalls.inc({ op }, m.storeCalls[op].calls);
  }

  recordRequest(r: { method: string; route: string; status: number; seconds: number }): void {
    const { method, route } = r;
    this.requests.inc({ method, route, status: String(r.status) });
    this.requestSeconds.observe({ method, route }, r.seconds);
  }

  recordIngest(branch: string, generations: number): void {
    this.walGenerations.inc(generations);
    this.walPending.set(branch, (this.walPending.get(branch) ?? 0) + generations);
  }

  catchUpFinished(run: FinishedCatchUp): void {
    const { branch, trigger, outcome, seconds, report } = run;
    this.catchUpSeconds.observe({ outcome, trigger }, seconds);
    if (report === undefined) return;
    this.catchUpGenerations.inc(report.generations);
    this.walPending.set(branch, report.pendingAfter);
  }

  walPendingSeen(branch: string, generations: number): void {
    this.walPending.set(branch, generations);
  }

  branchGone(branch: string): void {
    this.walPending.delete(branch);
  }

  recordGraphqlError(code: string): void {
    this.graphqlErrors.inc({ code });
  }

  /** The process metrics, then this graph's, as one exposition. */
  async render(): Promise<string> {
    return `${await processMetrics().registry.metrics()}\n${await this.registry.metrics()}`;
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}
