/**
 * Conflict resolutions carried by a merge request: pure decisions, no I/O.
 *
 * A request may name a strategy for the whole merge (`source-wins`,
 * `target-wins`) and choices for single conflicts, keyed by table, key and
 * property: take the source, the target or the base, or give a value.
 * Property choices resolve a DivergentUpdate; row choices (property null)
 * resolve a DivergentInsert or a DeleteVsUpdate, and, for a row both sides
 * updated, every property in conflict at once. An explicit choice wins over
 * the strategy. A value for a row is the whole row, whatever the kind of
 * conflict (null deletes it); for a property, the property's value.
 *
 * A choice may carry the values its author saw (`expected` base, source,
 * target). If they differ from the conflict's values now, the branches
 * moved since the preview and the merge is refused as `resolution_stale`,
 * which is retryable: preview again. A choice that names no conflict of
 * this merge is `invalid_input`, as is one of the wrong shape (a property
 * choice on a row conflict). Only structural conflicts are resolved here.
 * Validation conflicts (uniqueness, orphans, cardinality, value rules) are
 * found afterwards, over the resolved rows, as for any write.
 */
import { canonicalJson, contentHash } from '../model/canonical.js';
import type { Conflict } from '../model/conflict.js';
import { BranchgraphError } from '../model/errors.js';
import type { Row, Value } from '../model/values.js';

export const RESOLUTION_STRATEGIES = ['source-wins', 'target-wins'] as const;
export type ResolutionStrategy = (typeof RESOLUTION_STRATEGIES)[number];
export const RESOLUTION_CHOICES = ['source', 'target', 'base', 'value'] as const;
export type ResolutionChoice = (typeof RESOLUTION_CHOICES)[number];

/** One conflict's resolution, as a client sends it. */
export interface ConflictResolution {
  table: string;
  key: string;
  /** The property of a DivergentUpdate; null or absent for the whole row. */
  property?: string | null;
  take: ResolutionChoice;
  /** With `take: 'value'`: the property's value, or the whole row (null deletes it); checked as a write's values are. */
  value?: unknown;
  /** What the client saw when it chose (JSON values); the merge is refused as stale when these no longer hold. */
  expected?: { base?: unknown; source?: unknown; target?: unknown };
}

export interface MergeResolutions {
  strategy?: ResolutionStrategy;
  conflicts?: ConflictResolution[];
}

/** How a conflict was resolved, as the commit records it. */
export interface AppliedResolution {
  table: string;
  key: string;
  property: string | null;
  kind: Conflict['kind'];
  take: ResolutionChoice;
  /** Whether the request named this conflict, or its strategy decided. */
  by: 'choice' | 'strategy';
}

/** Strategy-decided resolutions kept for the report; the rest are only counted. */
export const STRATEGY_KEPT = 1000;

const ROW_KINDS: ReadonlySet<Conflict['kind']> = new Set(['DivergentInsert', 'DeleteVsUpdate']);
const id = (table: string, key: string, property: string | null | undefined): string => `${table}\u0000${key}\u0000${property ?? ''}`;
const same = (a: unknown, b: unknown): boolean => canonicalJson((a ?? null) as Value) === canonicalJson((b ?? null) as Value);

/**
 * One merge's resolutions. `resolve` is asked about each entity's conflicts
 * as tables are prepared (concurrently, so it only reads and records);
 * `unused` at the end names the choices that matched nothing.
 */
export class Resolver {
  private readonly choices = new Map<string, ConflictResolution>();
  /** A property choice per entity (any one), to refuse property choices on row conflicts without scanning every choice. */
  private readonly propertyChoices = new Map<string, ConflictResolution>();
  private readonly used = new Set<string>();
  /** Every named choice applied, and the first STRATEGY_KEPT the strategy decided (a strategy may resolve millions). */
  readonly applied: AppliedResolution[] = [];
  /** How many conflicts were resolved in all. */
  total = 0;
  private strategyKept = 0;
  /**
   * Every decided conflict's identity and choice, hashed and XORed in: the set, whatever order the
   * tables were prepared in. An approval covers exactly this set (model/merge-request.ts).
   */
  private readonly decided = new Uint8Array(16);

  constructor(private readonly request: MergeResolutions) {
    for (const [i, c] of (request.conflicts ?? []).entries()) {
      const k = id(c.table, c.key, c.property);
      if (this.choices.has(k)) throw invalid(`conflicts[${i}]`, `${describe(c)} is resolved twice`);
      if (c.take === 'value' && c.value === undefined) throw invalid(`conflicts[${i}].value`, `${describe(c)}: take 'value' needs a value`);
      if (c.take !== 'value' && c.value !== undefined)
        throw invalid(`conflicts[${i}].value`, `${describe(c)}: a value goes with take 'value' only`);
      this.choices.set(k, c);
      if (c.property != null) this.propertyChoices.set(id(c.table, c.key, null), c);
    }
  }

  get empty(): boolean {
    return this.request.strategy === undefined && this.choices.size === 0;
  }

  /**
   * The row that resolves one entity's structural conflicts, or undefined
   * when some stay unresolved. `merged` is the property-wise merge of a row
   * both sides updated, holding the target's value where they conflict.
   */
  resolve(
    conflicts: readonly Conflict[],
    rows: { base: Row | null; source: Row | null; target: Row | null },
    merged: Row | undefined,
  ): { row: Row | null; supplied: boolean } | undefined {
    const first = conflicts[0] as Conflict;
    const rowChoice = this.choices.get(id(first.table, first.key, null));
    // A row conflict, or a whole row given as the value: the entity becomes that row (null deletes it).
    if (ROW_KINDS.has(first.kind) || rowChoice?.take === 'value') {
      const propChoice = ROW_KINDS.has(first.kind) ? this.propertyChoices.get(id(first.table, first.key, null)) : undefined;
      if (propChoice !== undefined)
        throw invalid(
          'conflicts',
          `${describe(propChoice)}: ${first.table} ${first.key} is a ${first.kind}; resolve the whole row (property null)`,
        );
      const choice = rowChoice ?? this.strategyChoice();
      if (choice === undefined) return undefined;
      if (rowChoice !== undefined) this.checkExpected(rowChoice, rows);
      for (const c of conflicts) this.record({ c, choice, explicit: rowChoice !== undefined, byRow: true });
      return { row: pick(choice, rows, rowChoice?.value as Row | null | undefined), supplied: choice.take === 'value' };
    }
    // DivergentUpdate: one conflict per property, each resolved by its own choice, the row's, or the strategy.
    const row: Row = { ...(merged as Row) };
    let supplied = false;
    for (const c of conflicts) {
      const propChoice = this.choices.get(id(c.table, c.key, c.property));
      const explicit = propChoice ?? rowChoice;
      const choice = explicit ?? this.strategyChoice();
      if (choice === undefined) return undefined;
      if (propChoice !== undefined) this.checkExpected(propChoice, { base: c.base, source: c.source, target: c.target });
      else if (rowChoice !== undefined) this.checkExpected(rowChoice, rows);
      const p = c.property as string;
      row[p] = (choice.take === 'value' ? propChoice?.value : (rows[choice.take]?.[p] ?? null)) as Value;
      supplied ||= choice.take === 'value';
      this.record({ c, choice, explicit: explicit !== undefined, byRow: propChoice === undefined && rowChoice !== undefined });
    }
    return { row, supplied };
  }

  /** The set of conflicts decided so far, as one hash (order-free). */
  get digest(): string {
    return Array.from(this.decided, (b) => b.toString(16).padStart(2, '0')).join('');
  }

  /** Choices that matched no conflict of the merge: each is an error the client must fix. */
  unused(): ConflictResolution[] {
    return [...this.choices].filter(([k]) => !this.used.has(k)).map(([, c]) => c);
  }

  /** Throw if any choice matched nothing (after every table was prepared). */
  checkAllUsed(): void {
    const unused = this.unused();
    if (unused.length > 0) {
      throw new BranchgraphError(
        'invalid_input',
        `${unused.length} resolution(s) name no conflict of this merge: ${unused.slice(0, 5).map(describe).join('; ')}`,
        {
          issues: unused
            .slice(0, 100)
            .map((c) => ({ path: 'resolutions.conflicts', message: `${describe(c)} is not a conflict of this merge` })),
        },
      );
    }
  }

  private strategyChoice(): Pick<ConflictResolution, 'take'> | undefined {
    const s = this.request.strategy;
    return s === undefined ? undefined : { take: s === 'source-wins' ? 'source' : 'target' };
  }

  private record(a: { c: Conflict; choice: Pick<ConflictResolution, 'take'>; explicit: boolean; byRow?: boolean | undefined }): void {
    const { c, choice, explicit, byRow = false } = a;
    if (explicit) this.used.add(id(c.table, c.key, byRow || ROW_KINDS.has(c.kind) ? null : c.property));
    this.total++;
    const h = contentHash(canonicalJson([c.table, c.key, c.property, c.kind, choice.take]));
    for (let i = 0; i < 16; i++) this.decided[i] = (this.decided[i] as number) ^ Number.parseInt(h.slice(i * 2, i * 2 + 2), 16);
    if (!explicit && this.strategyKept++ >= STRATEGY_KEPT) return;
    this.applied.push({
      table: c.table,
      key: c.key,
      property: c.property,
      kind: c.kind,
      take: choice.take,
      by: explicit ? 'choice' : 'strategy',
    });
  }

  private checkExpected(choice: ConflictResolution, now: { base: unknown; source: unknown; target: unknown }): void {
    const e = choice.expected;
    if (e === undefined) return;
    for (const side of ['base', 'source', 'target'] as const) {
      if (side in e && !same(e[side], now[side])) {
        throw new BranchgraphError(
          'resolution_stale',
          `${describe(choice)}: the ${side} is now ${canonicalJson((now[side] ?? null) as Value)}, not ${canonicalJson((e[side] ?? null) as Value)}; preview the merge again`,
          {
            details: { table: choice.table, key: choice.key, property: choice.property ?? null, side },
          },
        );
      }
    }
  }
}

function pick(
  choice: Pick<ConflictResolution, 'take'>,
  rows: { base: Row | null; source: Row | null; target: Row | null },
  value: Row | null | undefined,
): Row | null {
  return choice.take === 'value' ? (value ?? null) : rows[choice.take];
}

function describe(c: Pick<ConflictResolution, 'table' | 'key' | 'property'>): string {
  return `${c.table} ${c.key}${c.property != null ? ` ${c.property}` : ''}`;
}

function invalid(path: string, message: string): BranchgraphError {
  return new BranchgraphError('invalid_input', message, { issues: [{ path: `resolutions.${path}`, message }] });
}
