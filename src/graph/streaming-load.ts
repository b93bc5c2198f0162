/**
 * The bulk path of a load: one table's CSV or Parquet rows into a table that
 * holds none yet, streamed, with memory bounded by the chunk size rather
 * than by the input's (docs/import.md gives the budget). Every other load
 * takes the general path (bulk-load.ts), which holds the load whole.
 *
 * 1. Chunks. The input is read CHUNK_ROWS rows at a time (load-source.ts
 *    `loadChunks`). Each chunk is checked as a write batch against the head
 *    (types, required values, duplicate keys within the chunk, edge
 *    endpoints, all by the write batch's own checks), and its rows,
 *    sorted by key, are spilled to local scratch (load-spill.ts) with the
 *    line or row each came from.
 * 2. The table. One ordered merge of the chunks (table/sorted-merge.ts)
 *    gives the rows in key order (more chunks than one merge may read at
 *    once are first merged in groups: load-spill.ts `fanIn`, so what a
 *    merge holds is bounded); there is no lookup per row, as the table
 *    holds nothing. A key in two chunks is, for `insert`, a duplicate
 *    (refused, both lines named) and, for `upsert`, a replacement (the later
 *    row wins, as it would in one batch). The rows stream into the table's
 *    one segmented run as they come (RunStore.openRun), and each row's index
 *    entries are spilled in sorted chunks.
 * 3. The indexes. One ordered merge per index gives its run; for a @unique
 *    property, two neighbouring entries with one value are a clash.
 * 4. The commit. The runs are published as one commit if the table is
 *    still empty and the tables its edges point into are as they were
 *    checked; otherwise nothing is published and the load is refused as
 *    `publish_contention` (the input has been read and is not read again).
 *
 * Anything refused before the commit removes the runs it wrote; the spill
 * is removed whatever happens. Problems name the line (CSV) or row
 * (Parquet), as the general path's do.
 */
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import { findType, rowProps, type TableType } from '../model/schema.js';
import type { Row } from '../model/values.js';
import type { ProgressSink } from '../model/progress.js';
import type { RunRef, RunRow } from '../table/run.js';
import {
  entryParts,
  indexEntry,
  indexSpecs,
  indexType,
  runsFingerprint,
  type IndexSpec,
  type TableIndexes,
} from '../table/secondary-index.js';
import { sameRuns, type TableVersion } from '../table/table-version.js';
import { checkEndpoints, checkRows, type CheckedRow, type WriteSummary } from './write-batch.js';
import { contentHash } from '../model/canonical.js';
import { nextTurn } from '../model/turns.js';
import { lookupRows } from '../table/table-lookup.js';
import { GENERAL_PATH, loadChunks, type LoadSource } from './load-source.js';
import { loadHeap } from './load-heap.js';
import { ChunkWriter, LoadSpill, sortedSegment, type SpilledChunk, type SpillSegment } from './load-spill.js';
import type { RunSink, RunStore } from './run-store.js';
import type { Embedder, Publication, TableReader } from './ports.js';
import type { Snapshot } from './snapshot.js';
import type { ChangeOptions, ChangeResult, PlanResult } from './change.js';

/** Rows checked as one batch and spilled as one sorted chunk: what phase 1 holds in memory. */
export const CHUNK_ROWS = 16_384;
/** The most rows one bulk load takes. */
export const MAX_BULK_ROWS = 100_000_000;
const MAX_REPORTED_ISSUES = 200;

/**
 * A chunk's rows as spilled, sorted by key (a key given twice keeps its operations' order):
 * `cols` holds each row's hash, then one column per stored property (rowProps order); index
 * entries are spilled as keys alone.
 */
function rowColumns(type: TableType, rows: readonly CheckedRow[], origins: Uint32Array): SpillSegment {
  const props = rowProps(type).map((p) => p.name);
  return sortedSegment({
    keys: rows.map((r) => r.key),
    lines: Uint32Array.from(rows, (r) => origins[r.index] as number),
    cols: [rows.map((r) => contentHash(r.text)), ...props.map((name) => rows.map((r) => r.row[name] ?? null))],
  });
}

/** The row at `p` of a segment of rowColumns. */
function rowAt(s: SpillSegment, p: number, props: readonly string[]): RunRow {
  const values: Row = {};
  for (let c = 0; c < props.length; c++) values[props[c] as string] = (s.cols[c + 1] as Row[string][])[p] as Row[string];
  return { key: s.keys[p] as string, tomb: false, hash: (s.cols[0] as string[])[p] as string, props: values };
}

/** Index entries gathered while the table's rows are merged, spilled sorted once a chunk's worth is held. */
class HeldEntries {
  keys: string[] = [];
  lines: number[] = [];
  readonly written: ChunkWriter;
  constructor(spill: LoadSpill) {
    this.written = new ChunkWriter(spill);
  }
  async spill(): Promise<void> {
    if (this.keys.length === 0) return;
    const items = { keys: this.keys, lines: Uint32Array.from(this.lines), cols: [] };
    this.keys = [];
    this.lines = [];
    await this.written.add(sortedSegment(items));
  }
}

/** The table a load fills by the bulk path on `head`, or undefined when it takes the general path. */
export function bulkTable(head: Snapshot, source: LoadSource): TableType | undefined {
  if (source.table === undefined) return undefined;
  const type = findType(head.schema, source.table);
  // A missing table is the general path's error to give; an edge type's out-degree is checked per source over the whole batch.
  if (type === undefined || (type.kind === 'edge' && type.cardinality !== null)) return undefined;
  return isEmpty(head, type.name) ? type : undefined;
}

function isEmpty(head: Snapshot, table: string): boolean {
  return (head.tables[table]?.runs.length ?? 0) === 0 && (head.manifest.tables[table]?.runs.length ?? 0) === 0;
}

export interface StreamingLoad {
  tables: TableReader;
  runs: RunStore;
  publication: Publication;
  clock: () => number;
  embedder?: Embedder | undefined;
  head: Snapshot;
  type: TableType;
  branch: string;
  source: LoadSource;
  /** `maxBytes` bounds the input streamed through; `maxHeldBytes` one read whole first (Parquet, whose footer comes last). */
  opts: ChangeOptions & { progress?: ProgressSink | undefined; maxBytes: number; maxHeldBytes: number };
  /** Rows per chunk (CHUNK_ROWS; tests take fewer to reach several chunks with few rows). */
  chunkRows?: number;
  /** Chunks one merge reads at once (MAX_FAN_IN; tests take fewer to reach a merge of merges). */
  fanIn?: number;
}

/**
 * The load, published; or GENERAL_PATH, having published and kept nothing, when an NDJSON line
 * turns out not to be for this path. The heap is held near what the load holds while it runs
 * (load-heap.ts).
 */
export function streamLoad(a: StreamingLoad): Promise<ChangeResult<WriteSummary> | typeof GENERAL_PATH> {
  return loadHeap.during(() => load(a));
}

async function load(a: StreamingLoad): Promise<ChangeResult<WriteSummary> | typeof GENERAL_PATH> {
  const spill = await LoadSpill.open();
  const written: RunRef[] = [];
  let table: { version: TableVersion & { indexes?: TableIndexes }; rows: number; readAt: number };
  try {
    const chunks = await spillChunks(a, spill);
    if (chunks === GENERAL_PATH) return GENERAL_PATH;
    table = await writeTable(a, { spill, chunks, written });
  } catch (e) {
    await a.runs.delete(written).catch(() => undefined);
    throw e;
  } finally {
    await spill.close();
  }
  const summary: WriteSummary = { inserted: table.rows, updated: 0, deleted: 0, cascaded: 0 };
  const plan = async (h: Snapshot): Promise<PlanResult<WriteSummary>> => {
    if (table.rows === 0) return { unchanged: summary };
    if (!unchangedFor(a.head, h, a.type))
      throw new BranchgraphError('publish_contention', `${a.type.name} changed on ${a.branch} while the load was read; retry the load`, {
        details: { branch: a.branch },
      });
    // No scratch: a lost race plans again with these same runs, which are removed below if none publishes.
    return { kind: 'write', tables: { [a.type.name]: table.version }, scratch: [], result: summary, readAt: table.readAt };
  };
  try {
    return await a.publication.commitChange(a.branch, a.opts, plan);
  } catch (e) {
    if (e instanceof BranchgraphError && (e.code === 'publish_contention' || e.code === 'head_moved' || e.code === 'forbidden'))
      await a.runs.delete(written).catch(() => undefined);
    throw e;
  }
}

/** Is `now` still a head the load's runs are right for: the same schema, the table empty, its edges' endpoint tables as checked? */
function unchangedFor(checked: Snapshot, now: Snapshot, type: TableType): boolean {
  if (now.manifest.schema !== checked.manifest.schema || !isEmpty(now, type.name)) return false;
  if (type.kind !== 'edge') return true;
  return [type.from, type.to].every((t) => sameRuns(checked.tables[t], now.tables[t]));
}

/** Phase 1: check each chunk's rows and spill them sorted by key. */
async function spillChunks(a: StreamingLoad, spill: LoadSpill): Promise<SpilledChunk[] | typeof GENERAL_PATH> {
  const { type, opts } = a;
  const chunkRows = a.chunkRows ?? CHUNK_ROWS;
  const chunks = new ChunkWriter(spill);
  let total = 0;
  for await (const chunk of loadChunks(a.source, { type, rows: chunkRows, maxBytes: opts.maxBytes, maxHeldBytes: opts.maxHeldBytes })) {
    if (chunk === GENERAL_PATH) return GENERAL_PATH;
    total += chunk.ops.length;
    if (total > MAX_BULK_ROWS) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_BULK_ROWS} rows`);
    const rows = await checkRows({
      schema: a.head.schema,
      ops: chunk.ops,
      maxOps: chunkRows,
      embedder: a.embedder,
      name: chunk.name,
      wellFormed: chunk.wellFormed,
      signal: opts.signal,
    });
    // Hashed, sorted and serialized on the loop, tens of milliseconds for a chunk: a turn before, after the check's slices.
    await nextTurn();
    // Written while the next chunk is read and checked.
    await chunks.add(rowColumns(type, rows, chunk.origins));
    opts.progress?.restart(total, 'validate');
    opts.progress?.advance(total);
  }
  return chunks.chunks();
}

/** Problems found by the merges, as the write batch reports them (the first MAX_REPORTED_ISSUES). */
class MergeIssues {
  readonly list: ErrorIssue[] = [];
  constructor(readonly name: (line: number) => string) {}
  add(line: number, message: string): void {
    if (this.list.length < MAX_REPORTED_ISSUES) this.list.push({ path: this.name(line), message });
  }
  get full(): boolean {
    return this.list.length >= MAX_REPORTED_ISSUES;
  }
  throwIfAny(): void {
    const first = this.list[0];
    if (first === undefined) return;
    const more = this.list.length > 1 ? ` (and ${this.list.length - 1} more)` : '';
    throw new BranchgraphError('constraint_violation', `load refused: ${first.path}: ${first.message}${more}`, { issues: this.list });
  }
}

/** Phases 2 and 3: the table's run and its indexes' runs, from the spilled chunks; every run written is pushed onto `written`. */
async function writeTable(
  a: StreamingLoad,
  s: { spill: LoadSpill; chunks: SpilledChunk[]; written: RunRef[] },
): Promise<{ version: TableVersion & { indexes?: TableIndexes }; rows: number; readAt: number }> {
  const { type } = a;
  const issues = new MergeIssues((line) => `${a.source.format === 'parquet' ? 'row' : 'line'} ${line}`);
  const specs = indexSpecs(type);
  // Runs written from here on are published only if the commit lands within MAX_PUBLICATION_MS of now.
  const readAt = a.clock();
  const merged = await mergeRows(a, { ...s, specs, issues });
  issues.throwIfAny();
  if (merged.run === undefined) return { version: { runs: [] }, rows: 0, readAt };
  s.written.push(merged.run);
  const runs = [merged.run];
  if (specs.length === 0) return { version: { runs }, rows: merged.rows, readAt };
  const sets: TableIndexes['sets'] = {};
  for (const [i, spec] of specs.entries()) {
    const run = await mergeIndex(a, { spill: s.spill, spec, chunks: merged.entries[i] as SpilledChunk[], issues });
    if (run !== undefined) s.written.push(run);
    sets[spec.name] = { runs: run === undefined ? [] : [run] };
  }
  issues.throwIfAny();
  return { version: { runs, indexes: { of: runsFingerprint(runs), covers: 1, sets } }, rows: merged.rows, readAt };
}

/**
 * Phase 2's output: the rows kept, in key order, with the line each came from. Each row's index
 * entries are held and spilled in sorted chunks; the rows themselves go to the run once an edge's
 * endpoints are checked, and only while the load has no problem.
 */
class KeptRows {
  rows = 0;
  readonly held: HeldEntries[];
  private out: RunRow[] = [];
  private lines: number[] = [];
  private readonly props: string[];
  constructor(
    private readonly a: StreamingLoad,
    private readonly s: { sink: RunSink; spill: LoadSpill; specs: IndexSpec[]; issues: MergeIssues },
  ) {
    this.held = s.specs.map(() => new HeldEntries(s.spill));
    this.props = rowProps(a.type).map((p) => p.name);
  }
  take(seg: SpillSegment, p: number): void {
    const row = rowAt(seg, p, this.props);
    const line = seg.lines[p] as number;
    this.out.push(row);
    this.lines.push(line);
    this.rows++;
    const { specs } = this.s;
    for (let i = 0; i < specs.length; i++) {
      const entry = indexEntry(specs[i] as IndexSpec, row);
      if (entry === undefined) continue;
      const h = this.held[i] as HeldEntries;
      h.keys.push(entry);
      h.lines.push(line);
    }
  }
  async flush(): Promise<void> {
    const [rows, lines] = [this.out, this.lines];
    [this.out, this.lines] = [[], []];
    const { a } = this;
    const { issues } = this.s;
    if (a.type.kind === 'edge' && rows.length > 0)
      await checkEndpoints({
        type: a.type,
        edges: rows.map((_, i) => i),
        of: (i) => ({ key: (rows[i] as RunRow).key, row: (rows[i] as RunRow).props as Row }),
        liveAfter: async (table, ks) => {
          const t = a.tables.table(a.head, table, a.opts.signal);
          return new Set((await lookupRows(t.version, new Set(ks), t.load)).keys());
        },
        report: (i, message) => issues.add(lines[i] as number, message),
      });
    if (issues.list.length === 0) await this.s.sink.push(rows);
  }
  /** Spills the entries held, all of them or only an index's that reached `atLeast`. */
  async spill(atLeast = 0): Promise<void> {
    for (const h of this.held) if (h.keys.length >= atLeast) await h.spill();
  }
}

/** Phase 2: merge the chunks into the table's run; each index's entries spilled in sorted chunks. */
async function mergeRows(
  a: StreamingLoad,
  s: { spill: LoadSpill; chunks: SpilledChunk[]; specs: IndexSpec[]; issues: MergeIssues },
): Promise<{ run: RunRef | undefined; rows: number; entries: SpilledChunk[][] }> {
  const { type, opts } = a;
  const { spill, issues } = s;
  const planned = s.chunks.reduce((n, c) => n + c.items, 0);
  opts.progress?.restart(planned, 'write');
  const sink = a.runs.openRun(type, { signal: opts.signal });
  const kept = new KeptRows(a, { sink, spill, specs: s.specs, issues });
  // The row last seen: kept until the next key shows whether a later one replaces it.
  let prev: SpillSegment | undefined;
  let prevAt = 0;
  try {
    for await (const { segments, at } of spill.merged(await spill.fanIn(s.chunks, a.fanIn))) {
      for (let i = 0; i < at.length; i++) {
        const seg = segments[i] as SpillSegment;
        const p = at[i] as number;
        if (prev !== undefined && prev.keys[prevAt] === seg.keys[p] && a.source.op === 'insert') {
          const first = issues.name(prev.lines[prevAt] as number);
          issues.add(seg.lines[p] as number, `${type.name} ${seg.keys[p]} already exists (at ${first})`);
          continue;
        }
        if (prev !== undefined && prev.keys[prevAt] !== seg.keys[p]) kept.take(prev, prevAt);
        prev = seg;
        prevAt = p;
      }
      await kept.flush();
      if (issues.full) break;
      await kept.spill(a.chunkRows ?? CHUNK_ROWS);
      opts.progress?.advance(at.length);
    }
    if (prev !== undefined && !issues.full) kept.take(prev, prevAt);
    await kept.flush();
    if (issues.list.length > 0) {
      await sink.abort();
      return { run: undefined, rows: 0, entries: [] };
    }
    await kept.spill();
    const entries = await Promise.all(kept.held.map((h) => h.written.chunks()));
    return { run: await sink.close(), rows: kept.rows, entries };
  } catch (e) {
    await sink.abort();
    throw e;
  }
}

/** Phase 3: merge one index's spilled entries into its run; a @unique value held twice is a clash. */
async function mergeIndex(
  a: StreamingLoad,
  s: { spill: LoadSpill; spec: IndexSpec; chunks: SpilledChunk[]; issues: MergeIssues },
): Promise<RunRef | undefined> {
  const { spec, issues } = s;
  const sink = a.runs.openRun(indexType(a.type, spec), { signal: a.opts.signal });
  let prev: string | undefined;
  try {
    const chunks = await s.spill.fanIn(s.chunks, a.fanIn);
    for await (const batch of s.spill.merged(chunks)) {
      const { segments, at } = batch;
      const out: RunRow[] = [];
      for (let i = 0; i < at.length; i++) {
        const seg = segments[i] as SpillSegment;
        const p = at[i] as number;
        const entry = seg.keys[p] as string;
        if (spec.kind === 'unique' && prev !== undefined && sameValue(prev, entry)) {
          const [held, again] = [entryParts(prev), entryParts(entry)];
          issues.add(seg.lines[p] as number, `${a.type.name}.${spec.prop} = ${again.value} is also used by ${held.key}`);
        }
        prev = entry;
        out.push({ key: entry, tomb: false, hash: '1', props: {} });
      }
      if (issues.full) break;
      if (issues.list.length === 0) await sink.push(out);
    }
    if (issues.list.length > 0) {
      await sink.abort();
      return undefined;
    }
    return await sink.close();
  } catch (e) {
    await sink.abort();
    throw e;
  }
}

/** Whether two index entries hold one value (their parts before the separator are equal). */
function sameValue(x: string, y: string): boolean {
  const at = x.indexOf('\u0000');
  return y.indexOf('\u0000') === at && y.startsWith(x.slice(0, at));
}
