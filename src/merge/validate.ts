/**
 * Graph validation of a merged result, before anything is published. It runs
 * only when the structural merge found no conflicts, and it looks at what the
 * merge changed relative to the target:
 * - ValueConstraintViolation: a changed row fails its type, enum or range;
 * - OrphanEdge: a changed edge whose endpoint is absent from the result, or a
 *   surviving edge whose endpoint node the merge deletes;
 * - UniqueViolation: a changed row shares a @unique value with another row;
 * - CardinalityViolation: a source node whose edges of a type changed ends
 *   up with an out-degree outside the declared range.
 * Every check touches only changed keys: @unique values and incoming edges
 * are looked up in the target's secondary indexes (a key the merge does not
 * change reads in the merged graph exactly as in the target), so the work
 * follows the merge's change, not the tables.
 */
import type { Conflict } from '../model/conflict.js';
import { EDGE_FROM, EDGE_TO, findType, type EdgeType, type PropDef, type Schema, type TableType } from '../model/schema.js';
import { checkRow, edgeKeyPrefix, type Row } from '../model/values.js';
import { EMPTY_TABLE, type LoadRun, type TableVersion } from '../table/table-version.js';
import { lookupRows } from '../table/table-lookup.js';
import { scanPrefix } from '../table/table-prefix.js';
import { encodeNodeKey, IN_SPEC, uniqueSpec, type IndexReader } from '../table/secondary-index.js';
import { uniqueClashes } from '../table/unique-clashes.js';
import { compareKey } from '../table/run.js';

export interface ValidationInput {
  schema: Schema;
  tables: Record<string, TableVersion>;
  loader: (type: TableType) => LoadRun;
  /** Per table: keys whose merged state may differ from the target's, with that state. */
  changes: Map<string, Map<string, Row | null>>;
  /**
   * Whether a changed row needs its values checked: false for a row the source holds as is under
   * the same type, which was checked when it was written (absent: every row is checked).
   */
  needsValueCheck?: (table: string, key: string) => boolean;
  /** Index lookups over the target's tables (graph/graph.ts `table`). */
  targetIndexes: (table: string) => IndexReader;
  /** Values on each side, for conflict reports. */
  sides: (table: string, key: string) => Promise<{ base: Row | null; source: Row | null; target: Row | null }>;
  /**
   * Whether both sides changed the table since the base only by runs that kept this @unique
   * property where it was (RunRef.keptUnique): every merged row then holds its base value, as
   * the target's rows do, so no clash over it can arise and its index is not read.
   */
  uniqueKept?: (table: string, prop: string) => boolean;
}

export async function validateMerged(input: ValidationInput): Promise<Conflict[]> {
  const { schema, tables, changes } = input;
  const out: Conflict[] = [];
  const view = (name: string): { type: TableType; version: TableVersion; load: LoadRun } => {
    const type = findType(schema, name) as TableType;
    return { type, version: tables[name] ?? EMPTY_TABLE, load: input.loader(type) };
  };
  const conflict = async (c: Pick<Conflict, 'kind' | 'table' | 'key' | 'property' | 'message'>): Promise<void> => {
    const { kind, table, key, property, message } = c;
    const s = await input.sides(table, key);
    out.push({ kind, table, key, property, base: s.base, source: s.source, target: s.target, message });
  };
  const liveKeys = async (table: string, ks: Iterable<string>): Promise<Set<string>> => {
    const t = view(table);
    return new Set((await lookupRows(t.version, ks, t.load)).keys());
  };

  for (const [name, changed] of [...changes].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const t = view(name);
    const live = [...changed].filter((e): e is [string, Row] => e[1] !== null);

    for (const [key, row] of live) {
      if (input.needsValueCheck?.(name, key) === false) continue;
      for (const issue of checkRow({ table: t.type, input: row, mode: 'full', path: '' }).issues) {
        const property = issue.path.replace(/^\./, '') || null;
        await conflict({ kind: 'ValueConstraintViolation', table: name, key, property, message: `${name} ${key}: ${issue.message}` });
      }
    }

    if (t.type.kind === 'edge') {
      const et = t.type;
      const froms = await liveKeys(
        et.from,
        live.map(([, r]) => String(r[EDGE_FROM])),
      );
      const tos = await liveKeys(
        et.to,
        live.map(([, r]) => String(r[EDGE_TO])),
      );
      for (const [key, row] of live) {
        for (const [end, ends] of [
          [EDGE_FROM, froms],
          [EDGE_TO, tos],
        ] as const) {
          if (!ends.has(String(row[end])))
            await conflict({ kind: 'OrphanEdge', table: name, key, property: end, message: orphanMessage({ et, key, row, end }) });
        }
      }
      await checkCardinality({ et, changed, t: view(name), liveKeys, conflict });
    } else {
      const deleted = new Set([...changed].filter(([, r]) => r === null).map(([k]) => k));
      if (deleted.size > 0)
        await checkSurvivingEdges({ schema, nodeTable: name, deleted, view, targetIndexes: input.targetIndexes, changes, conflict });
    }

    await reportUniqueClashes({ input, name, type: t.type, changed, conflict });
  }
  return out;
}

type ReportConflict = (c: Pick<Conflict, 'kind' | 'table' | 'key' | 'property' | 'message'>) => Promise<void>;

/**
 * The @unique clashes among a table's merged rows and the target's holders. Both rows of a clash
 * are reported, with one message, so the report does not depend on which side's row counts as the
 * change (the merge direction).
 */
async function reportUniqueClashes(a: {
  input: ValidationInput;
  name: string;
  type: TableType;
  changed: Map<string, Row | null>;
  conflict: ReportConflict;
}): Promise<void> {
  const { input, name, changed, conflict } = a;
  const uniques = a.type.props.filter((p) => p.unique && input.uniqueKept?.(name, p.name) !== true);
  const reported = new Set<string>();
  const index = input.targetIndexes(name);
  const holdersOf = (p: PropDef, values: string[]) => index.holders(uniqueSpec(p.name), values);
  for (const clash of await uniqueClashes({ uniques, changed, holdersOf })) {
    const pair = [clash.key, clash.other].sort(compareKey) as [string, string];
    for (const key of pair) {
      if (reported.has(`${clash.property}\0${key}`)) continue;
      reported.add(`${clash.property}\0${key}`);
      await conflict({
        kind: 'UniqueViolation',
        table: name,
        key,
        property: clash.property,
        message: `${name}.${clash.property} = ${clash.value} is used by both ${pair[0]} and ${pair[1]}`,
      });
    }
  }
}

/** One wording whichever way the orphan was found, so both merge directions report the same conflict. */
function orphanMessage(a: { et: EdgeType; key: string; row: Row; end: 'from' | 'to' }): string {
  const { et, key, row, end } = a;
  // Edge ends are named from/to: source and target name the merge's sides.
  return `${et.name} ${key}: its ${end} node ${end === EDGE_FROM ? et.from : et.to} ${String(row[end])} is absent from the merged result`;
}

async function checkCardinality(a: {
  et: EdgeType;
  changed: Map<string, Row | null>;
  t: { version: TableVersion; load: LoadRun };
  liveKeys: (table: string, ks: Iterable<string>) => Promise<Set<string>>;
  conflict: (c: Pick<Conflict, 'kind' | 'table' | 'key' | 'property' | 'message'>) => Promise<void>;
}): Promise<void> {
  const { et, changed, t, liveKeys, conflict } = a;
  const card = et.cardinality;
  if (card === null) return;
  const sources = [...new Set([...changed.keys()].map((k) => (JSON.parse(k) as string[])[0] as string))].sort();
  const live = await liveKeys(et.from, sources);
  for (const from of sources) {
    if (!live.has(from)) continue;
    let degree = 0;
    for await (const _ of scanPrefix(t.version, t.load, edgeKeyPrefix(from))) degree++;
    if (degree < card.min || (card.max !== null && degree > card.max)) {
      await conflict({
        kind: 'CardinalityViolation',
        table: et.name,
        key: from,
        property: null,
        message: `${et.from} ${from} would have ${degree} outgoing ${et.name} edges; allowed ${card.min}..${card.max ?? '∞'}`,
      });
    }
  }
}

async function checkSurvivingEdges(a: {
  schema: Schema;
  nodeTable: string;
  deleted: Set<string>;
  view: (name: string) => { type: TableType; version: TableVersion; load: LoadRun };
  targetIndexes: (table: string) => IndexReader;
  changes: Map<string, Map<string, Row | null>>;
  conflict: (c: Pick<Conflict, 'kind' | 'table' | 'key' | 'property' | 'message'>) => Promise<void>;
}): Promise<void> {
  const { schema, nodeTable, deleted, view, targetIndexes, changes, conflict } = a;
  for (const et of schema.types) {
    if (et.kind !== 'edge' || (et.from !== nodeTable && et.to !== nodeTable)) continue;
    const t = view(et.name);
    // Changed edges were already checked against the merged nodes.
    const alreadyChecked = changes.get(et.name) ?? new Map<string, Row | null>();
    const report = async (key: string, row: Row, end: 'from' | 'to'): Promise<void> => {
      if (alreadyChecked.has(key)) return;
      await conflict({ kind: 'OrphanEdge', table: et.name, key, property: end, message: orphanMessage({ et, key, row, end }) });
    };
    if (et.from === nodeTable) {
      for (const k of [...deleted].sort()) {
        for await (const r of scanPrefix(t.version, t.load, edgeKeyPrefix(k))) await report(r.key, r.props as Row, 'from');
      }
    }
    if (et.to === nodeTable) {
      // Edges the merge leaves alone read as in the target: its `in` index finds them.
      const ins = await targetIndexes(et.name).holders(
        IN_SPEC,
        [...deleted].map((k) => encodeNodeKey(k)),
      );
      const found = [...ins.values()].flat().filter((k) => !alreadyChecked.has(k));
      const rows = await lookupRows(t.version, found, t.load);
      // An edge whose two ends are both gone is an orphan at both ends, as a changed edge would be.
      for (const k of found.sort(compareKey)) {
        const r = rows.get(k);
        if (r !== undefined) await report(k, r.props as Row, 'to');
      }
    }
  }
}
