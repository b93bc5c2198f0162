/**
 * The small interfaces plans and reads are written against, so each takes
 * only what it uses. `Graph` implements `TableReader` and
 * `ManifestReader`; `RunStore` implements `RunReader` and `RunWriter`;
 * `Repository` implements `ManifestReader` too. Tests
 * may pass anything that fits.
 */
import type { TableType } from '../model/schema.js';
import type { RunRef, RunRow } from '../table/run.js';
import type { LoadRun, TableVersion } from '../table/table-version.js';
import type { IndexReader } from '../table/secondary-index.js';
import type { Snapshot } from './graph.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { BranchRecord } from './repository.js';

/** A table of a snapshot: its type, its version, how to load its runs, and its index lookups. */
export interface TableView {
  type: TableType;
  version: TableVersion;
  load: LoadRun;
  /** Exact lookups by @unique value and incoming edge (a scan when no index is usable). */
  indexes: IndexReader;
}

/** Reads a snapshot's tables; `table` throws `not_found` for a table the schema lacks. */
export interface TableReader {
  table(snap: Snapshot, name: string, signal?: AbortSignal): TableView;
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

/** Reads published manifests and branch heads. */
export interface ManifestReader {
  readManifest(ref: ManifestRef, signal?: AbortSignal): Promise<Manifest>;
  headRef(rec: BranchRecord, signal?: AbortSignal): Promise<ManifestRef>;
}
