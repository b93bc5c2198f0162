/**
 * Process metrics in the Prometheus text format: request and merge
 * counters, merge phase totals, store calls, and the preparation gauges that
 * return to zero after every merge.
 */
import { PreparationGauges } from '../merge/preparation-scheduler.js';
import type { MergeMetrics } from '../merge/merge.js';

/** One service's metrics; the service owns an instance and hands its gauges to every merge it runs. */
export class ServiceMetrics {
  readonly gauges = new PreparationGauges();
  mergesInFlight = 0;
  walGenerations = 0;
  catchUpGenerations = 0;
  readonly merges = new Map<string, number>();
  readonly requests = new Map<string, number>();
  readonly phaseSeconds = new Map<string, number>();
  readonly storeCalls = new Map<string, number>();
  maxWidthLast = 0;

  recordMerge(outcome: string, m: MergeMetrics | undefined): void {
    this.merges.set(outcome, (this.merges.get(outcome) ?? 0) + 1);
    if (m === undefined) return;
    this.maxWidthLast = m.maxWidth;
    for (const [p, ms] of Object.entries(m.phasesMs)) this.phaseSeconds.set(p, (this.phaseSeconds.get(p) ?? 0) + ms / 1000);
    for (const [op, c] of Object.entries(m.storeCalls)) if (op !== 'total') this.storeCalls.set(op, (this.storeCalls.get(op) ?? 0) + c.calls);
  }

  recordRequest(method: string, route: string, status: number): void {
    const k = `method="${method}",route="${route}",status="${status}"`;
    this.requests.set(k, (this.requests.get(k) ?? 0) + 1);
  }

  render(): string {
    const lines: string[] = [];
    const metric = (name: string, type: string, help: string, samples: [string, number][]): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
      for (const [labels, v] of samples) lines.push(`${name}${labels === '' ? '' : `{${labels}}`} ${v}`);
    };
    metric('branchgraph_http_requests_total', 'counter', 'HTTP requests by method, route and status.', [...this.requests]);
    metric(
      'branchgraph_merges_total',
      'counter',
      'Merges by outcome.',
      [...this.merges].map(([o, n]) => [`outcome="${o}"`, n]),
    );
    metric('branchgraph_merges_in_flight', 'gauge', 'Merges running now.', [['', this.mergesInFlight]]);
    metric(
      'branchgraph_merge_phase_seconds_total',
      'counter',
      'Time spent per merge phase.',
      [...this.phaseSeconds].map(([p, s]) => [`phase="${p}"`, Math.round(s * 1e6) / 1e6]),
    );
    metric(
      'branchgraph_merge_store_calls_total',
      'counter',
      'Object store calls made by merges, by operation.',
      [...this.storeCalls].map(([op, n]) => [`op="${op}"`, n]),
    );
    metric('branchgraph_preparations_in_flight', 'gauge', 'Table preparations running now.', [['', this.gauges.inFlight]]);
    metric('branchgraph_preparation_reserved_bytes', 'gauge', 'Bytes reserved from the preparation budget.', [['', this.gauges.reservedBytes]]);
    metric('branchgraph_preparation_pending_scratch', 'gauge', 'Scratch runs written but not yet published or deleted.', [['', this.gauges.pendingScratch]]);
    metric('branchgraph_preparation_fallbacks_total', 'counter', 'Width step-downs taken because the budget refused a reservation.', [['', this.gauges.fallbacksTotal]]);
    metric('branchgraph_merge_max_width_last', 'gauge', 'Highest preparation width observed in the last merge.', [['', this.maxWidthLast]]);
    metric('branchgraph_wal_generations_sealed_total', 'counter', 'WAL generations sealed by ingest requests in this process.', [['', this.walGenerations]]);
    metric('branchgraph_catchup_generations_folded_total', 'counter', 'WAL generations folded by requested catch-up runs in this process.', [['', this.catchUpGenerations]]);
    return `${lines.join('\n')}\n`;
  }
}
