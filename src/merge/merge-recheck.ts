/**
 * Whole-table rechecks for merges across a schema tightening.
 *
 * A side whose schema is not the merged one wrote its rows under looser
 * rules than the head will carry (the other side tightened a constraint,
 * added a required property, narrowed a cardinality). The tables such a
 * change can break are checked whole, so the published head satisfies its
 * whole schema; what breaks it is a conflict, reported with the values on
 * each side.
 */
import type { Conflict } from '../model/conflict.js';
import { tablesToRecheck } from '../model/schema-change.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import type { Row } from '../model/values.js';
import type { RunReader } from '../graph/ports.js';
import type { Snapshot } from '../graph/snapshot.js';
import { checkTable, type LiveRows } from '../graph/table-check.js';
import { EMPTY_TABLE, type TableVersion } from '../table/table-version.js';
import { lookupStates } from '../table/table-lookup.js';
import { mergeRuns } from '../table/merge-walk.js';
import { MAX_CONFLICTS_PER_PAGE } from './merge-spec.js';

export type SideValues = { base: Row | null; source: Row | null; target: Row | null };

/** What a recheck reads: the merged schema and tables, the sides, the conflicts already found, and each key's side values. */
export interface Recheck {
  runs: RunReader;
  schema: Schema;
  sides: readonly Snapshot[];
  tables: Record<string, TableVersion>;
  already: readonly Conflict[];
  valuesOf: (table: string, key: string) => Promise<SideValues>;
  signal: AbortSignal | undefined;
}

export async function recheckTightened(r: Recheck): Promise<Conflict[]> {
  const { runs, schema, sides, tables, already, valuesOf, signal } = r;
  // The merged schema is one side's (mergeSchemas); the other side's rows may not satisfy it.
  const hash = sides.find((s) => s.schema === schema)?.manifest.schema;
  const names = [...new Set(sides.filter((s) => s.manifest.schema !== hash).flatMap((s) => tablesToRecheck(s.schema, schema)))].sort();
  if (names.length === 0) return [];
  const rowsOf: LiveRows = async function* (name) {
    const type = findType(schema, name);
    if (type === undefined) return;
    for await (const row of mergeRuns({ runs: (tables[name] ?? EMPTY_TABLE).runs, load: runs.loader(type, signal) }))
      yield { key: row.key, row: row.props as Row };
  };
  const idOf = (c: Pick<Conflict, 'kind' | 'table' | 'key' | 'property'>): string => `${c.kind}\0${c.table}\0${c.key}\0${c.property ?? ''}`;
  const seen = new Set(already.map(idOf));
  const out: Conflict[] = [];
  for (const name of names) {
    for (const v of await checkTable({ schema, name, rowsOf, limit: MAX_CONFLICTS_PER_PAGE })) {
      if (seen.has(idOf(v))) continue;
      seen.add(idOf(v));
      out.push({ ...v, ...(await valuesOf(v.table, v.key)) });
    }
  }
  return out;
}

/** A key's live row at the base, the source and the target (`[base, source, target]`), for conflict reports. */
export async function sideValues(
  read: { runs: RunReader; schema: Schema; at: readonly [Snapshot, Snapshot, Snapshot]; signal: AbortSignal | undefined },
  table: string,
  key: string,
): Promise<SideValues> {
  const { at } = read;
  const load = read.runs.loader(findType(read.schema, table) as TableType, read.signal);
  const [base, source, target] = await Promise.all(
    at.map(async (s) => {
      const r = (await lookupStates(s.tables[table] ?? EMPTY_TABLE, [key], load)).get(key);
      return r === undefined || r.tomb ? null : (r.props as Row);
    }),
  );
  return { base: base ?? null, source: source ?? null, target: target ?? null };
}
