/**
 * The small interfaces the layers above the graph are written against, so
 * each orchestrator (a merge run, the WAL writer, catch-up, compaction,
 * group commit) takes exactly the ports it uses and never the `Graph`:
 *
 * - `Heads`: snapshots of branch heads, commits, tags and manifests;
 * - `TableReader`: a snapshot's tables (type, version, loader, indexes);
 * - `ManifestReader` and `SchemaReader`: published manifests and schemas;
 * - `RunFiles`: stored runs (load, stage, write, fold, delete) and WAL
 *   generation files;
 * - `Publication`: the one publication loop (`commitChange`) and the fold
 *   of a head's pending rows;
 * - `Generations`: the WAL's own objects (create-only puts, listing,
 *   deletion).
 *
 * `Graph` builds one `GraphPorts` from its parts. Tests may pass anything
 * that fits.
 */
import type { Schema, TableType } from '../model/schema.js';
import type { InlineBound } from '../table/compaction-policy.js';
import type { CountingStore } from '../store/counting-store.js';
import type { ObjectInfo } from '../store/object-store.js';
import type { RunRef, RunRow } from '../table/run.js';
import type { LoadRun, TableVersion } from '../table/table-version.js';
import type { IndexReader } from '../table/secondary-index.js';
import type { GenerationReader } from '../pending/pending-wal.js';
import type { ChangeOptions, ChangeResult, Plan, PublishOptions } from './change.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { BranchRecord } from './branch-record.js';
import type { PendingMode, Ref, Snapshot } from './snapshot.js';
import type { VersionSearch } from './search-segments.js';

/** A table of a snapshot: its type, its version, how to load its runs, and its index lookups. */
export interface TableView {
  type: TableType;
  version: TableVersion;
  load: LoadRun;
  /** Exact lookups by @unique value and incoming edge (a scan when no index is usable). */
  indexes: IndexReader;
  /** The version's search segments and live index (graph/search-segments.ts); absent where a reader keeps none. */
  search?: () => Promise<VersionSearch>;
}

/** Reads a snapshot's tables; `table` throws `not_found` for a table the schema lacks. */
export interface TableReader {
  table(snap: Snapshot, name: string, signal?: AbortSignal): TableView;
  /** Index lookups over a snapshot's table, read as `type` (a merge reads the target's tables as the merged schema's). */
  indexes(snap: Snapshot, type: TableType, signal?: AbortSignal): IndexReader;
}

/** Loads a table's runs. */
export interface RunReader {
  loader(type: TableType, signal?: AbortSignal): LoadRun;
}

/** Writes the runs a plan publishes, and deletes them when it does not. */
export interface RunWriter {
  write(type: TableType, rows: readonly RunRow[], signal?: AbortSignal): Promise<RunRef>;
  delete(refs: readonly RunRef[], signal?: AbortSignal): Promise<void>;
}

/** Every run operation an orchestrator needs: rows held in memory, folds of pending runs, compaction, WAL files. */
export interface RunFiles extends RunReader, RunWriter, GenerationReader {
  /** Rows held in memory as a run (dry runs, a virtual merge base); never published. */
  stage(type: TableType, rows: readonly RunRow[]): RunRef;
  /** The newest state of each key over `refs`, written as one run (undefined when there is no row). */
  writeNewest(type: TableType, refs: readonly RunRef[], signal?: AbortSignal): Promise<{ ref: RunRef; rows: number } | undefined>;
  /** When a write folds a table's newest runs itself (append-run.ts); false: never. */
  readonly inlineCompaction: InlineBound | false;
  /** `refs` merged into one run (tombstones dropped when nothing older lies below). */
  writeCompacted(request: {
    type: TableType;
    refs: readonly RunRef[];
    dropTombstones: boolean;
    signal?: AbortSignal | undefined;
  }): Promise<RunRef | undefined>;
}

/** Reads published manifests and branch heads. */
export interface ManifestReader {
  readManifest(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest>;
  headRef(rec: BranchRecord, signal?: AbortSignal): Promise<ManifestRef>;
  /** The newest published version of a lineage (0 when none). */
  latestVersion(lineage: string, signal?: AbortSignal): Promise<number>;
}

/** Reads a content-addressed schema. */
export interface SchemaReader {
  readSchema(hash: string, signal?: AbortSignal): Promise<Schema>;
}

/** What a head read may ask for: the branch's pending rows as a view (the default), listed only, or not at all. */
export interface HeadOptions {
  withoutPending?: boolean;
  pendingListedOnly?: boolean;
}

/**
 * A head to plan on. With `check`, it is the head a branch hint names, not yet confirmed: `check`
 * reads the head itself, and nothing planned on `head` may be published unless the two agree.
 */
export interface HintedHead {
  head: Snapshot;
  check?: Promise<Snapshot>;
}

/** Snapshots: of a manifest, a branch head, a commit, or any ref. */
export interface Heads {
  snapshotAt(ref: ManifestRef, opts?: { signal?: AbortSignal; branch?: BranchRecord; pending?: PendingMode }): Promise<Snapshot>;
  branchHead(name: string, signal?: AbortSignal, opts?: HeadOptions): Promise<Snapshot>;
  /** A branch's head, or the one its hint names with the head read that confirms it (snapshot-reader.ts). */
  hintedHead(name: string, signal?: AbortSignal): Promise<HintedHead>;
  commitSnapshot(commitId: string, signal?: AbortSignal): Promise<Snapshot>;
  resolve(ref: Ref, signal?: AbortSignal): Promise<Snapshot>;
}

/** What folding a head's pending rows needs: the branch, the head read, and the commit's message. */
export interface FoldRequest extends ChangeOptions {
  branch: string;
  head: Snapshot;
  message: string;
}

/** The publication loop (see publisher.ts). */
export interface Publication {
  commitChange<T>(branch: string, opts: PublishOptions, plan: Plan<T>): Promise<ChangeResult<T>>;
  /** Publish exactly `head`'s pending generations; the snapshot that holds them, or `head` when none are pending. */
  foldExactly(request: FoldRequest): Promise<Snapshot>;
  /**
   * Publish whatever is pending on the branch now (planned again on every race, so a steady writer
   * never makes it give up) and return the head that holds it, with no pending part.
   */
  foldPendingNow(request: Omit<FoldRequest, 'head'>): Promise<Snapshot>;
  /**
   * Start learning what a publication will need before its change is planned (where the event log
   * ends, in a cold process), so it is read beside the heads rather than after them.
   */
  warm(): void;
}

/** The WAL's objects in the store: sealed generations are created once, listed by prefix and deleted when folded. */
export interface Generations {
  /** Create-only; `object_exists` when the key is taken. */
  create(key: string, bytes: Uint8Array, signal?: AbortSignal): Promise<void>;
  list(prefix: string, signal?: AbortSignal): AsyncIterable<ObjectInfo>;
  /** Best effort: tidying, never needed for correctness. */
  discard(keys: readonly string[], signal?: AbortSignal): Promise<void>;
}

/**
 * What fills `@embed` vectors (and turns a search's `near: {text}` into a vector): texts in, one
 * vector of `dims` values per text out, in order. A failure is a typed error (`embedding_failed`).
 */
export interface Embedder {
  readonly name: string;
  embed(texts: readonly string[], dims: number, signal?: AbortSignal): Promise<number[][]>;
}

/** The ports of one graph, and the same ports over a store that counts every call (one merge's, one catch-up's). */
export interface GraphPorts {
  heads: Heads;
  /** Fills `@embed` vectors when a write lands (graph/embed-ops.ts). */
  embedder: Embedder;
  tables: TableReader;
  manifests: ManifestReader & SchemaReader;
  runFiles: RunFiles;
  publication: Publication;
  generations: Generations;
  /** Branch records a merge deletes a merged source from. */
  branches: { delete(name: string, opts?: ChangeOptions): Promise<BranchRecord> };
  clock: () => number;
  /** Who changes are made by when a request names no one. */
  actor: string;
  counted(): { ports: GraphPorts; counting: CountingStore };
}
