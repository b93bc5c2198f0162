/**
 * Catch-up: fold pending WAL generations into a branch's tables.
 *
 * A round lists the pending generations in overlay order and cuts that
 * order into batches of whole generations, each capped by count
 * (`maxGenerations`, 0 = no count cap) and bytes (`maxBytes`; a single
 * larger generation forms a batch alone). The order comes from each
 * generation's first bytes (stamp, shard, sequence; see generation.ts), so
 * listing decodes no row. Per batch:
 *   1. read and decode its generations (growing a memory reservation per
 *      generation);
 *   2. build one run per table, newest wins per key (tombstones kept, they
 *      shadow older rows);
 *   3. publish a manifest adding those runs and recording every shard's
 *      watermark, create-only through the ordinary publication loop;
 *   4. only then delete the folded generation objects.
 *
 * Why batches are prefixes of the overlay order rather than one shard at a
 * time: pending rows overlay the tables, so folding shard B while an older
 * generation of shard A is still pending would let A's row override B's
 * newer one once B sits in the tables. A prefix keeps every view identical
 * before and after each commit. When shards ingest one after another, the
 * prefix is exactly "shard by shard, in order".
 *
 * Fencing: each batch records the watermarks it was built against; a
 * commit that finds the head's watermarks moved (another catch-up, or a
 * write that folded pending rows) publishes nothing and the round starts
 * over from the new head. Watermarks only grow, so a row is never folded
 * twice, and a crash anywhere leaves either the generations pending or
 * folded below a published watermark, never lost.
 *
 * Batches are pipelined (see catch-up-pipeline.ts).
 */
import { BranchgraphError } from '../model/errors.js';
import { mapLimit } from '../model/map-limit.js';
import { findType } from '../model/schema.js';
import type { GraphPorts } from '../graph/ports.js';
import type { Snapshot } from '../graph/snapshot.js';
import type { BranchRecord } from '../graph/branch-record.js';
import type { RunRef } from '../table/run.js';
import { emptyCounts, type StoreCounts } from '../store/counting-store.js';
import { PhaseTimer } from '../model/phase-timer.js';
import { foldedEntries, GenerationFoldedError, virtualRunRef, type GenerationInfo } from '../pending/generation.js';
import { watermarksFor } from '../pending/pending-wal.js';
import { runCatchUpPipeline, type PipelineOutcome, type Reservation } from './catch-up-pipeline.js';

export const DEFAULT_CATCHUP_MAX_GENERATIONS = 64;
export const DEFAULT_CATCHUP_MAX_BYTES = 64 * 1024 * 1024;
export const DEFAULT_CATCHUP_BUDGET_BYTES = 256 * 1024 * 1024;
/** Decoded rows take several times their JSON size in memory. */
export const GENERATION_DECODE_FACTOR = 4;
const MAX_ROUNDS = 4;
const READ_CONCURRENCY = 8;

export interface CatchUpOptions {
  maxGenerations?: number;
  maxBytes?: number;
  pipeline?: boolean;
  budgetBytes?: number;
  signal?: AbortSignal;
  actor?: string;
}

export interface CatchUpBatch {
  generations: GenerationInfo[];
  /** Watermarks the batch was built against, and the ones it records. */
  start: Record<string, number>;
  end: Record<string, number>;
  bytes: number;
}

export type CatchUpPhase = 'list' | 'pipeline';

/** What a catch-up did: batches and generations folded, rounds started over, pipeline overlap and memory, phase times and store calls. */
export interface CatchUpReport {
  branch: string;
  outcome: 'caught_up' | 'nothing_pending' | 'incomplete';
  batches: number;
  generations: number;
  rows: number;
  bytes: number;
  /** Rounds started over because the branch moved under a batch. */
  staleRounds: number;
  pendingAfter: number;
  overlapped: number;
  retries: number;
  maxAlive: number;
  maxReservedBytes: number;
  totalMs: number;
  phasesMs: Record<CatchUpPhase, number>;
  storeCalls: StoreCounts;
}

/**
 * Cut generations (in overlay order) into batches: whole generations, at
 * most `maxGenerations` (0: unlimited) and `maxBytes` per batch, except a
 * single generation larger than `maxBytes`, which goes alone.
 */
export function planBatches(a: {
  generations: readonly GenerationInfo[];
  start: Record<string, number>;
  maxGenerations: number;
  maxBytes: number;
}): CatchUpBatch[] {
  const { generations, start, maxGenerations, maxBytes } = a;
  if (!Number.isInteger(maxGenerations) || maxGenerations < 0)
    throw new BranchgraphError('invalid_input', 'maxGenerations must be a whole number >= 0 (0: no count cap)');
  if (!Number.isInteger(maxBytes) || maxBytes < 1) throw new BranchgraphError('invalid_input', 'maxBytes must be a whole number >= 1');
  const out: CatchUpBatch[] = [];
  let marks = { ...start };
  let cur: GenerationInfo[] = [];
  let bytes = 0;
  const close = (): void => {
    if (cur.length === 0) return;
    const end = { ...marks };
    for (const g of cur) end[g.shard] = Math.max(end[g.shard] ?? 0, g.seq);
    out.push({ generations: cur, start: marks, end, bytes });
    marks = end;
    cur = [];
    bytes = 0;
  };
  for (const g of generations) {
    if (cur.length > 0 && ((maxGenerations > 0 && cur.length >= maxGenerations) || bytes + g.bytes > maxBytes)) close();
    cur.push(g);
    bytes += g.bytes;
  }
  close();
  return out;
}

function sameMarks(a: Record<string, number>, b: Record<string, number>): boolean {
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].every((s) => (a[s] ?? 0) === (b[s] ?? 0));
}

interface Prepared {
  batch: CatchUpBatch;
  runs: Record<string, RunRef>;
  rows: number;
}

function emptyReport(branch: string): CatchUpReport {
  return {
    branch,
    outcome: 'nothing_pending',
    batches: 0,
    generations: 0,
    rows: 0,
    bytes: 0,
    staleRounds: 0,
    pendingAfter: 0,
    overlapped: 0,
    retries: 0,
    maxAlive: 0,
    maxReservedBytes: 0,
    totalMs: 0,
    phasesMs: { list: 0, pipeline: 0 },
    storeCalls: emptyCounts(),
  };
}

/**
 * Read and decode a batch's generations and write one run per table, newest
 * row per key. Decoding happens here, batch by batch, not when the round
 * lists what is pending, so the pipeline decodes the next batch while this
 * one commits.
 */
async function readBatch(r: {
  ports: GraphPorts;
  head: Snapshot;
  batch: CatchUpBatch;
  reservation: Reservation;
  signal: AbortSignal;
}): Promise<Prepared> {
  const { ports, head, batch, reservation, signal } = r;
  // Reserve before each read; a refusal stops the batch where it stands (the pipeline retries it alone).
  const loaded = await mapLimit(batch.generations, READ_CONCURRENCY, async (info) => {
    reservation.grow(info.bytes * GENERATION_DECODE_FACTOR);
    return { info, ...(await ports.runFiles.generation(info.key, signal)) };
  });
  // Per table, the generations' rows as pending runs in overlay order (the batch's order).
  const byTable = new Map<string, RunRef[]>();
  for (const { info, generation, file, hash } of loaded) {
    for (const table of Object.keys(generation.tables)) {
      const ref = virtualRunRef({ g: generation, key: info.key, table, bytes: file.length, hash });
      if (ref.rows === 0) continue;
      byTable.set(table, [...(byTable.get(table) ?? []), ref]);
    }
  }
  const runs: Record<string, RunRef> = {};
  let rows = 0;
  for (const [table, refs] of byTable) {
    const type = findType(head.schema, table);
    if (type === undefined) continue;
    const folded = await ports.runFiles.writeNewest(type, refs, signal);
    if (folded === undefined) continue;
    runs[table] = folded.ref;
    rows += folded.rows;
  }
  return { batch, runs, rows };
}

/**
 * Publish a batch's runs and watermarks; 'stale' (nothing published) when
 * the head's watermarks are no longer those the batch was built against.
 */
async function commitBatch(c: {
  ports: GraphPorts;
  branch: string;
  lineage: string;
  prepared: Prepared;
  signal: AbortSignal;
  actor?: string | undefined;
}): Promise<'committed' | 'stale'> {
  const { ports, branch, lineage, prepared: p } = c;
  const opts = { signal: c.signal, actor: c.actor };
  const n = p.batch.generations.length;
  const published = await ports.publication.commitChange<'committed' | 'stale'>(
    branch,
    { signal: opts.signal, withoutPending: true, actor: opts.actor },
    async (h) => {
      const rec = h.branch as BranchRecord;
      if (rec.lineage !== lineage || !sameMarks(watermarksFor(h.manifest, lineage), p.batch.start)) return { unchanged: 'stale' };
      const tables = Object.fromEntries(
        Object.entries(p.runs).map(([t, ref]) => [t, { runs: [...(h.manifest.tables[t]?.runs ?? []), ref] }]),
      );
      return {
        kind: 'catchup',
        keepPending: true,
        tables,
        wal: { ...watermarksFor(h.manifest, lineage), ...p.batch.end },
        walFolded: foldedEntries(p.batch.generations),
        scratch: [],
        result: 'committed',
        message: `catch up ${n} WAL generation${n === 1 ? '' : 's'}`,
      };
    },
  );
  if (published.status === 'unchanged') return published.result;
  // Folded generations are below the watermark now; deleting them is tidying, never needed for correctness.
  await ports.generations.discard(
    p.batch.generations.map((x) => x.key),
    opts.signal,
  );
  return 'committed';
}

/** One round's batches through the read-and-commit pipeline, each committed batch and the pipeline's figures counted into `report`. */
async function pipelineRound(a: {
  ports: GraphPorts;
  branch: string;
  head: Snapshot;
  batches: CatchUpBatch[];
  opts: CatchUpOptions;
  report: CatchUpReport;
}): Promise<PipelineOutcome> {
  const { ports: g, branch, head, opts, report } = a;
  const lineage = (head.branch as BranchRecord).lineage;
  const outcome = await runCatchUpPipeline<CatchUpBatch, Prepared>(
    a.batches,
    {
      estimate: (b) => b.bytes * GENERATION_DECODE_FACTOR,
      read: (batch, reservation, readSignal) => readBatch({ ports: g, head, batch, reservation, signal: readSignal }),
      commit: async (p, commitSignal) => {
        const r = await commitBatch({ ports: g, branch, lineage, prepared: p, signal: commitSignal, actor: opts.actor });
        if (r === 'committed') {
          report.batches++;
          report.generations += p.batch.generations.length;
          report.rows += p.rows;
          report.bytes += p.batch.bytes;
        }
        return r;
      },
      discard: (p) => g.runFiles.delete(Object.values(p.runs)),
    },
    { pipeline: opts.pipeline ?? true, budgetBytes: opts.budgetBytes ?? DEFAULT_CATCHUP_BUDGET_BYTES, signal: opts.signal },
  );
  report.overlapped += outcome.overlapped;
  report.retries += outcome.retries;
  report.maxAlive = Math.max(report.maxAlive, outcome.maxAlive);
  report.maxReservedBytes = Math.max(report.maxReservedBytes, outcome.maxReservedBytes);
  return outcome;
}

export async function catchUp(ports: Pick<GraphPorts, 'counted'>, branch: string, opts: CatchUpOptions = {}): Promise<CatchUpReport> {
  const { ports: g, counting } = ports.counted();
  const timer = new PhaseTimer<CatchUpPhase>(['list', 'pipeline']);
  const started = performance.now();
  const signal = opts.signal;
  const report = emptyReport(branch);
  const finish = (): CatchUpReport => {
    report.phasesMs = timer.stop();
    report.totalMs = Math.round((performance.now() - started) * 100) / 100;
    report.storeCalls = counting.snapshot();
    return report;
  };

  let listed = false;
  for (let round = 1; round <= MAX_ROUNDS; round++) {
    timer.enter('list');
    // Ordered from the generations' headers: no row is decoded until its batch is read.
    const head = await g.heads.branchHead(branch, signal, { pendingListedOnly: true });
    const lineage = (head.branch as BranchRecord).lineage;
    report.pendingAfter = head.pending.generations.length;
    // Generations a crash left behind after their fold published are below the watermark: tidy them.
    if (head.pending.leftovers.length > 0) await g.generations.discard(head.pending.leftovers, signal);
    listed = head.pending.generations.length === 0;
    if (listed) break;
    const batches = planBatches({
      generations: head.pending.generations,
      start: watermarksFor(head.manifest, lineage),
      maxGenerations: opts.maxGenerations ?? DEFAULT_CATCHUP_MAX_GENERATIONS,
      maxBytes: opts.maxBytes ?? DEFAULT_CATCHUP_MAX_BYTES,
    });

    timer.enter('pipeline');
    const outcome = await pipelineRound({ ports: g, branch, head, batches, opts, report });
    if (outcome.stopped === 'aborted') {
      finish();
      throw new BranchgraphError('aborted', `catch-up of ${branch} was cancelled after ${report.batches} batches`, {
        details: { batches: report.batches },
      });
    }
    // Another publication folded (and deleted) generations this round had listed: start over from the new head.
    if (outcome.stopped === 'error' && outcome.error instanceof GenerationFoldedError) outcome.stopped = 'stale';
    if (outcome.stopped === 'error') {
      finish();
      throw outcome.error;
    }
    if (outcome.stopped === 'stale') report.staleRounds++;
    else report.outcome = 'caught_up';
  }
  if (!listed) {
    // Ingest kept up with us for every round: say how much is still pending.
    timer.enter('list');
    report.pendingAfter = (await g.heads.branchHead(branch, signal, { pendingListedOnly: true })).pending.generations.length;
  }
  if (report.pendingAfter > 0 && report.outcome === 'nothing_pending') report.outcome = 'incomplete';
  return finish();
}
