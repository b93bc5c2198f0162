/**
 * WAL ingest: one writer identity (shard) appending sealed generations.
 *
 * Ingest bypasses the manifest publication race: a generation is one
 * create-only PUT under this writer's own shard, so concurrent writers never
 * collide and never re-plan. Rows are validated exactly like an ordinary
 * write (`resolveWrite` against the branch's view, pending generations
 * included) and stored as resolved states. A generation is acknowledged once
 * its PUT returned; from then on it is in every view of the branch until
 * catch-up (or any publication on the branch) folds it into the tables.
 *
 * Sealing: a generation closes when it reaches `maxGenerationRows` rows or
 * `maxGenerationBytes` of input, when it has been open `sealAfterMs`, or
 * when the request ends. A generation whose rows fail validation is refused
 * with the validation error; generations sealed before it in the same
 * request stay acknowledged, and the error says how many.
 *
 * The first ingest into a branch lineage registers the shard in the head
 * manifest (one publication that changes no rows); readers list pending generations only
 * for lineages with a registered shard, so branches without ingest pay
 * nothing for the WAL.
 */
import { BranchgraphError, throwIfAborted } from '../model/errors.js';
import type { Graph, Snapshot } from '../graph/graph.js';
import type { BranchRecord } from '../graph/repository.js';
import { resolveWrite, type WriteOp, type WriteSummary } from '../graph/write-batch.js';
import type { RunRow } from '../table/run.js';
import { encodeGeneration, GENERATION_FORMAT, parseGenerationKey, validateShard, walKeys, type Generation } from './generation.js';
import { watermarksFor } from './pending.js';

export interface WalWriterOptions {
  shard: string;
  maxGenerationRows?: number;
  maxGenerationBytes?: number;
  sealAfterMs?: number;
  now?: () => number;
}

export const DEFAULT_GENERATION_ROWS = 4096;
export const DEFAULT_GENERATION_BYTES = 4 * 1024 * 1024;
export const DEFAULT_SEAL_AFTER_MS = 1000;

export interface SealedGeneration {
  key: string;
  seq: number;
  stamp: number;
  rows: number;
}

export interface IngestReport {
  branch: string;
  shard: string;
  generations: SealedGeneration[];
  /** Operations received. */
  operations: number;
  summary: WriteSummary;
}

interface ShardState {
  /** Next sequence number to create. */
  next: number;
  /** Stamp of the last generation, so stamps stay strictly increasing within the shard. */
  lastStamp: number;
}

export class WalWriter {
  readonly shard: string;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly sealAfterMs: number;
  private readonly now: () => number;
  private readonly states = new Map<string, ShardState>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly graph: Graph,
    opts: WalWriterOptions,
  ) {
    validateShard(opts.shard);
    this.shard = opts.shard;
    this.maxRows = opts.maxGenerationRows ?? DEFAULT_GENERATION_ROWS;
    this.maxBytes = opts.maxGenerationBytes ?? DEFAULT_GENERATION_BYTES;
    this.sealAfterMs = opts.sealAfterMs ?? DEFAULT_SEAL_AFTER_MS;
    this.now = opts.now ?? Date.now;
  }

  /**
   * Append `ops` to `branch`, sealing generations as they fill up. The
   * operations may arrive as a stream (an NDJSON request body); a
   * generation open longer than `sealAfterMs` is sealed even while the
   * stream waits for more.
   */
  async ingest(branch: string, ops: Iterable<WriteOp> | AsyncIterable<WriteOp>, opts: { signal?: AbortSignal; actor?: string } = {}): Promise<IngestReport> {
    const report: IngestReport = { branch, shard: this.shard, generations: [], operations: 0, summary: { inserted: 0, updated: 0, deleted: 0, cascaded: 0 } };
    let buffer: WriteOp[] = [];
    let bufferBytes = 0;
    let openedAt = 0;
    const seal = async (): Promise<void> => {
      if (buffer.length === 0) return;
      const batch = buffer;
      buffer = [];
      bufferBytes = 0;
      const sealed = await this.sealGeneration(branch, batch, opts);
      if (sealed !== undefined) {
        report.generations.push(sealed.generation);
        for (const k of ['inserted', 'updated', 'deleted', 'cascaded'] as const) report.summary[k] += sealed.summary[k];
      }
    };
    try {
      await this.consume(ops, opts.signal, report, (op) => {
        if (buffer.length === 0) openedAt = this.now();
        buffer.push(op);
        bufferBytes += JSON.stringify(op.values ?? null).length;
        return buffer.length >= this.maxRows || bufferBytes >= this.maxBytes || this.now() - openedAt >= this.sealAfterMs;
      }, () => (buffer.length > 0 ? openedAt + this.sealAfterMs : undefined), seal);
      await seal();
    } catch (e) {
      if (e instanceof BranchgraphError && report.generations.length > 0) {
        // Earlier generations of this request are durable; say so, precisely.
        e.details.acknowledged = { generations: report.generations.length, rows: report.generations.reduce((n, g) => n + g.rows, 0), lastSeq: report.generations.at(-1)?.seq };
      }
      throw e;
    }
    return report;
  }

  /**
   * Feed operations to `add` (which says when the open generation is full),
   * sealing when it is full or when its deadline passes while the source
   * waits for more.
   */
  private async consume(
    ops: Iterable<WriteOp> | AsyncIterable<WriteOp>,
    signal: AbortSignal | undefined,
    report: IngestReport,
    add: (op: WriteOp) => boolean,
    deadline: () => number | undefined,
    seal: () => Promise<void>,
  ): Promise<void> {
    const iterator = (Symbol.asyncIterator in ops ? ops[Symbol.asyncIterator]() : (ops as Iterable<WriteOp>)[Symbol.iterator]()) as AsyncIterator<WriteOp> | Iterator<WriteOp>;
    let next: Promise<IteratorResult<WriteOp>> | undefined;
    let finished = false;
    try {
      for (;;) {
        throwIfAborted(signal);
        next ??= Promise.resolve(iterator.next());
        const due = deadline();
        let item: IteratorResult<WriteOp> | 'timeout';
        if (due !== undefined) {
          let timer: NodeJS.Timeout | undefined;
          item = await Promise.race([next, new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(0, due - this.now()))))]);
          clearTimeout(timer);
        } else item = await next;
        if (item === 'timeout') {
          await seal();
          continue;
        }
        next = undefined;
        if (item.done === true) {
          finished = true;
          return;
        }
        report.operations++;
        if (add(item.value)) await seal();
      }
    } finally {
      // Leaving early (a refused generation): a read still in flight must not become an
      // unhandled rejection, and the source (a request body) is released.
      if (!finished) {
        next?.catch(() => undefined);
        void Promise.resolve(iterator.return?.()).catch(() => undefined);
      }
    }
  }

  private async sealGeneration(branch: string, ops: WriteOp[], opts: { signal?: AbortSignal; actor?: string }): Promise<{ generation: SealedGeneration; summary: WriteSummary } | undefined> {
    // Seals of one branch run one at a time: each validates against the ones before it.
    const prev = this.locks.get(branch) ?? Promise.resolve();
    const run = prev.catch(() => undefined).then(() => this.sealLocked(branch, ops, opts));
    this.locks.set(branch, run);
    try {
      return await run;
    } finally {
      if (this.locks.get(branch) === run) this.locks.delete(branch);
    }
  }

  private async sealLocked(branch: string, ops: WriteOp[], opts: { signal?: AbortSignal; actor?: string }): Promise<{ generation: SealedGeneration; summary: WriteSummary } | undefined> {
    let head = await this.graph.branchHead(branch, opts.signal);
    let resolved = await resolveWrite(this.graph, head, ops, opts.signal);
    if (resolved.rows.length === 0) return undefined;
    // Register only for rows that passed validation: a refused ingest changes nothing stored.
    if (!(this.shard in watermarksFor(head.manifest, (head.branch as BranchRecord).lineage))) {
      head = await this.register(branch, opts);
      resolved = await resolveWrite(this.graph, head, ops, opts.signal);
    }
    // The generation goes to the lineage it was validated against.
    const rec = head.branch as BranchRecord;
    if (resolved.rows.length === 0) return undefined;
    const tables: Record<string, [string, string, Record<string, unknown> | null][]> = {};
    for (const [type, rows] of resolved.rows) tables[type.name] = rows.map((r: RunRow) => [r.key, r.hash, r.props]);
    for (let attempt = 1; ; attempt++) {
      const state = await this.shardState(rec.lineage, head, opts.signal);
      const stamp = Math.max(this.now(), state.lastStamp + 1);
      const generation: Omit<Generation, 'checksum'> = { format: GENERATION_FORMAT, lineage: rec.lineage, shard: this.shard, seq: state.next, stamp, schema: head.manifest.schema, tables };
      const key = walKeys.generation(rec.lineage, this.shard, state.next);
      const file = encodeGeneration(generation);
      try {
        await this.graph.store.putIfAbsent(key, file, { signal: opts.signal });
      } catch (e) {
        // The next seal lists the shard again rather than trusting a counter the failure may have skewed.
        this.states.delete(rec.lineage);
        // Another process runs with this shard name: it is misconfigured, but its rows stand; move past them.
        if (e instanceof BranchgraphError && e.code === 'object_exists' && attempt < 3) continue;
        throw e;
      }
      this.states.set(rec.lineage, { next: state.next + 1, lastStamp: stamp });
      const rows = resolved.rows.reduce((n, [, r]) => n + r.length, 0);
      return { generation: { key, seq: generation.seq, stamp, rows }, summary: resolved.summary };
    }
  }

  /** Where this shard continues in a lineage: after the highest generation listed or folded. */
  private async shardState(lineage: string, head: Snapshot, signal?: AbortSignal): Promise<ShardState> {
    const known = this.states.get(lineage);
    if (known !== undefined) return known;
    let maxSeq = watermarksFor(head.manifest, lineage)[this.shard] ?? 0;
    let lastKey: string | undefined;
    for await (const o of this.graph.store.list(walKeys.shardPrefix(lineage, this.shard), { signal })) {
      const at = parseGenerationKey(o.key);
      if (at !== undefined && at.seq >= maxSeq) {
        maxSeq = at.seq;
        lastKey = o.key;
      }
    }
    let lastStamp = 0;
    if (lastKey !== undefined) {
      const last = await this.graph.runs.generation(lastKey, signal).catch(() => undefined);
      lastStamp = last?.generation.stamp ?? 0;
    }
    const state = { next: maxSeq + 1, lastStamp };
    this.states.set(lineage, state);
    return state;
  }

  /** Record this shard in the branch's head manifest, so readers list its generations. */
  private async register(branch: string, opts: { signal?: AbortSignal; actor?: string }): Promise<Snapshot> {
    await this.graph.commitChange<null>(branch, { ...(opts.signal ? { signal: opts.signal } : {}), ...(opts.actor ? { actor: opts.actor } : {}) }, async (head) => {
      const marks = watermarksFor(head.manifest, (head.branch as BranchRecord).lineage);
      if (this.shard in marks) return { unchanged: null };
      // Registration changes no rows: pending generations stay pending.
      return { kind: 'catchup', keepPending: true, wal: { ...marks, [this.shard]: 0 }, scratch: [], result: null, message: `register WAL shard ${this.shard}` };
    });
    return this.graph.branchHead(branch, opts.signal);
  }
}
