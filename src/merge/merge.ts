/**
 * Branch merge: resolve, find the base, prepare the tables changed on both
 * sides, validate the merged graph, publish one commit.
 *
 * Outcomes: `already_up_to_date` when the target contains the source (nothing
 * is written); `fast_forward` when the source contains the target (one commit
 * on the target with the source's state and both parents, so later merges
 * find the right base); otherwise `merged`, a two-parent commit. Tables
 * changed on one side only are adopted by reference; tables changed on both
 * sides go through `prepareTable` under the preparation scheduler.
 *
 * On any conflict, and on a dry run, nothing is published and scratch runs
 * are deleted. The source is pinned when the merge starts; if the target
 * moves before publication, the whole plan is redone against the new head, a
 * bounded number of times, then `publish_contention` (retryable).
 */
import { NO_PENDING } from '../pending/pending-wal.js';
import { compareConflicts, conflictPage, type Conflict, type ConflictReport } from '../model/conflict.js';
import { BranchgraphError, isBranchgraphError, throwIfAborted } from '../model/errors.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import type { Row } from '../model/values.js';
import type { ChangePlan, Graph, Snapshot } from '../graph/graph.js';
import { contains, refOf, type Commit, type Manifest } from '../graph/manifest.js';
import { CountingStore, type StoreCounts } from '../store/counting-store.js';
import type { RunRef } from '../table/run.js';
import { changedStates, EMPTY_TABLE, lookupStates, mergeRuns, sameRuns, versionStats, type TableVersion } from '../table/table-version.js';
import { tablesToRecheck } from '../model/schema-change.js';
import { checkTable, type LiveRows } from '../graph/table-check.js';
import { mergeBaseView } from './virtual-base.js';
import { tableMergeAction } from './three-way.js';
import { MERGE_PHASES, PhaseTimer, type MergePhase } from '../model/phase-timer.js';
import { DEFAULT_BUDGET_BYTES, preparationGauges, runPreparations, type Fallback, type Width } from './preparation-scheduler.js';
import { prepareTable, type PreparedTable } from './prepare-table.js';
import { validateMerged } from './validate.js';

export type MergeOutcome = 'already_up_to_date' | 'fast_forward' | 'merged';

export interface MergeRequest {
  source: string;
  into?: string;
  dryRun?: boolean;
  expectedSourceHead?: string;
  expectedTargetHead?: string;
  deleteBranch?: boolean;
  /** Who merges (recorded as the commit's actor). */
  actor?: string;
  /** Who the merge is for, when the client names someone (recorded beside the actor). */
  author?: string;
  message?: string;
  width?: Width;
  budgetBytes?: number;
  signal?: AbortSignal;
  conflictLimit?: number;
  conflictCursor?: string;
}

export interface TableMergeSummary {
  table: string;
  action: 'adopted_source' | 'merged';
  sourceChanges: number;
  targetChanges: number;
  bothChanged: number;
  rowsWritten: number;
}

export interface MergeMetrics {
  phasesMs: Record<MergePhase, number>;
  totalMs: number;
  storeCalls: StoreCounts;
  requestedWidth: Width;
  maxWidth: number;
  fallbacks: Fallback[];
  tablesPrepared: number;
  tablesAdopted: number;
  attempts: number;
}

export interface MergeSuccess {
  status: 'success';
  outcome: MergeOutcome;
  dryRun: boolean;
  /** The published commit; null when nothing was published (up to date, dry run). */
  commit: Commit | null;
  sourceHead: string;
  targetHead: string;
  base: string | null;
  tables: TableMergeSummary[];
  branchDeleted: boolean;
  branchDeleteError: string | null;
  metrics: MergeMetrics;
}

export interface MergeConflicts {
  status: 'conflicts';
  sourceHead: string;
  targetHead: string;
  base: string | null;
  report: ConflictReport;
  metrics: MergeMetrics;
}

export type MergeResult = MergeSuccess | MergeConflicts;

export const MAX_CONFLICTS_PER_PAGE = 1000;
/** Estimated decoded bytes per stored byte of run, for budget reservations. */
const DECODE_FACTOR = 4;

type Planned =
  | { kind: 'up_to_date' }
  | { kind: 'conflicts'; conflicts: Conflict[]; base: Manifest | null }
  | { kind: 'dry_run'; outcome: MergeOutcome; base: Manifest | null; tables: TableMergeSummary[] }
  | { kind: 'publish'; outcome: MergeOutcome; base: Manifest | null; tables: TableMergeSummary[] };

function mergeSchemas(baseHash: string, source: Snapshot, target: Snapshot): Schema {
  const [b, s, t] = [baseHash, source.manifest.schema, target.manifest.schema];
  if (s === t || s === b) return target.schema;
  if (t === b) return source.schema;
  throw new BranchgraphError('schema_incompatible', 'both branches changed the schema differently since their merge base; apply one schema to both first');
}

export async function mergeBranches(graph: Graph, req: MergeRequest): Promise<MergeResult> {
  const into = req.into ?? 'main';
  if (req.source === into) throw new BranchgraphError('invalid_input', 'a branch cannot be merged into itself', { issues: [{ path: 'into', message: 'same as the source' }] });
  const limit = req.conflictLimit ?? 100;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_CONFLICTS_PER_PAGE) {
    throw new BranchgraphError('invalid_input', `conflictLimit must be 1..${MAX_CONFLICTS_PER_PAGE}`, { issues: [{ path: 'conflictLimit', message: `1..${MAX_CONFLICTS_PER_PAGE}` }] });
  }
  const counting = new CountingStore(graph.store);
  const g = graph.withStore(counting);
  const timer = new PhaseTimer<MergePhase>(MERGE_PHASES);
  const started = performance.now();
  const width: Width = req.width ?? 1;
  const signal = req.signal;
  let maxWidth = 0;
  let fallbacks: Fallback[] = [];
  let tablesPrepared = 0;
  let tablesAdopted = 0;
  let attempts = 0;
  let outstandingScratch = 0;
  const releaseScratch = (n: number): void => {
    preparationGauges.pendingScratch -= n;
    outstandingScratch -= n;
  };

  const metrics = (): MergeMetrics => ({
    phasesMs: timer.stop(),
    totalMs: Math.round((performance.now() - started) * 100) / 100,
    storeCalls: counting.snapshot(),
    requestedWidth: width,
    maxWidth,
    fallbacks,
    tablesPrepared,
    tablesAdopted,
    attempts,
  });

  timer.enter('resolve');
  // Both heads at once: on a remote store each is a chain of round trips.
  let [source, firstTarget] = await Promise.all([g.branchHead(req.source, signal), g.branchHead(into, signal)]);
  if (req.expectedSourceHead !== undefined && source.manifest.commit.id !== req.expectedSourceHead) {
    throw new BranchgraphError('head_moved', `branch ${req.source} is at ${source.manifest.commit.id}, not ${req.expectedSourceHead}`, {
      details: { branch: req.source, expected: req.expectedSourceHead, actual: source.manifest.commit.id },
    });
  }
  /**
   * The manifest recorded as the merged parent must hold every row the merge
   * takes. When the source has pending WAL rows, they are folded on the
   * source just before publishing (never for a dry run or a refused merge,
   * which change nothing), exactly those the plan saw.
   */
  const mergedParent = async (): Promise<Manifest> => {
    source = await g.foldExactly(req.source, source, `fold pending WAL generations merged into ${into}`, { ...(signal ? { signal } : {}), ...(req.actor ? { actor: req.actor } : {}) });
    return source.manifest;
  };
  let targetHead = '';
  let planned: Planned | undefined;

  const cleanup = async (scratch: RunRef[]): Promise<void> => {
    timer.enter('cleanup');
    if (scratch.length > 0) await g.runs.delete(scratch).catch(() => undefined);
    releaseScratch(scratch.length);
  };

  let published;
  try {
    published = await g.commitChange(
      into,
      { signal, actor: req.actor, author: req.author, message: req.message, expectedHead: req.expectedTargetHead, firstHead: firstTarget },
      async (target): Promise<ChangePlan<Planned> | { unchanged: Planned }> => {
        attempts++;
        // Scratch of a lost attempt was deleted by the publication loop.
        releaseScratch(outstandingScratch);
        timer.enter('base');
        targetHead = target.manifest.commit.id;
        // Pending WAL generations are changes a manifest does not show: a side holding some is never "contained".
        if (contains(target.manifest.ancestry, source.ref) && source.pending.generations.length === 0) {
          planned = { kind: 'up_to_date' };
          return { unchanged: planned };
        }
        if (contains(source.manifest.ancestry, target.ref) && target.pending.generations.length === 0) {
          const tables: Record<string, TableVersion | null> = {};
          for (const name of Object.keys(target.tables)) if (source.tables[name] === undefined) tables[name] = null;
          for (const [name, t] of Object.entries(source.tables)) tables[name] = t;
          const summary = Object.keys(source.tables)
            .filter((n) => !sameRuns(source.tables[n], target.tables[n]))
            .sort()
            .map((n) => ({ table: n, action: 'adopted_source' as const, sourceChanges: 0, targetChanges: 0, bothChanged: 0, rowsWritten: 0 }));
          tablesAdopted = summary.length;
          if (req.dryRun) {
            planned = { kind: 'dry_run', outcome: 'fast_forward', base: target.manifest, tables: summary };
            return { unchanged: planned };
          }
          planned = { kind: 'publish', outcome: 'fast_forward', base: target.manifest, tables: summary };
          timer.enter('publish');
          return {
            kind: 'fast_forward',
            tables,
            schema: source.schema,
            secondParent: await mergedParent(),
            scratch: [],
            result: planned,
            message: req.message ?? `fast-forward ${into} to ${req.source}`,
          };
        }

        // Schemas are content-addressed: comparing hashes needs no read of the base's schema.
        const found = await mergeBaseView(g, source.manifest.ancestry, target.manifest.ancestry, [target.manifest.lineage, source.manifest.lineage], [target.schema, source.schema], signal);
        if (found === undefined) throw new BranchgraphError('not_found', `${req.source} and ${into} share no history`);
        if ('conflicts' in found) {
          planned = { kind: 'conflicts', conflicts: found.conflicts.sort(compareConflicts), base: null };
          return { unchanged: planned };
        }
        const view = found.base;
        const baseManifest = view.manifests[0] as Manifest;
        const schema = mergeSchemas(view.schema ?? '', source, target);
        const base: Snapshot = { ref: refOf(baseManifest), manifest: baseManifest, schema, tables: view.tables, pending: NO_PENDING };

        const names = [...new Set([...Object.keys(source.tables), ...Object.keys(target.tables)])].filter((n) => findType(schema, n) !== undefined).sort();
        const tables: Record<string, TableVersion> = {};
        const summaries: TableMergeSummary[] = [];
        const toPrepare: { type: TableType; b: TableVersion; s: TableVersion; t: TableVersion }[] = [];
        for (const name of names) {
          const b = base.tables[name] ?? EMPTY_TABLE;
          const s = source.tables[name] ?? EMPTY_TABLE;
          const t = target.tables[name] ?? EMPTY_TABLE;
          const action = tableMergeAction(b, s, t);
          if (action === 'keep_target') continue;
          if (action === 'adopt_source') {
            tables[name] = s;
            summaries.push({ table: name, action: 'adopted_source', sourceChanges: 0, targetChanges: 0, bothChanged: 0, rowsWritten: 0 });
            continue;
          }
          toPrepare.push({ type: findType(schema, name) as TableType, b, s, t });
        }
        tablesAdopted = summaries.length;
        tablesPrepared = toPrepare.length;

        timer.enter('prepare');
        const outcome = await runPreparations<PreparedTable>(
          toPrepare.map(({ type, b, s, t }) => ({
            table: type.name,
            estimateBytes: DECODE_FACTOR * (sumDelta(b, s) + sumDelta(b, t)),
            run: () =>
              prepareTable({
                type,
                base: b,
                source: s,
                target: t,
                load: g.runs.loader(type, signal),
                writeRun: async (rows) => {
                  if (req.dryRun) return g.runs.stage(type, rows);
                  throwIfAborted(signal);
                  const ref = await g.runs.write(type, rows, signal);
                  preparationGauges.pendingScratch++;
                  outstandingScratch++;
                  return ref;
                },
              }),
          })),
          { width, budgetBytes: req.budgetBytes ?? DEFAULT_BUDGET_BYTES, signal },
        );
        maxWidth = Math.max(maxWidth, outcome.maxWidth);
        fallbacks = outcome.fallbacks;
        const prepared = outcome.results.filter((r): r is PreparedTable => r !== undefined);
        const scratch = prepared.flatMap((p) => p.scratch);
        if (outcome.aborted || outcome.failure !== undefined) {
          await cleanup(scratch);
          if (outcome.aborted) throw new BranchgraphError('aborted', 'the merge was aborted; nothing was published');
          throw outcome.failure?.error;
        }
        for (const p of prepared) {
          tables[p.table] = p.version;
          summaries.push({ table: p.table, action: 'merged', sourceChanges: p.stats.sourceKeys, targetChanges: p.stats.targetKeys, bothChanged: p.stats.bothKeys, rowsWritten: p.stats.fixRows });
        }
        summaries.sort((a, b) => (a.table < b.table ? -1 : 1));
        const structural = prepared.flatMap((p) => p.conflicts);
        if (structural.length > 0) {
          await cleanup(scratch);
          planned = { kind: 'conflicts', conflicts: structural.sort(compareConflicts), base: baseManifest };
          return { unchanged: planned };
        }

        timer.enter('validate');
        const mergedTables: Record<string, TableVersion> = { ...Object.fromEntries(Object.entries(target.tables)), ...tables };
        const changes = new Map<string, Map<string, Row | null>>();
        for (const p of prepared) changes.set(p.table, p.changes);
        // Adopted tables: every key the source changed is a change to the target.
        await Promise.all(
          summaries
            .filter((s) => s.action === 'adopted_source')
            .map(async (s) => {
              const type = findType(schema, s.table) as TableType;
              const ch = await changedStates(target.tables[s.table] ?? EMPTY_TABLE, tables[s.table] as TableVersion, g.runs.loader(type, signal));
              changes.set(s.table, new Map([...ch].map(([k, r]) => [k, r === undefined || r.tomb ? null : (r.props as Row)])));
            }),
        );
        const validation = await validateMerged({
          schema,
          tables: mergedTables,
          loader: (type) => g.runs.loader(type, signal),
          changes,
          sides: (table, key) => sidesOf(g, schema, table, key, base, source, target, signal),
        });
        validation.push(...(await recheckTightened(g, schema, [source, target], mergedTables, validation, (table, key) => sidesOf(g, schema, table, key, base, source, target, signal), signal)));
        if (validation.length > 0) {
          await cleanup(scratch);
          planned = { kind: 'conflicts', conflicts: validation.sort(compareConflicts), base: baseManifest };
          return { unchanged: planned };
        }
        if (req.dryRun) {
          await cleanup(scratch);
          planned = { kind: 'dry_run', outcome: 'merged', base: baseManifest, tables: summaries };
          return { unchanged: planned };
        }
        planned = { kind: 'publish', outcome: 'merged', base: baseManifest, tables: summaries };
        timer.enter('publish');
        const parent = await mergedParent().catch(async (e: unknown) => {
          await cleanup(scratch);
          throw e;
        });
        return {
          kind: 'merge',
          tables,
          schema,
          secondParent: parent,
          scratch,
          result: planned,
          message: req.message ?? `merge ${req.source} into ${into}`,
          ...(source.readAt !== undefined ? { readAt: source.readAt } : {}),
        };
      },
    );
  } catch (e) {
    timer.enter('cleanup');
    releaseScratch(outstandingScratch);
    throw e;
  }
  // Published scratch is referenced now; it is no longer pending.
  releaseScratch(outstandingScratch);

  const p = planned as Planned;
  if (p.kind === 'conflicts') {
    return {
      status: 'conflicts',
      sourceHead: source.manifest.commit.id,
      targetHead,
      base: p.base?.commit.id ?? null,
      report: conflictPage(p.conflicts, limit, req.conflictCursor),
      metrics: metrics(),
    };
  }
  const commit = published.status === 'published' ? published.commit : null;
  let branchDeleted = false;
  let branchDeleteError: string | null = null;
  if (req.deleteBranch && p.kind !== 'dry_run') {
    timer.enter('cleanup');
    try {
      await graph.deleteBranch(req.source, { signal, actor: req.actor });
      branchDeleted = true;
    } catch (e) {
      branchDeleteError = isBranchgraphError(e) ? `${e.code}: ${e.message}` : String(e);
    }
  }
  return {
    status: 'success',
    outcome: p.kind === 'up_to_date' ? 'already_up_to_date' : p.outcome,
    dryRun: p.kind === 'dry_run',
    commit,
    sourceHead: source.manifest.commit.id,
    targetHead,
    base: p.kind === 'up_to_date' ? null : (p.base?.commit.id ?? null),
    tables: p.kind === 'up_to_date' ? [] : p.tables,
    branchDeleted,
    branchDeleteError,
    metrics: metrics(),
  };
}

function sumDelta(base: TableVersion, v: TableVersion): number {
  const baseKeys = new Set(base.runs.map((r) => r.key));
  const added = v.runs.filter((r) => !baseKeys.has(r.key));
  return added.length === v.runs.length && base.runs.length > 0 ? versionStats(v).bytes : added.reduce((n, r) => n + r.bytes, 0);
}

/**
 * A side whose schema is not the merged one wrote its rows under looser
 * rules than the head will carry (the other side tightened a constraint,
 * added a required property, narrowed a cardinality). The tables that
 * change can break are checked whole, so the published head satisfies its
 * whole schema; what breaks it is a conflict, with values.
 */
async function recheckTightened(
  g: Graph,
  schema: Schema,
  sides: readonly Snapshot[],
  tables: Record<string, TableVersion>,
  already: readonly Conflict[],
  valuesOf: (table: string, key: string) => Promise<{ base: Row | null; source: Row | null; target: Row | null }>,
  signal: AbortSignal | undefined,
): Promise<Conflict[]> {
  // The merged schema is one side's (mergeSchemas); the other side's rows may not satisfy it.
  const hash = sides.find((s) => s.schema === schema)?.manifest.schema;
  const names = [...new Set(sides.filter((s) => s.manifest.schema !== hash).flatMap((s) => tablesToRecheck(s.schema, schema)))].sort();
  if (names.length === 0) return [];
  const rowsOf: LiveRows = async function* (name) {
    const type = findType(schema, name);
    if (type === undefined) return;
    for await (const r of mergeRuns((tables[name] ?? EMPTY_TABLE).runs, g.runs.loader(type, signal), undefined)) yield { key: r.key, row: r.props as Row };
  };
  const seen = new Set(already.map((c) => `${c.kind}\0${c.table}\0${c.key}\0${c.property ?? ''}`));
  const out: Conflict[] = [];
  for (const name of names) {
    for (const v of await checkTable(schema, name, rowsOf, MAX_CONFLICTS_PER_PAGE)) {
      const id = `${v.kind}\0${v.table}\0${v.key}\0${v.property ?? ''}`;
      if (seen.has(id)) continue;
      seen.add(id);
      out.push({ ...v, ...(await valuesOf(v.table, v.key)) });
    }
  }
  return out;
}

async function sidesOf(
  g: Graph,
  schema: Schema,
  table: string,
  key: string,
  base: Snapshot,
  source: Snapshot,
  target: Snapshot,
  signal: AbortSignal | undefined,
): Promise<{ base: Row | null; source: Row | null; target: Row | null }> {
  const type = findType(schema, table) as TableType;
  const load = g.runs.loader(type, signal);
  const at = async (s: Snapshot): Promise<Row | null> => {
    const r = (await lookupStates(s.tables[table] ?? EMPTY_TABLE, [key], load)).get(key);
    return r === undefined || r.tomb ? null : (r.props as Row);
  };
  const [b, s, t] = await Promise.all([at(base), at(source), at(target)]);
  return { base: b, source: s, target: t };
}
