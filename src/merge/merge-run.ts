/**
 * One merge, as the publication loop runs it against successive target heads.
 *
 * Each attempt classifies the heads (merge-plan.ts), then either reports
 * "up to date", publishes a fast-forward, or runs a three-way merge: find
 * the base (virtual when history is criss-crossed), prepare the tables
 * changed on both sides under the preparation scheduler, validate the
 * merged graph, and hand the publication loop a plan. A lost race discards
 * the attempt's scratch runs and plans again against the new head.
 *
 * The run owns what an attempt leaves behind: the phase timer, the scratch
 * ledger (mirrored in the injected gauges), and the counts reported as
 * metrics. The source is pinned when the run starts; its pending WAL rows
 * are folded on the source only just before publishing, exactly those the
 * plan saw, so the manifest recorded as the merged parent holds every row
 * the merge takes (never for a dry run or a refused merge, which change
 * nothing).
 */
import { NO_PENDING } from '../pending/pending-wal.js';
import { ConflictCollector, conflictWindow, type Conflict } from '../model/conflict.js';
import { BranchgraphError, throwIfAborted } from '../model/errors.js';
import { findType, schemaHashOf, type Schema, type TableType } from '../model/schema.js';
import type { Row } from '../model/values.js';
import type { ChangePlan, PlanResult } from '../graph/change.js';
import type { GraphPorts } from '../graph/ports.js';
import { mergeCursorScope, type MergeEnvironment, type MergeSpec } from './merge-spec.js';
import type { Snapshot } from '../graph/snapshot.js';
import { commitRefOf, refOf, type Commit, type Manifest, type ManifestRef } from '../graph/manifest.js';
import type { RunRef, RunRow } from '../table/run.js';
import { alignForDelta, deltaRuns } from '../table/table-delta.js';
import { changedStates } from '../table/table-compare.js';
import { EMPTY_TABLE, type TableVersion } from '../table/table-version.js';
import { lookupStates } from '../table/table-lookup.js';
import { READ_AHEAD_RUN_BYTES } from '../table/read-ahead.js';
import type { MergePhase, PhaseTimer } from '../model/phase-timer.js';
import { runPreparations, type Fallback, type PreparationGauges } from './preparation-scheduler.js';
import { hashOf, prepareTable, type PreparedTable } from './prepare-table.js';
import { validateMerged } from './validate.js';
import { mergeBaseView } from './virtual-base.js';
import {
  attemptStep,
  fastForwardTables,
  mergeSchemas,
  needsBaseSchema,
  planTables,
  type AlignedDeltas,
  sameTypeIn,
  type MergeOutcome,
  type MergeSide,
  type TableMergeSummary,
  type TablePlan,
} from './merge-plan.js';
import { recheckTightened, sideValues } from './merge-recheck.js';
import { tableMergeAction } from './three-way.js';
import { originOf } from '../graph/run-origin.js';
import { Resolver, type AppliedResolution, type MergeResolutions } from './resolutions.js';

/** What a commit records of the resolutions it applied: the strategy, how many, and the first RESOLVED_ITEMS of them. */
export type ResolvedRecord = NonNullable<Commit['resolved']>;

/** A commit names at most this many resolutions; `total` counts them all. */
export const RESOLVED_ITEMS = 1000;

function resolvedRecord(req: MergeResolutions | undefined, resolver: Resolver): ResolvedRecord | null {
  if (resolver.total === 0) return null;
  // Named choices first, then what the strategy decided; each group in conflict order.
  const ordered = [...resolver.applied].sort((a, b) => (a.by === b.by ? 0 : a.by === 'choice' ? -1 : 1) || compareResolved(a, b));
  return { strategy: req?.strategy ?? null, total: resolver.total, digest: resolver.digest, items: ordered.slice(0, RESOLVED_ITEMS) };
}

function compareResolved(a: AppliedResolution, b: AppliedResolution): number {
  const pa = `${a.table}\u0000${a.key}\u0000${a.property ?? ''}`;
  const pb = `${b.table}\u0000${b.key}\u0000${b.property ?? ''}`;
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}

/** What an attempt decided; the publication loop publishes `publish`, and returns every other kind unchanged. */
export type MergeDecision =
  | { kind: 'up_to_date' }
  | { kind: 'conflicts'; conflicts: ConflictCollector; base: Manifest | null }
  | { kind: 'dry_run'; outcome: MergeOutcome; base: Manifest | null; tables: TableMergeSummary[]; resolved: ResolvedRecord | null }
  | { kind: 'publish'; outcome: MergeOutcome; base: Manifest | null; tables: TableMergeSummary[]; resolved: ResolvedRecord | null };

/** A commit's change applied instead of a branch merged (apply-commit): the base is given (the commit's parent for a cherry-pick, the commit itself for a revert), history is not consulted, and the result is an ordinary one-parent commit of this kind. */
export interface AppliedChange {
  base: Snapshot;
  kind: 'cherry_pick' | 'revert';
  commit: string;
}

/** The environment a run owns: gauges and timer are always there. */
export type RunEnvironment = MergeEnvironment & { gauges: PreparationGauges; timer: PhaseTimer<MergePhase> };

/** What a run is built from: the ports, the merge spec and its environment, the pinned source, and the applied change when there is one. */
export interface MergeRunSetup {
  ports: MergePorts;
  spec: MergeSpec;
  env: RunEnvironment;
  /** The source head, pinned when the merge started (replaced by its folded version before publishing). */
  source: Snapshot;
  applied?: AppliedChange | undefined;
}

/** The ports a merge uses. */
export type MergePorts = Pick<GraphPorts, 'manifests' | 'runFiles' | 'tables' | 'publication'>;

/** Counts reported in the merge's metrics. */
export interface MergeRunStats {
  attempts: number;
  tablesPrepared: number;
  tablesAdopted: number;
  maxWidth: number;
  fallbacks: Fallback[];
}

/** Scratch runs written and not yet published or deleted, mirrored in the gauges. */
class ScratchLedger {
  private outstanding = 0;
  constructor(private readonly gauges: PreparationGauges) {}

  wrote(): void {
    this.outstanding++;
    this.gauges.pendingScratch++;
  }

  /** Everything written so far is published, deleted, or about to be deleted by the publication loop. */
  settle(): void {
    this.gauges.pendingScratch -= this.outstanding;
    this.outstanding = 0;
  }
}

/** The most bytes of runs a merge reads before its plan asks for them (see warmDeltas). */
const WARM_DELTA_BYTES = 1024 * 1024;

/** Commits a keyed re-plan reads back for its key at most (a publication race is lost to a few). */
const MAX_KEYED_RECHECK = 64;
const sideOf = (s: Snapshot): MergeSide => ({
  ref: s.ref,
  commit: commitRefOf(s.manifest),
  ancestry: s.manifest.ancestry,
  pending: s.pending.generations.length,
  schemaHash: s.manifest.schema,
  schema: s.schema,
  tables: s.tables,
});

export class MergeRun {
  readonly timer: PhaseTimer<MergePhase>;
  readonly stats: MergeRunStats = { attempts: 0, tablesPrepared: 0, tablesAdopted: 0, maxWidth: 0, fallbacks: [] };
  private readonly scratch: ScratchLedger;
  /** The target head the previous attempt planned against (a keyed merge reads back from it). */
  private lastTarget: ManifestRef | undefined;

  private readonly ports: MergePorts;
  private readonly spec: MergeSpec;
  private readonly env: RunEnvironment;
  private readonly applied: AppliedChange | undefined;
  /** How many conflicts, in canonical order, the report needs held (the page's offset plus its size); all are counted. */
  private readonly conflictWindow: number;
  /** The source head, pinned when the merge started (replaced by its folded version before publishing). */
  source: Snapshot;

  constructor(setup: MergeRunSetup) {
    ({ ports: this.ports, spec: this.spec, env: this.env, source: this.source, applied: this.applied } = setup);
    this.scratch = new ScratchLedger(this.env.gauges);
    this.timer = this.env.timer;
    this.conflictWindow = conflictWindow(this.spec.conflictLimit, this.spec.conflictCursor, mergeCursorScope(this.spec));
  }

  /**
   * Start reading the small runs each side added that the other lacks, before any attempt asks
   * for them. A three-way merge reads the runs each side added since the base: the source's to
   * validate a table it adopts, both sides' to prepare a table both changed. Those reads used to
   * wait for the base and then for the preparation's turn under the width, a round trip per
   * table; now they are issued together while the base is found (or while this merge waits for
   * its turn behind other merges into the same branch), and a table's preparation finds its runs
   * read. Only small unsegmented runs, at most WARM_DELTA_BYTES in all: big runs stay where
   * preparation's width and memory budget govern them, and the plan may adopt them unread. A
   * target's runs are warmed only for tables the source changed too. A run another lineage
   * published (its origin, graph/run-origin.ts) is one a side inherited, not one it added: a side
   * that compacted its shared runs since the fork lacks them, and the other side's copies are not
   * its delta. A compacted run usually holds shared runs too, and the plan reads only the delta
   * beneath it (alignedDeltas), so it is not warmed either. Failures surface when the plan reads
   * the run.
   */
  warmDeltas(target: Snapshot): void {
    let budget = WARM_DELTA_BYTES;
    const added = (r: RunRef, side: Snapshot): boolean => {
      const lineage = originOf(r)?.lineage;
      return r.compacted !== true && (lineage === undefined || side.branch === undefined || lineage === side.branch.lineage);
    };
    for (const [name, version] of Object.entries(this.source.tables)) {
      const type = findType(this.source.schema, name);
      const theirs = target.tables[name]?.runs ?? [];
      const inTarget = new Set(theirs.map((r) => r.key));
      const sourceAdded = version.runs.filter((r) => !inTarget.has(r.key) && added(r, this.source));
      if (type === undefined || sourceAdded.length === 0) continue;
      const inSource = new Set(version.runs.map((r) => r.key));
      const load = this.ports.runFiles.loader(type, this.env.signal);
      for (const r of [...sourceAdded, ...theirs.filter((t) => !inSource.has(t.key) && added(t, target))]) {
        if (r.source !== undefined || r.segmented === true || r.bytes > Math.min(READ_AHEAD_RUN_BYTES, budget)) continue;
        budget -= r.bytes;
        load(r).catch(() => undefined);
      }
    }
  }

  /** Plan one attempt against `target`. */
  async attempt(target: Snapshot): Promise<PlanResult<MergeDecision>> {
    this.stats.attempts++;
    // Scratch of a lost attempt was deleted by the publication loop.
    this.scratch.settle();
    this.timer.enter('base');
    // A fresh resolver per attempt: a lost race may change which conflicts there are.
    const resolver = new Resolver(this.spec.resolutions ?? {});
    // A keyed merge that lost the race to a commit made under its own key (a retry running in another
    // process) is done: merging again, were the source to have moved, would land a second commit.
    const landedUnderKey = await this.landedUnderKey(target);
    const kind = attemptStep({ landedUnderKey, applying: this.applied !== undefined, source: sideOf(this.source), target: sideOf(target) });
    if (kind !== 'three_way' && !landedUnderKey) resolver.checkAllUsed();
    if (kind === 'up_to_date') return { unchanged: { kind: 'up_to_date' } };
    if (kind === 'fast_forward') return this.fastForward(target);
    return this.threeWay(target, resolver);
  }

  /**
   * Whether a commit made under this merge's idempotency key landed on the target since the head
   * the previous attempt planned against: the commits between the two heads (first parents, usually
   * one) are read. A first attempt checks only its head; the service looks further back before it.
   */
  private async landedUnderKey(target: Snapshot): Promise<boolean> {
    const key = this.env.idempotency?.keyHash;
    const seen = this.lastTarget;
    this.lastTarget = refOf(target.manifest);
    if (key === undefined) return false;
    let m: Manifest | undefined = target.manifest;
    for (let i = 0; m !== undefined && i < MAX_KEYED_RECHECK; i++) {
      if (m.commit.idempotency?.keyHash === key) return true;
      const parent: ManifestRef | undefined = m.commit.parents[0];
      if (
        seen === undefined ||
        parent === undefined ||
        (parent.lineage === seen.lineage && parent.version === seen.version) ||
        (m.lineage === seen.lineage && m.version === seen.version)
      )
        return false;
      m = await this.ports.manifests.readManifest(parent, this.env.signal);
    }
    return false;
  }

  /** The run is over (published, refused or failed): nothing it wrote is pending any more. */
  finish(): void {
    this.scratch.settle();
  }

  private async fastForward(target: Snapshot): Promise<PlanResult<MergeDecision>> {
    const { tables, summaries } = fastForwardTables(sideOf(this.source), sideOf(target));
    this.stats.tablesAdopted = summaries.length;
    const decided = { outcome: 'fast_forward' as const, base: target.manifest, tables: summaries, resolved: null };
    if (this.spec.dryRun) return { unchanged: { kind: 'dry_run', ...decided } };
    this.timer.enter('publish');
    return {
      kind: 'fast_forward',
      tables,
      schema: this.source.schema,
      secondParent: await this.mergedParent(),
      scratch: [],
      result: { kind: 'publish', ...decided },
      message: this.spec.message ?? `fast-forward ${this.spec.into} to ${this.spec.source}`,
      ...(this.env.idempotency !== undefined ? { idempotency: this.env.idempotency } : {}),
    };
  }

  /** The base of this attempt: the one given for an applied commit, else the merge base of the heads (virtual when criss-crossed). */
  private async baseFor(target: Snapshot): Promise<{ base: Snapshot; schema: Schema } | { conflicts: Conflict[] }> {
    const { source, spec, env } = this;
    if (this.applied !== undefined) {
      const given = this.applied.base;
      const merged = mergeSchemas({ hash: given.manifest.schema, schema: given.schema }, sideOf(source), sideOf(target));
      return 'conflicts' in merged ? merged : { base: given, schema: merged.schema };
    }
    const found = await mergeBaseView({
      ports: this.ports,
      a: source.manifest.ancestry,
      b: target.manifest.ancestry,
      lineages: [target.manifest.lineage, source.manifest.lineage],
      schemas: [target.schema, source.schema],
      signal: env.signal,
    });
    if (found === undefined) throw new BranchgraphError('not_found', `${spec.source} and ${spec.into} share no history`);
    const baseManifest = found.base.manifests[0] as Manifest;
    const hash = found.base.schema ?? '';
    // The base's schema document is read only when both sides changed theirs.
    const baseSchema =
      found.base.schema !== undefined && needsBaseSchema(hash, sideOf(source), sideOf(target))
        ? await this.ports.manifests.readSchema(hash, env.signal)
        : undefined;
    const merged = mergeSchemas({ hash, schema: baseSchema }, sideOf(source), sideOf(target));
    if ('conflicts' in merged) return merged;
    const { schema } = merged;
    return { base: { ref: refOf(baseManifest), manifest: baseManifest, schema, tables: found.base.tables, pending: NO_PENDING }, schema };
  }

  /**
   * The deltas of tables a side compacted since the base (its run list no longer holds the base's
   * runs), from the runs its compacted runs replaced: the plan then sizes and places the merge by
   * what changed, as for any other table, instead of walking both whole tables. The lists read are
   * cached, and preparation reads them anyway.
   */
  private async alignedDeltas(schema: Schema, base: Record<string, TableVersion>, target: Snapshot): Promise<AlignedDeltas> {
    const out: AlignedDeltas = {};
    const sides = { source: this.source.tables, target: target.tables };
    await Promise.all(
      schema.types.map(async (type) => {
        const b = base[type.name] ?? EMPTY_TABLE;
        const [s, t] = [sides.source[type.name] ?? EMPTY_TABLE, sides.target[type.name] ?? EMPTY_TABLE];
        if (tableMergeAction(b, s, t) !== 'prepare') return;
        const load = this.ports.runFiles.loader(type, this.env.signal);
        const deltaOf = async (v: TableVersion): Promise<RunRef[] | undefined> => {
          if (deltaRuns(b, v) !== undefined || !v.runs.some((r) => r.compacted === true)) return undefined;
          const unfolded = await alignForDelta(b, v, load);
          return unfolded === undefined ? undefined : deltaRuns(b, unfolded);
        };
        // Both sides at once: one round trip per level of compaction, not two.
        const [sd, td] = await Promise.all([deltaOf(s), deltaOf(t)]);
        if (sd !== undefined || td !== undefined)
          out[type.name] = { ...(sd === undefined ? {} : { source: sd }), ...(td === undefined ? {} : { target: td }) };
      }),
    );
    return out;
  }

  private async threeWay(target: Snapshot, resolver: Resolver): Promise<PlanResult<MergeDecision>> {
    const { source, spec, env, applied } = this;
    const found = await this.baseFor(target);
    if ('conflicts' in found) return { unchanged: { kind: 'conflicts', conflicts: this.collected(found.conflicts), base: null } };
    const { base, schema } = found;
    const baseManifest = base.manifest;
    const aligned = await this.alignedDeltas(schema, base.tables, target);
    const plan = planTables({ schema, base: base.tables, source: sideOf(source), target: sideOf(target), aligned });
    env.progress?.restart(plan.toPrepare.reduce((n, t) => n + t.plannedRows, 0));
    this.stats.tablesAdopted = plan.summaries.length;
    this.stats.tablesPrepared = plan.toPrepare.length;

    this.timer.enter('prepare');
    const collector = new ConflictCollector(this.conflictWindow);
    const prepared = await this.prepare(plan, resolver, collector);
    const scratch = prepared.flatMap((p) => p.scratch);
    try {
      resolver.checkAllUsed();
    } catch (e) {
      await this.cleanup(scratch);
      throw e;
    }
    const { tables, summaries } = mergedTables(plan, prepared);
    const refused = async (conflicts: ConflictCollector): Promise<PlanResult<MergeDecision>> => {
      await this.cleanup(scratch);
      return { unchanged: { kind: 'conflicts', conflicts, base: baseManifest } };
    };
    if (collector.total > 0) return refused(collector);

    this.timer.enter('validate');
    const invalid = await this.validate({ schema, base, target, tables, prepared, summaries });
    if (invalid.length > 0) return refused(this.collected(invalid));
    const outcome: MergeOutcome = applied === undefined ? 'merged' : applied.kind === 'revert' ? 'reverted' : 'cherry_picked';
    const decided = { outcome, base: baseManifest, tables: summaries, resolved: resolvedRecord(spec.resolutions, resolver) };
    // An applied change the target already holds changes nothing: say so rather than publish an empty commit.
    if (applied !== undefined && (await this.changesNothing(target, schema, tables))) {
      await this.cleanup(scratch);
      return { unchanged: { kind: 'up_to_date' } };
    }
    if (spec.dryRun) {
      await this.cleanup(scratch);
      return { unchanged: { kind: 'dry_run', ...decided } };
    }
    await this.refuseOtherDecided(decided.resolved, scratch);
    this.timer.enter('publish');
    if (applied !== undefined) return this.appliedPlan(applied, tables, { schema, scratch, decided });
    const parent = await this.mergedParent().catch(async (e: unknown) => {
      await this.cleanup(scratch);
      throw e;
    });
    const published: ChangePlan<MergeDecision> = {
      kind: 'merge',
      tables,
      schema,
      secondParent: parent,
      scratch,
      result: { kind: 'publish', ...decided },
      message: spec.message ?? `merge ${spec.source} into ${spec.into}`,
      ...(decided.resolved !== null ? { resolved: decided.resolved } : {}),
      ...(env.idempotency !== undefined ? { idempotency: env.idempotency } : {}),
    };
    if (source.readAt !== undefined) published.readAt = source.readAt;
    return published;
  }

  /**
   * Whether the merged tables and schema read exactly as the target's: every key above the
   * target's runs looked up in them (an applied change is small, so this is a few lookups). Used
   * for cherry-pick and revert, which, as in Git, stop on an empty change instead of committing it.
   */
  private async changesNothing(target: Snapshot, schema: Schema, tables: Record<string, TableVersion>): Promise<boolean> {
    if (schemaHashOf(schema) !== target.manifest.schema) return false;
    for (const [name, version] of Object.entries(tables)) {
      const type = findType(schema, name) as TableType;
      const before = target.tables[name] ?? EMPTY_TABLE;
      const load = this.ports.runFiles.loader(type, this.env.signal);
      const after = await changedStates(before, version, load);
      if (after.size === 0) continue;
      const was = await lookupStates(before, after.keys(), load);
      for (const [key, r] of after) if (hashOf(r) !== hashOf(was.get(key))) return false;
    }
    return true;
  }

  /** A cherry-pick or revert lands as an ordinary one-parent commit: the applied commit's history is not the target's. */
  private appliedPlan(
    apply: AppliedChange,
    tables: Record<string, TableVersion>,
    plan: { schema: Schema; scratch: RunRef[]; decided: Omit<Extract<MergeDecision, { kind: 'publish' }>, 'kind'> },
  ): ChangePlan<MergeDecision> {
    const { spec, env } = this;
    const { schema, scratch, decided } = plan;
    const what = apply.kind === 'revert' ? 'revert' : 'cherry-pick';
    return {
      kind: apply.kind,
      tables,
      schema,
      scratch,
      result: { kind: 'publish', ...decided },
      message: spec.message ?? `${what} ${apply.commit} onto ${spec.into}`,
      ...(decided.resolved !== null ? { resolved: decided.resolved } : {}),
      ...(env.idempotency !== undefined ? { idempotency: env.idempotency } : {}),
    };
  }

  /** Conflicts found whole (schema, validation) as the report's collector holds them. */
  private collected(conflicts: readonly Conflict[]): ConflictCollector {
    const c = new ConflictCollector(this.conflictWindow);
    c.addAll(conflicts);
    return c;
  }

  /** Prepare the tables changed on both sides; on failure or abort, delete what was written and throw. */
  private async prepare(plan: TablePlan, resolver: Resolver, conflicts: ConflictCollector): Promise<PreparedTable[]> {
    const { spec, env } = this;
    const runs = this.ports.runFiles;
    const outcome = await runPreparations<PreparedTable>(
      plan.toPrepare.map(({ type, base, source, target, estimateBytes, bySize, plannedRows, sourceTrusted }) => ({
        table: type.name,
        estimateBytes,
        run: () =>
          prepareTable({
            type,
            base,
            source,
            target,
            load: runs.loader(type, env.signal),
            writeRun: (rows) => this.writeRun(type, rows),
            resolver,
            conflicts,
            bySize,
            sourceTrusted,
            ...(env.progress !== undefined ? { progress: { sink: env.progress, plannedRows } } : {}),
          }),
      })),
      { width: spec.width, budgetBytes: spec.budgetBytes, signal: env.signal, gauges: env.gauges },
    );
    this.stats.maxWidth = Math.max(this.stats.maxWidth, outcome.maxWidth);
    this.stats.fallbacks = outcome.fallbacks;
    const prepared = outcome.results.filter((r): r is PreparedTable => r !== undefined);
    if (outcome.aborted || outcome.failure !== undefined) {
      await this.cleanup(prepared.flatMap((p) => p.scratch));
      if (outcome.aborted) throw new BranchgraphError('aborted', 'the merge was aborted; nothing was published');
      throw outcome.failure?.error;
    }
    return prepared;
  }

  private async writeRun(type: TableType, rows: readonly RunRow[]): Promise<RunRef> {
    if (this.spec.dryRun) return this.ports.runFiles.stage(type, rows);
    throwIfAborted(this.env.signal);
    const ref = await this.ports.runFiles.write(type, rows, this.env.signal);
    this.scratch.wrote();
    return ref;
  }

  /** The merged graph's constraints, checked over what the merge changed, and whole tables where a schema tightened. */
  private async validate(m: {
    schema: Schema;
    base: Snapshot;
    target: Snapshot;
    tables: Record<string, TableVersion>;
    prepared: PreparedTable[];
    summaries: TableMergeSummary[];
  }): Promise<Conflict[]> {
    const { source } = this;
    const { signal } = this.env;
    const runs = this.ports.runFiles;
    const { schema } = m;
    const mergedTables: Record<string, TableVersion> = { ...m.target.tables, ...m.tables };
    const changes = new Map<string, Map<string, Row | null>>();
    for (const p of m.prepared) changes.set(p.table, p.changes);
    // Adopted tables: every key the source changed is a change to the target.
    await Promise.all(
      m.summaries
        .filter((s) => s.action === 'adopted_source')
        .map(async (s) => {
          const type = findType(schema, s.table) as TableType;
          const ch = await changedStates(
            m.target.tables[s.table] ?? EMPTY_TABLE,
            m.tables[s.table] as TableVersion,
            runs.loader(type, signal),
          );
          changes.set(s.table, new Map([...ch].map(([k, r]) => [k, r === undefined || r.tomb ? null : (r.props as Row)])));
        }),
    );
    const sides = (table: string, key: string) => sideValues({ runs, schema, at: [m.base, source, m.target], signal }, table, key);
    const targetIndexes = (name: string) => this.ports.tables.indexes(m.target, findType(schema, name) as TableType, signal);
    // The source's rows were checked against its schema when written: a row the merge takes from it
    // as is needs no second check unless the merged schema reads that table differently.
    const sameType = new Map([...changes.keys()].map((name) => [name, sameTypeIn(source.schema, findType(schema, name))]));
    const mergedKeys = new Map(m.prepared.map((p) => [p.table, p.merged]));
    const needsValueCheck = (table: string, key: string): boolean =>
      sameType.get(table) !== true || mergedKeys.get(table)?.has(key) === true;
    // Values a client supplies in a resolution are new: with resolutions, every @unique value is checked.
    const kept = (side: Snapshot, table: string, prop: string): boolean =>
      deltaRuns(m.base.tables[table], side.tables[table])?.every((r) => r.keptUnique?.includes(prop) === true) === true;
    const uniqueKept = (table: string, prop: string): boolean =>
      this.spec.resolutions === undefined && kept(source, table, prop) && kept(m.target, table, prop);
    const found = await validateMerged({
      schema,
      tables: mergedTables,
      loader: (type) => runs.loader(type, signal),
      changes,
      sides,
      targetIndexes,
      needsValueCheck,
      uniqueKept,
    });
    found.push(
      ...(await recheckTightened({
        runs,
        schema,
        sides: [source, m.target],
        tables: mergedTables,
        already: found,
        valuesOf: sides,
        signal,
      })),
    );
    return found;
  }

  /** A merge asked to decide exactly one set of conflicts (an approved request's) refuses to decide another. */
  private async refuseOtherDecided(resolved: ResolvedRecord | null, scratch: RunRef[]): Promise<void> {
    const { expectedDecided, into } = this.spec;
    if (expectedDecided === undefined || (resolved?.digest ?? null) === expectedDecided) return;
    await this.cleanup(scratch);
    throw new BranchgraphError('head_moved', `${into} moved: the resolutions now decide other conflicts than were approved`, {
      details: { branch: into },
    });
  }

  private async cleanup(scratch: RunRef[]): Promise<void> {
    this.timer.enter('cleanup');
    if (scratch.length > 0) await this.ports.runFiles.delete(scratch).catch(() => undefined);
    this.scratch.settle();
  }

  private async mergedParent(): Promise<Manifest> {
    const { spec, env } = this;
    const message = `fold pending WAL generations merged into ${spec.into}`;
    this.source = await this.ports.publication.foldExactly({
      branch: spec.source,
      head: this.source,
      message,
      signal: env.signal,
      actor: spec.actor,
    });
    return this.source.manifest;
  }
}

/** The merged tables (adopted whole, or prepared) and each table's summary, by table name. */
function mergedTables(
  plan: Pick<TablePlan, 'adopted' | 'summaries'>,
  prepared: readonly PreparedTable[],
): { tables: Record<string, TableVersion>; summaries: TableMergeSummary[] } {
  const tables: Record<string, TableVersion> = { ...plan.adopted };
  const summaries = [...plan.summaries];
  for (const p of prepared) {
    tables[p.table] = p.version;
    summaries.push({
      table: p.table,
      action: 'merged',
      sourceChanges: p.stats.sourceKeys,
      targetChanges: p.stats.targetKeys,
      bothChanged: p.stats.bothKeys,
      rowsWritten: p.stats.fixRows,
    });
  }
  summaries.sort((a, b) => (a.table < b.table ? -1 : 1));
  return { tables, summaries };
}
