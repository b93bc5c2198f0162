/**
 * Merge decisions, with no I/O.
 *
 * Given two heads (and, for a three-way merge, their base), these functions
 * say what kind of merge it is, which schema the result carries, and what
 * happens to each table: kept as the target has it, adopted from the source
 * by reference, or prepared key by key. The merge orchestrator reads and
 * writes; everything it decides comes from here, so the decisions are
 * tested directly.
 *
 * A head holding pending WAL generations is never "contained" in the other:
 * those are changes its manifest does not show yet.
 */
import { BranchgraphError } from '../model/errors.js';
import { findType, typeText, type Schema, type TableType } from '../model/schema.js';
import type { ManifestRef } from '../graph/manifest.js';
import type { Ancestry } from '../graph/ancestry.js';
import { deltaRuns } from '../table/table-delta.js';
import { EMPTY_TABLE, sameRuns, versionStats, type TableVersion } from '../table/table-version.js';
import type { RunRef } from '../table/run.js';
import { tableMergeAction } from './three-way.js';
import { mergeSchemaTypes } from './schema-merge.js';
import type { Conflict } from '../model/conflict.js';

export type MergeOutcome = 'already_up_to_date' | 'fast_forward' | 'merged' | 'cherry_picked' | 'reverted';

export interface TableMergeSummary {
  table: string;
  action: 'adopted_source' | 'merged';
  sourceChanges: number;
  targetChanges: number;
  bothChanged: number;
  rowsWritten: number;
}

/** What the decisions need of a head. */
export interface MergeSide {
  ref: ManifestRef;
  /**
   * The version that published the head's commit: `ref` itself, or for a re-laid version (a
   * compaction) the version it re-lays (graph/manifest.ts `layout`). History is about commits, so
   * whether one side holds the other is decided by this.
   */
  commit?: ManifestRef;
  ancestry: Ancestry;
  /** Pending WAL generations on the head. */
  pending: number;
  /** Schema hash and document. */
  schemaHash: string;
  schema: Schema;
  tables: Record<string, TableVersion>;
}

export type MergeKind = 'up_to_date' | 'fast_forward' | 'three_way';

export function classifyMerge(source: MergeSide, target: MergeSide): MergeKind {
  if (target.ancestry.contains(source.commit ?? source.ref) && source.pending === 0) return 'up_to_date';
  if (source.ancestry.contains(target.commit ?? target.ref) && target.pending === 0) return 'fast_forward';
  return 'three_way';
}

/**
 * What one attempt of a merge does, decided before any table is read: nothing when a commit under
 * its idempotency key already landed on the target, a three-way merge against the given base when a
 * commit is applied (cherry-pick, revert), and otherwise what the heads' ancestry says.
 */
export function attemptStep(a: { landedUnderKey: boolean; applying: boolean; source: MergeSide; target: MergeSide }): MergeKind {
  if (a.landedUnderKey) return 'up_to_date';
  if (a.applying) return 'three_way';
  return classifyMerge(a.source, a.target);
}

const adopted = (table: string): TableMergeSummary => ({
  table,
  action: 'adopted_source',
  sourceChanges: 0,
  targetChanges: 0,
  bothChanged: 0,
  rowsWritten: 0,
});

/** A fast-forward publishes the source's tables (removing the target's others) and reports the tables that differ. */
export function fastForwardTables(
  source: MergeSide,
  target: MergeSide,
): { tables: Record<string, TableVersion | null>; summaries: TableMergeSummary[] } {
  const tables: Record<string, TableVersion | null> = {};
  for (const name of Object.keys(target.tables)) if (source.tables[name] === undefined) tables[name] = null;
  for (const [name, t] of Object.entries(source.tables)) tables[name] = t;
  const summaries = Object.keys(source.tables)
    .filter((n) => !sameRuns(source.tables[n], target.tables[n]))
    .sort()
    .map(adopted);
  return { tables, summaries };
}

/**
 * The schema a three-way merge carries. Schemas are content-addressed, so
 * comparing hashes needs no read of the base's schema.
 */
/**
 * The merged schema: one side's when only it changed, else the three-way merge of both sides'
 * changes (schema-merge.ts), which may conflict. `base.schema` is needed only in that last case;
 * a virtual base over differing schemas has none, and then the change is refused.
 */
export function mergeSchemas(
  base: { hash: string; schema: Schema | undefined },
  source: MergeSide,
  target: MergeSide,
): { schema: Schema } | { conflicts: Conflict[] } {
  const [b, s, t] = [base.hash, source.schemaHash, target.schemaHash];
  if (s === t || s === b) return { schema: target.schema };
  if (t === b) return { schema: source.schema };
  if (base.schema === undefined) {
    throw new BranchgraphError(
      'schema_incompatible',
      'both branches changed the schema since common ancestors whose schemas differ; apply one schema to both first',
    );
  }
  return mergeSchemaTypes(base.schema, source.schema, target.schema);
}

/** Whether merging these sides needs the base's schema document (both sides changed the schema). */
export function needsBaseSchema(baseHash: string, source: MergeSide, target: MergeSide): boolean {
  return source.schemaHash !== target.schemaHash && source.schemaHash !== baseHash && target.schemaHash !== baseHash;
}

/** A table changed on both sides, with what its preparation is estimated to hold in memory. */
export interface TableToPrepare {
  type: TableType;
  base: TableVersion;
  source: TableVersion;
  target: TableVersion;
  estimateBytes: number;
  /** Which side's changes the preparation walks key by key (see `planBySize`). */
  bySize: SizePlan;
  /** Rows the preparation walks (its progress plan): the walked deltas' rows. */
  plannedRows: number;
  /** Validation needs nothing from the rows only the source changed (`sourceRowsTrusted`). */
  sourceTrusted: boolean;
}

/**
 * How a table changed on both sides is prepared, by the sizes of the two deltas:
 * - `both`: every changed key of either side is merged key by key (streaming both deltas);
 * - `target-big`: only the source's keys are (each looked up in the target); the target's runs
 *   stay as they are;
 * - `source-big`: only the target's keys are (each looked up in the source); the source's delta
 *   runs are adopted by reference and never read. Only when validation needs nothing from the
 *   source's own rows (`sourceRowsTrusted`).
 * A side counts as big from SKEW_ROWS rows and SKEW_FACTOR times the other side.
 */
export type SizePlan = 'both' | 'source-big' | 'target-big';

export const SKEW_ROWS = 4096;
export const SKEW_FACTOR = 8;

export function planBySize(sourceRows: number, targetRows: number, sourceRowsTrusted: boolean): SizePlan {
  if (sourceRowsTrusted && sourceRows >= SKEW_ROWS && sourceRows >= SKEW_FACTOR * targetRows) return 'source-big';
  if (targetRows >= SKEW_ROWS && targetRows >= SKEW_FACTOR * sourceRows) return 'target-big';
  return 'both';
}

/**
 * Whether validating the merge needs nothing from the rows the source changed and the target did
 * not: they were checked against the source's schema when written, the merged schema reads the
 * table the same way, no @unique value and no edge endpoint must be looked up for them, and (for a
 * node table edges refer to) none of them deletes a node. `sourceTombstones` counts deletions in
 * the source's delta runs.
 */
/** Does `schema` define `type` exactly so (its rows read the same under either)? */
export function sameTypeIn(schema: Schema, type: TableType | undefined): boolean {
  const same = type === undefined ? undefined : findType(schema, type.name);
  return type !== undefined && same !== undefined && (same === type || typeText(same) === typeText(type));
}

export function sourceRowsTrusted(a: { schema: Schema; sourceSchema: Schema; type: TableType; sourceTombstones: number }): boolean {
  const { schema, sourceSchema, type, sourceTombstones } = a;
  if (type.kind === 'edge' || type.props.some((p) => p.unique)) return false;
  if (!sameTypeIn(sourceSchema, type)) return false;
  const referenced = schema.types.some((t) => t.kind === 'edge' && (t.from === type.name || t.to === type.name));
  return !referenced || sourceTombstones === 0;
}

export interface TablePlan {
  /** Tables taken from the source by reference. */
  adopted: Record<string, TableVersion>;
  summaries: TableMergeSummary[];
  /** In canonical (name) order, as the scheduler admits them. */
  toPrepare: TableToPrepare[];
}

/** Estimated decoded bytes per stored byte of run, for budget reservations. */
export const DECODE_FACTOR = 4;

/**
 * Per table, the runs a side added over the base where its run list no longer shows them: a side
 * compacted since the base, read with its compacted runs unfolded (table-version.ts alignForDelta).
 */
export type AlignedDeltas = Record<string, { source?: RunRef[]; target?: RunRef[] }>;

/** Per table of the merged schema: keep the target's, adopt the source's, or prepare. */
export function planTables(a: {
  schema: Schema;
  base: Record<string, TableVersion>;
  source: MergeSide;
  target: MergeSide;
  aligned?: AlignedDeltas;
}): TablePlan {
  const { schema, base, source, target } = a;
  const names = [...new Set([...Object.keys(source.tables), ...Object.keys(target.tables)])]
    .filter((n) => findType(schema, n) !== undefined)
    .sort();
  const plan: TablePlan = { adopted: {}, summaries: [], toPrepare: [] };
  for (const name of names) {
    const b = base[name] ?? EMPTY_TABLE;
    const s = source.tables[name] ?? EMPTY_TABLE;
    const t = target.tables[name] ?? EMPTY_TABLE;
    const action = tableMergeAction(b, s, t);
    if (action === 'keep_target') continue;
    if (action === 'adopt_source') {
      plan.adopted[name] = s;
      plan.summaries.push(adopted(name));
      continue;
    }
    const type = findType(schema, name) as TableType;
    const [sd, td] = [deltaRuns(b, s) ?? a.aligned?.[name]?.source, deltaRuns(b, t) ?? a.aligned?.[name]?.target];
    const rows = (runs: RunRef[] | undefined): number => (runs ?? []).reduce((n, r) => n + r.rows, 0);
    // Without shared runs (a compaction on the way), the sizes are unknown here: merge key by key.
    const sourceTrusted =
      sd !== undefined &&
      sourceRowsTrusted({ schema, sourceSchema: source.schema, type, sourceTombstones: sd.reduce((n, r) => n + r.tombstones, 0) });
    const bySize = sd !== undefined && td !== undefined ? planBySize(rows(sd), rows(td), sourceTrusted) : 'both';
    const bytes = (runs: RunRef[]): number => runs.reduce((n, r) => n + r.bytes, 0);
    const [sb, tb] = [sd === undefined ? deltaBytes(b, s) : bytes(sd), td === undefined ? deltaBytes(b, t) : bytes(td)];
    // A walked side is held in memory; an adopted one is not read at all.
    const estimateBytes = DECODE_FACTOR * (bySize === 'source-big' ? tb : bySize === 'target-big' ? sb : sb + tb);
    const [sr, tr] = sd !== undefined && td !== undefined ? [rows(sd), rows(td)] : [versionStats(s).rows, versionStats(t).rows];
    const plannedRows = bySize === 'source-big' ? tr : bySize === 'target-big' ? sr : sr + tr;
    plan.toPrepare.push({ type, base: b, source: s, target: t, estimateBytes, bySize, plannedRows, sourceTrusted });
  }
  return plan;
}

/** Bytes of the runs a side added over the base; the whole side when it shares no run with the base (compacted). */
export function deltaBytes(base: TableVersion, side: TableVersion): number {
  const baseKeys = new Set(base.runs.map((r) => r.key));
  const added = side.runs.filter((r) => !baseKeys.has(r.key));
  return added.length === side.runs.length && base.runs.length > 0 ? versionStats(side).bytes : added.reduce((n, r) => n + r.bytes, 0);
}
