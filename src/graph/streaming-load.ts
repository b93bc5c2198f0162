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
import { findType, type TableType } from '../model/schema.js';
import type { ProgressSink } from '../model/progress.js';
import type { RunRef, RunRow } from '../table/run.js';
import { mergeSorted } from '../table/sorted-merge.js';
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
import { resolveWrite, type WriteSummary } from './write-batch.js';
import { loadChunks, type LoadSource } from './load-source.js';
import { LoadSpill, type SpilledChunk } from './load-spill.js';
import type { RunStore } from './run-store.js';
import type { Embedder, Publication, TableReader } from './ports.js';
import type { Snapshot } from './snapshot.js';
import type { ChangeOptions, ChangeResult, PlanResult } from './change.js';

/** Rows checked as one batch and spilled as one sorted chunk: what phase 1 holds in memory. */
export const CHUNK_ROWS = 16_384;
/** The most rows one bulk load takes. */
export const MAX_BULK_ROWS = 100_000_000;
const MAX_REPORTED_ISSUES = 200;

/** A row as spilled, with where it was read. */
interface Lined {
  row: RunRow;
  line: number;
}

/** An index entry as spilled, with the line of the row that gave it. */
interface Entry {
  entry: string;
  line: number;
}

/** The table a load fills by the bulk path on `head`, or undefined when it takes the general path. */
export function bulkTable(head: Snapshot, source: LoadSource): TableType | undefined {
  if (source.format === 'ndjson' || source.table === undefined) return undefined;
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

export async function streamLoad(a: StreamingLoad): Promise<ChangeResult<WriteSummary>> {
  const spill = await LoadSpill.open();
  const written: RunRef[] = [];
  let table: { version: TableVersion & { indexes?: TableIndexes }; rows: number; readAt: number };
  try {
    const chunks = await spillChunks(a, spill);
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

/** Phase 1: check each chunk as a write batch and spill its rows sorted by key. */
async function spillChunks(a: StreamingLoad, spill: LoadSpill): Promise<SpilledChunk[]> {
  const { type, opts } = a;
  const chunkRows = a.chunkRows ?? CHUNK_ROWS;
  const chunks: SpilledChunk[] = [];
  // @unique is checked over the whole load by the index merge (phase 3): a chunk alone cannot
  // judge it, as an upsert in a later chunk may take the value away from a row of this one.
  const head = { ...a.head, schema: { ...a.head.schema, types: a.head.schema.types.map((t) => (t === type ? withoutUnique(t) : t)) } };
  let total = 0;
  for await (const chunk of loadChunks(a.source, { type, rows: chunkRows, maxBytes: opts.maxBytes, maxHeldBytes: opts.maxHeldBytes })) {
    total += chunk.ops.length;
    if (total > MAX_BULK_ROWS) throw new BranchgraphError('payload_too_large', `a load holds at most ${MAX_BULK_ROWS} rows`);
    const resolved = await resolveWrite({
      tables: a.tables,
      head,
      ops: chunk.ops,
      maxOps: chunkRows,
      embedder: a.embedder,
      name: chunk.name,
      signal: opts.signal,
    });
    const rows = resolved.rows[0]?.[1] ?? [];
    const from = resolved.origins.get(type.name) ?? [];
    chunks.push(await spill.write<Lined>(rows.map((row, i) => ({ row, line: chunk.origins[from[i] as number] as number }))));
    opts.progress?.restart(total, 'validate');
    opts.progress?.advance(total);
  }
  return chunks;
}

function withoutUnique(type: TableType): TableType {
  return { ...type, props: type.props.map((p) => ({ ...p, unique: false })) } as TableType;
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

/** Phase 2: merge the chunks into the table's run; each index's entries spilled in sorted chunks. */
async function mergeRows(
  a: StreamingLoad,
  s: { spill: LoadSpill; chunks: SpilledChunk[]; specs: IndexSpec[]; issues: MergeIssues },
): Promise<{ run: RunRef | undefined; rows: number; entries: SpilledChunk[][] }> {
  const { type, opts } = a;
  const { spill, specs, issues } = s;
  const chunkRows = a.chunkRows ?? CHUNK_ROWS;
  const planned = s.chunks.reduce((n, c) => n + c.items, 0);
  opts.progress?.restart(planned, 'write');
  const sink = a.runs.openRun(type, { signal: opts.signal });
  const held: Entry[][] = specs.map(() => []);
  const entries: SpilledChunk[][] = specs.map(() => []);
  const spillEntries = async (i: number): Promise<void> => {
    const list = (held[i] as Entry[]).sort((x, y) => (x.entry < y.entry ? -1 : x.entry > y.entry ? 1 : 0));
    held[i] = [];
    (entries[i] as SpilledChunk[]).push(await spill.write(list));
  };
  let rows = 0;
  let prev: Lined | undefined;
  const out: RunRow[] = [];
  const take = (r: Lined): void => {
    out.push(r.row);
    rows++;
    for (const [i, spec] of specs.entries()) {
      const entry = indexEntry(spec, r.row);
      if (entry !== undefined) (held[i] as Entry[]).push({ entry, line: r.line });
    }
  };
  try {
    const keyOf = (r: Lined): string => r.row.key;
    const chunks = await spill.fanIn<Lined>(s.chunks, { keyOf, fanIn: a.fanIn });
    for await (const batch of mergeSorted<Lined>({ sources: chunks.map((c) => spill.read<Lined>(c)), keyOf })) {
      for (const { item } of batch) {
        if (prev !== undefined && prev.row.key === item.row.key) {
          if (a.source.op === 'insert') issues.add(item.line, `${type.name} ${item.row.key} already exists (at ${issues.name(prev.line)})`);
          else prev = item;
          continue;
        }
        if (prev !== undefined) take(prev);
        prev = item;
      }
      if (issues.full) break;
      if (issues.list.length === 0) await sink.push(out.splice(0));
      for (let i = 0; i < specs.length; i++) if ((held[i] as Entry[]).length >= chunkRows) await spillEntries(i);
      opts.progress?.advance(batch.length);
    }
    if (prev !== undefined) take(prev);
    if (issues.list.length > 0) {
      await sink.abort();
      return { run: undefined, rows: 0, entries };
    }
    await sink.push(out.splice(0));
    for (let i = 0; i < specs.length; i++) if ((held[i] as Entry[]).length > 0) await spillEntries(i);
    return { run: await sink.close(), rows, entries };
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
  let prev: { value: string; key: string } | undefined;
  try {
    const keyOf = (e: Entry): string => e.entry;
    const chunks = await s.spill.fanIn<Entry>(s.chunks, { keyOf, fanIn: a.fanIn });
    for await (const batch of mergeSorted<Entry>({ sources: chunks.map((c) => s.spill.read<Entry>(c)), keyOf })) {
      const out: RunRow[] = [];
      for (const { item } of batch) {
        const parts = entryParts(item.entry);
        if (spec.kind === 'unique' && prev !== undefined && prev.value === parts.value)
          issues.add(item.line, `${a.type.name}.${spec.prop} = ${parts.value} is also used by ${prev.key}`);
        prev = parts;
        out.push({ key: item.entry, tomb: false, hash: '1', props: {} });
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
