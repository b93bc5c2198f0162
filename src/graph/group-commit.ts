/**
 * Group commit: write batches that arrive at one branch while a publication
 * is under way are queued and published together, as one commit.
 *
 * One caller at a time leads a branch's queue: it takes every queued batch
 * from the same actor (up to MAX_BATCH_OPS operations), resolves them in
 * arrival order, each against the branch as the batches before it left it
 * (their rows staged in memory), writes one run per changed table, and
 * publishes once through the ordinary publication loop. So N concurrent
 * writers cost one publication per group instead of N racing publications
 * that mostly lose and retry: no `publish_contention` under ordinary
 * concurrency, and throughput that grows with the number of writers.
 *
 * Semantics each caller keeps: its batch is all-or-nothing and validated
 * exactly as if it ran alone after the batches ahead of it, so a refused
 * batch fails only its caller; a caller whose signal fired before the group
 * was planned is dropped with `aborted`. Grouped callers share one commit
 * id; the commit's message lists their messages and `group` records each
 * one's author and message. A batch with an expected head, or the only one
 * queued, is published exactly as an ungrouped write. Across processes the
 * publication loop's bounded, jittered retries still apply.
 */
import { BranchgraphError, toBranchgraphError } from '../model/errors.js';
import { findInputProblem } from '../model/text.js';
import type { TableType } from '../model/schema.js';
import type { RunRef, RunRow } from '../table/run.js';
import { compareKey } from '../table/run.js';
import { EMPTY_TABLE, type TableVersion } from '../table/table-version.js';
import type { ChangeOptions, ChangePlan, ChangeResult, PlanResult } from './change.js';
import type { GraphPorts } from './ports.js';
import { appendRun, ownRuns } from './append-run.js';
import type { Snapshot } from './snapshot.js';
import { MAX_BATCH_OPS, planWrite, resolveWrite, type WriteOp, type WriteSummary } from './write-batch.js';

/** What the queue needs of a graph: its tables, runs, default actor and publication loop. */
export type GroupPorts = Pick<GraphPorts, 'tables' | 'runFiles' | 'actor' | 'publication' | 'embedder'>;

interface Queued {
  ops: readonly WriteOp[];
  opts: ChangeOptions;
  resolve: (r: ChangeResult<WriteSummary>) => void;
  reject: (e: unknown) => void;
}

/** Each member's outcome within a group. */
type Outcome = { summary: WriteSummary; changed: boolean } | { error: BranchgraphError };

/** Microtask turns between groups: enough for an answered caller's next write to be queued. */
const YIELD_TURNS = 32;

/** The longest message a grouped commit spells out; the rest is in `group`. */
const MAX_GROUP_MESSAGE = 1000;

export class GroupCommit {
  private readonly queues = new Map<string, Queued[]>();
  private readonly leading = new Set<string>();

  constructor(private readonly ports: GroupPorts) {}

  write(branch: string, ops: readonly WriteOp[], opts: ChangeOptions): Promise<ChangeResult<WriteSummary>> {
    // A batch pinned to a head is about that head alone; one bypassing a protection is recorded alone.
    if (opts.expectedHead !== undefined || opts.protection !== undefined) return this.alone(branch, ops, opts);
    return new Promise((resolve, reject) => {
      const queue = this.queues.get(branch) ?? [];
      queue.push({ ops, opts, resolve, reject });
      this.queues.set(branch, queue);
      if (!this.leading.has(branch)) void this.lead(branch);
    });
  }

  private alone(branch: string, ops: readonly WriteOp[], opts: ChangeOptions): Promise<ChangeResult<WriteSummary>> {
    const { tables, runFiles: runs, publication } = this.ports;
    return publication.commitChange(branch, { ...opts, chained: true }, (head) =>
      planWrite({ tables, runs, head, ops, signal: opts.signal, embedder: this.ports.embedder }),
    );
  }

  private async lead(branch: string): Promise<void> {
    this.leading.add(branch);
    try {
      for (let group = this.take(branch); group.length > 0; group = this.take(branch)) {
        await this.publish(branch, group);
        // Let the callers just answered queue their next batches, so they join the next group instead
        // of one of them leading a group of one. Microtask turns, not a timer: a caller spinning on an
        // in-memory store never yields to timers, and the queue would stall behind it.
        for (let i = 0; i < YIELD_TURNS; i++) await Promise.resolve();
      }
    } finally {
      this.leading.delete(branch);
    }
  }

  /** The next group: the oldest queued batch and every later one from the same actor, within the batch limit. */
  private take(branch: string): Queued[] {
    const queue = this.queues.get(branch) ?? [];
    const first = queue[0];
    if (first === undefined) {
      this.queues.delete(branch);
      return [];
    }
    const group: Queued[] = [];
    let ops = 0;
    const rest: Queued[] = [];
    for (const q of queue) {
      if (q.opts.actor === first.opts.actor && (group.length === 0 || ops + q.ops.length <= MAX_BATCH_OPS)) {
        group.push(q);
        ops += q.ops.length;
      } else rest.push(q);
    }
    this.queues.set(branch, rest);
    return group;
  }

  private async publish(branch: string, group: Queued[]): Promise<void> {
    if (group.length === 1) {
      const [only] = group as [Queued];
      await this.alone(branch, only.ops, only.opts).then(only.resolve, only.reject);
      return;
    }
    try {
      // The head the published group was planned on: what a member that changed nothing saw.
      let planned: Snapshot | undefined;
      const r = await this.ports.publication.commitChange<Outcome[]>(branch, { actor: group[0]?.opts.actor, chained: true }, (head) => {
        planned = head;
        return this.plan(head, group);
      });
      const unchangedHead = r.status === 'unchanged' ? r.head : (planned as Snapshot);
      group.forEach((q, i) => {
        const o = r.result[i] as Outcome;
        if ('error' in o) q.reject(o.error);
        else if (r.status === 'published' && o.changed) q.resolve({ ...r, result: o.summary });
        else q.resolve({ status: 'unchanged', result: o.summary, head: unchangedHead });
      });
    } catch (e) {
      for (const q of group) q.reject(e);
    }
  }

  /** Resolve each batch over the ones before it; one run per changed table holds all their rows. */
  private async plan(head: Snapshot, group: Queued[]): Promise<PlanResult<Outcome[]>> {
    let view = head;
    const outcomes: Outcome[] = [];
    const rows = new Map<string, { type: TableType; byKey: Map<string, RunRow>; kept: string[] }>();
    for (const q of group) {
      if (q.opts.signal?.aborted) {
        outcomes.push({ error: new BranchgraphError('aborted', 'the write was aborted before its group was published') });
        continue;
      }
      try {
        // Commit metadata is stored text: refused per caller, as an ungrouped write refuses it.
        const bad = findInputProblem({ author: q.opts.author, message: q.opts.message }, 'commit');
        if (bad !== undefined) throw new BranchgraphError('invalid_input', `${bad.path}: ${bad.message}`, { issues: [bad] });
        const { tables, embedder } = this.ports;
        const r = await resolveWrite({ tables, head: view, ops: q.ops, embedder, signal: q.opts.signal });
        outcomes.push({ summary: r.summary, changed: r.rows.length > 0 });
        for (const [type, changed] of r.rows) {
          // A @unique property is kept by the group's run only if every batch in it kept it.
          const kept = r.keptUnique.get(type.name) ?? [];
          const t = rows.get(type.name) ?? { type, byKey: new Map<string, RunRow>(), kept };
          t.kept = t.kept.filter((p) => kept.includes(p));
          for (const row of changed) t.byKey.set(row.key, row);
          rows.set(type.name, t);
          // Later batches see this one's rows, as if it had been published first.
          const staged = this.ports.runFiles.stage(type, changed);
          view = { ...view, tables: { ...view.tables, [type.name]: { runs: [...(view.tables[type.name] ?? EMPTY_TABLE).runs, staged] } } };
        }
      } catch (e) {
        outcomes.push({ error: toBranchgraphError(e) });
      }
    }
    if (rows.size === 0) return { unchanged: outcomes };
    const tables: Record<string, TableVersion> = {};
    const scratch: RunRef[] = [];
    try {
      for (const [name, { type, byKey, kept }] of rows) {
        const runs = await appendRun({
          runFiles: this.ports.runFiles,
          type,
          rows: [...byKey.values()].sort((a, b) => compareKey(a.key, b.key)),
          runs: (head.tables[name] ?? EMPTY_TABLE).runs,
          foldable: ownRuns(head.branch?.lineage),
          keptUnique: kept,
          scratch,
        });
        tables[name] = { runs };
      }
    } catch (e) {
      await this.ports.runFiles.delete(scratch).catch(() => undefined);
      throw e;
    }
    const published = group.filter((_, i) => {
      const o = outcomes[i] as Outcome;
      return !('error' in o) && o.changed;
    });
    const messages = published.map((q) => q.opts.message ?? 'write').join('; ');
    const plan: ChangePlan<Outcome[]> = {
      kind: 'write',
      tables,
      scratch,
      result: outcomes,
      message:
        published.length === 1
          ? (published[0]?.opts.message ?? 'write')
          : `${published.length} writes: ${messages.slice(0, MAX_GROUP_MESSAGE)}`,
      group: published.map((q) => ({ author: q.opts.author ?? q.opts.actor ?? this.ports.actor, message: q.opts.message ?? 'write' })),
    };
    return plan;
  }
}
