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
import { refuseProtected } from '../graph/branches.js';
import { BranchgraphError, throwIfAborted, type ErrorIssue } from '../model/errors.js';
import { findType } from '../model/schema.js';
import { checkRow } from '../model/values.js';
import { findInputProblem } from '../model/text.js';
import type { Manifest } from '../graph/manifest.js';
import type { GraphPorts } from '../graph/ports.js';
import type { Snapshot } from '../graph/snapshot.js';
import type { BranchRecord } from '../graph/branch-record.js';
import { resolveWrite, type WriteOp, type WriteSummary } from '../graph/write-batch.js';
import type { RunRow } from '../table/run.js';
import {
  encodeGenerationInSlices,
  GENERATION_FORMAT,
  generationDigest,
  parseGenerationKey,
  validateShard,
  walKeys,
  type Generation,
} from '../pending/generation.js';
import { watermarksFor } from '../pending/pending-wal.js';

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
/** Attempts to place one generation before the writer gives up with a retryable error. */
const MAX_SEAL_ATTEMPTS = 4;
/** Publications a sealing writer reads back to see whether a fold took its generation. */
const MAX_FOLD_SCAN = 64;

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

/** What the writer needs of a graph: heads, tables to validate against, manifests, generation files and the publication loop (to register a shard). */
export type WalPorts = Pick<GraphPorts, 'heads' | 'tables' | 'manifests' | 'runFiles' | 'generations' | 'publication' | 'embedder'>;

export class WalWriter {
  readonly shard: string;
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly sealAfterMs: number;
  private readonly now: () => number;
  private readonly states = new Map<string, ShardState>();
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(
    private readonly ports: WalPorts,
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
  async ingest(
    branch: string,
    ops: Iterable<WriteOp> | AsyncIterable<WriteOp>,
    opts: { signal?: AbortSignal; actor?: string } = {},
  ): Promise<IngestReport> {
    const report: IngestReport = {
      branch,
      shard: this.shard,
      generations: [],
      operations: 0,
      summary: { inserted: 0, updated: 0, deleted: 0, cascaded: 0 },
    };
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
      await this.consume({
        ops,
        signal: opts.signal,
        report,
        add: (op) => {
          // Checked before it is sized (JSON.stringify recurses): an op no schema could accept is refused here.
          const bad = findInputProblem(op, `ops[${report.operations}]`);
          if (bad !== undefined)
            throw new BranchgraphError('invalid_input', `ingest refused: ${bad.path}: ${bad.message}`, { issues: [bad] });
          if (buffer.length === 0) openedAt = this.now();
          buffer.push(op);
          bufferBytes += JSON.stringify(op.values ?? null).length;
          return buffer.length >= this.maxRows || bufferBytes >= this.maxBytes || this.now() - openedAt >= this.sealAfterMs;
        },
        deadline: () => (buffer.length > 0 ? openedAt + this.sealAfterMs : undefined),
        seal,
      });
      await seal();
    } catch (e) {
      if (e instanceof BranchgraphError && report.generations.length > 0) {
        // Earlier generations of this request are durable; say so, precisely, in an error of our own.
        const acknowledged = {
          generations: report.generations.length,
          rows: report.generations.reduce((n, g) => n + g.rows, 0),
          lastSeq: report.generations.at(-1)?.seq,
        };
        throw new BranchgraphError(e.code, e.message, { cause: e, issues: e.issues, details: { ...e.details, acknowledged } });
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
  private async consume(a: {
    ops: Iterable<WriteOp> | AsyncIterable<WriteOp>;
    signal?: AbortSignal | undefined;
    report: IngestReport;
    add: (op: WriteOp) => boolean;
    deadline: () => number | undefined;
    seal: () => Promise<void>;
  }): Promise<void> {
    const { ops, signal, report, add, deadline, seal } = a;
    const iterator = (Symbol.asyncIterator in ops ? ops[Symbol.asyncIterator]() : (ops as Iterable<WriteOp>)[Symbol.iterator]()) as
      | AsyncIterator<WriteOp>
      | Iterator<WriteOp>;
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
          item = await Promise.race([
            next,
            new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), Math.max(0, due - this.now())))),
          ]);
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

  private async sealGeneration(
    branch: string,
    ops: WriteOp[],
    opts: { signal?: AbortSignal; actor?: string },
  ): Promise<{ generation: SealedGeneration; summary: WriteSummary } | undefined> {
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

  private async sealLocked(
    branch: string,
    ops: WriteOp[],
    opts: { signal?: AbortSignal; actor?: string },
  ): Promise<{ generation: SealedGeneration; summary: WriteSummary } | undefined> {
    let head = await this.ports.heads.branchHead(branch, opts.signal);
    // A protected branch takes rows only through merges; nothing is sealed for it.
    refuseProtected(head.branch, 'ingest', undefined);
    for (let attempt = 1; ; attempt++) {
      let resolved = await resolveWrite({ tables: this.ports.tables, head, ops, signal: opts.signal, embedder: this.ports.embedder });
      if (resolved.rows.length === 0) return undefined;
      // Register only for rows that passed validation: a refused ingest changes nothing stored.
      if (!(this.shard in watermarksFor(head.manifest, (head.branch as BranchRecord).lineage))) {
        head = await this.register(branch, opts);
        resolved = await resolveWrite({ tables: this.ports.tables, head, ops, signal: opts.signal, embedder: this.ports.embedder });
        if (resolved.rows.length === 0) return undefined;
      }
      const put = await this.put(head, resolved.rows, opts.signal);
      if (put !== 'skipped') {
        const rows = resolved.rows.reduce((n, [, r]) => n + r.length, 0);
        return { generation: { key: put.key, seq: put.seq, stamp: put.stamp, rows }, summary: resolved.summary };
      }
      // A fold passed our sequence number before our object existed: it is invisible and was never
      // folded. Revalidate against the head that fold made and write above its watermark.
      if (attempt >= MAX_SEAL_ATTEMPTS) {
        throw new BranchgraphError(
          'publish_contention',
          `another writer with shard ${this.shard} kept folding past this generation; retry`,
          { details: { branch, shard: this.shard } },
        );
      }
      head = await this.ports.heads.branchHead(branch, opts.signal);
    }
  }

  /**
   * Create the generation object at the next free sequence number of this
   * shard, then prove it visible.
   *
   * The sequence number is above both this process's counter and the head's
   * watermark, but the head may be stale: another process with the same
   * shard name (a misconfiguration, but one that must never lose a row) may
   * have folded past that number and deleted the object there, so our
   * create-only PUT succeeds at a number readers skip. After the PUT a fresh
   * head read settles it: a watermark still below our number means every
   * later fold sees our object (a fold deletes what it read only after it
   * published, so nothing can have folded an older object at our key after
   * our PUT). A watermark at or above it was set by a fold that either read
   * our object (it lists it in `walFolded`) or published before our PUT
   * (`skipped`: the caller revalidates and writes again).
   */
  private async put(
    head: Snapshot,
    resolvedRows: [{ name: string }, RunRow[]][],
    signal?: AbortSignal,
  ): Promise<{ key: string; seq: number; stamp: number } | 'skipped'> {
    const rec = head.branch as BranchRecord;
    const tables: Generation['tables'] = {};
    for (const [type, rows] of resolvedRows) tables[type.name] = rows.map((r: RunRow) => [r.key, r.hash, r.props]);
    const floor = (watermarksFor(head.manifest, rec.lineage)[this.shard] ?? 0) + 1;
    for (let attempt = 1; ; attempt++) {
      const state = await this.shardState(rec.lineage, head, signal);
      const seq = Math.max(state.next, floor);
      const stamp = Math.max(this.now(), state.lastStamp + 1);
      const generation: Omit<Generation, 'checksum'> = {
        format: GENERATION_FORMAT,
        lineage: rec.lineage,
        shard: this.shard,
        seq,
        stamp,
        schema: head.manifest.schema,
        tables,
      };
      const key = walKeys.generation(rec.lineage, this.shard, seq);
      const file = await encodeGenerationInSlices(generation);
      try {
        await this.ports.generations.create(key, file, signal);
      } catch (e) {
        // The next seal lists the shard again rather than trusting a counter the failure may have skewed.
        this.states.delete(rec.lineage);
        // Another process runs with this shard name: it is misconfigured, but its rows stand; move past them.
        if (e instanceof BranchgraphError && e.code === 'object_exists' && attempt < MAX_SEAL_ATTEMPTS) continue;
        throw e;
      }
      this.states.set(rec.lineage, { next: seq + 1, lastStamp: stamp });
      const seen = await this.visible({ head, seq, digest: generationDigest(file), signal });
      if (seen.visible) {
        // The branch's schema changed while this generation was validated (a tightening published in
        // between): its rows must satisfy the schema the head now carries, or it is withdrawn unacknowledged.
        const problems =
          seen.newest !== undefined && seen.newest.schema !== head.manifest.schema
            ? await this.schemaProblems(seen.newest.schema, tables, signal)
            : [];
        if (problems.length === 0) return { key, seq, stamp };
        await this.withdraw(rec.lineage, key, signal);
        throw new BranchgraphError(
          'constraint_violation',
          `the branch's schema changed while these rows were sealed, and they break it: ${problems[0]?.path}: ${problems[0]?.message}`,
          {
            issues: problems.slice(0, 200),
          },
        );
      }
      await this.withdraw(rec.lineage, key, signal);
      return 'skipped';
    }
  }

  /** Take back a generation no reader may count on; the next seal lists the shard afresh. */
  private async withdraw(lineage: string, key: string, signal?: AbortSignal): Promise<void> {
    this.states.delete(lineage);
    await this.ports.generations.discard([key], signal);
  }

  /** The value problems of a generation's rows under the schema `hash` names. */
  private async schemaProblems(hash: string, tables: Generation['tables'], signal?: AbortSignal): Promise<ErrorIssue[]> {
    const schema = await this.ports.manifests.readSchema(hash, signal);
    const out: ErrorIssue[] = [];
    for (const [name, states] of Object.entries(tables)) {
      const type = findType(schema, name);
      if (type === undefined) {
        out.push({ path: name, message: `table ${name} no longer exists` });
        continue;
      }
      for (const [key, , props] of states)
        if (props !== null)
          for (const i of checkRow({ table: type, input: props, mode: 'full', path: `${name}/${key}` }).issues) out.push(i);
    }
    return out;
  }

  /** Whether the generation just created at `seq` is (or was, by a fold) in the branch's view, and the newest head it saw. */
  private async visible(a: {
    head: Snapshot;
    seq: number;
    digest: string;
    signal?: AbortSignal | undefined;
  }): Promise<{ visible: boolean; newest?: Manifest }> {
    const { head, seq, digest, signal } = a;
    const rec = head.branch as BranchRecord;
    const repo = this.ports.manifests;
    const latest = await repo.latestVersion(rec.lineage, signal);
    const from = head.manifest.lineage === rec.lineage ? head.manifest.version + 1 : 1;
    if (latest < from) return { visible: true };
    const newest = await repo.readManifest({ lineage: rec.lineage, version: latest }, signal);
    if ((newest.wal[this.shard] ?? 0) < seq) return { visible: true, newest };
    // Some publication since our head folded past `seq`: did one of them read our object?
    if (latest - from >= MAX_FOLD_SCAN) {
      throw new BranchgraphError(
        'publish_contention',
        `branch ${rec.name} moved ${latest - from + 1} times while a generation was sealed; retry`,
        {
          details: { branch: rec.name, shard: this.shard },
        },
      );
    }
    const entry = `${seq}:${digest}`;
    const between = await Promise.all(
      Array.from({ length: latest - from + 1 }, (_, i) => repo.readManifest({ lineage: rec.lineage, version: from + i }, signal)),
    );
    return { visible: between.some((m) => m.walFolded?.[this.shard]?.includes(entry) === true), newest };
  }

  /** Where this shard continues in a lineage: after the highest generation listed or folded. */
  private async shardState(lineage: string, head: Snapshot, signal?: AbortSignal): Promise<ShardState> {
    const known = this.states.get(lineage);
    if (known !== undefined) return known;
    let maxSeq = watermarksFor(head.manifest, lineage)[this.shard] ?? 0;
    let lastKey: string | undefined;
    for await (const o of this.ports.generations.list(walKeys.shardPrefix(lineage, this.shard), signal)) {
      const at = parseGenerationKey(o.key);
      if (at !== undefined && at.seq >= maxSeq) {
        maxSeq = at.seq;
        lastKey = o.key;
      }
    }
    let lastStamp = 0;
    if (lastKey !== undefined) {
      const last = await this.ports.runFiles.generation(lastKey, signal).catch(() => undefined);
      lastStamp = last?.generation.stamp ?? 0;
    }
    const state = { next: maxSeq + 1, lastStamp };
    this.states.set(lineage, state);
    return state;
  }

  /** Record this shard in the branch's head manifest, so readers list its generations. */
  private async register(branch: string, opts: { signal?: AbortSignal; actor?: string }): Promise<Snapshot> {
    await this.ports.publication.commitChange<null>(branch, { signal: opts.signal, actor: opts.actor }, async (head) => {
      const marks = watermarksFor(head.manifest, (head.branch as BranchRecord).lineage);
      if (this.shard in marks) return { unchanged: null };
      // Registration changes no rows: pending generations stay pending, and no commit is added.
      return {
        kind: 'catchup',
        relays: true,
        keepPending: true,
        wal: { ...marks, [this.shard]: 0 },
        scratch: [],
        result: null,
        message: `register WAL shard ${this.shard}`,
      };
    });
    return this.ports.heads.branchHead(branch, opts.signal);
  }
}
