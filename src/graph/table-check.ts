/**
 * The whole-table constraint check: every way the live rows of a table can
 * break their schema type. Values (types, ranges, enums, required
 * properties), @unique across the table, and for an edge table with a
 * cardinality, the out-degree of every node of its source type, nodes
 * without any edge included (a minimum of one is broken by a node with
 * none).
 *
 * Schema apply runs it on the tables a change tightens, and a merge runs it
 * on the merged tables when one side's data was written under a looser
 * schema than the merged one, so no publication can produce a head that
 * breaks its own schema. Writes check only the rows they change
 * (write-batch.ts), which is the same rule restricted to what can change.
 */
import { canonicalJson } from '../model/canonical.js';
import type { ConflictKind } from '../model/conflict.js';
import { EDGE_FROM, findType, type EdgeType, type Schema, type TableType } from '../model/schema.js';
import { checkRow, type Row } from '../model/values.js';

export interface TableViolation {
  kind: Extract<ConflictKind, 'ValueConstraintViolation' | 'UniqueViolation' | 'CardinalityViolation'>;
  table: string;
  key: string;
  property: string | null;
  message: string;
}

/** A table's live rows, in key order. */
export type LiveRows = (table: string) => AsyncIterable<{ key: string; row: Row }>;

/** Violations of `name`'s type by its rows, at most `limit` of them, in key order per check. */
export async function checkTable(a: {
  schema: Schema;
  name: string;
  rowsOf: LiveRows;
  limit?: number | undefined;
}): Promise<TableViolation[]> {
  const { schema, name, rowsOf, limit = 200 } = a;
  const type = findType(schema, name) as TableType;
  const out: TableViolation[] = [];
  const uniques = type.props.filter((p) => p.unique);
  const holder = new Map<string, string>();
  for await (const { key, row } of rowsOf(name)) {
    for (const issue of checkRow({ table: type, input: row, mode: 'full', path: '' }).issues) {
      out.push({
        kind: 'ValueConstraintViolation',
        table: name,
        key,
        property: issue.path.replace(/^\./, '') || null,
        message: `${name} ${key}: ${issue.message}`,
      });
    }
    for (const q of uniques) {
      const v = row[q.name];
      if (v === null || v === undefined) continue;
      const id = `${q.name}\u0000${canonicalJson(v)}`;
      const other = holder.get(id);
      if (other === undefined) holder.set(id, key);
      else {
        const message = `${name}.${q.name} = ${canonicalJson(v)} is used by both ${other} and ${key}`;
        out.push(
          { kind: 'UniqueViolation', table: name, key: other, property: q.name, message },
          { kind: 'UniqueViolation', table: name, key, property: q.name, message },
        );
      }
    }
    if (out.length >= limit) return out.slice(0, limit);
  }
  if (type.kind === 'edge' && type.cardinality !== null) out.push(...(await checkDegrees(type, rowsOf, limit - out.length)));
  return out.slice(0, limit);
}

async function checkDegrees(et: EdgeType, rowsOf: LiveRows, limit: number): Promise<TableViolation[]> {
  const card = et.cardinality as NonNullable<EdgeType['cardinality']>;
  const degree = new Map<string, number>();
  for await (const { row } of rowsOf(et.name)) {
    const from = String(row[EDGE_FROM]);
    degree.set(from, (degree.get(from) ?? 0) + 1);
  }
  const out: TableViolation[] = [];
  // Every node of the source type, so one with no edge at all is counted as degree 0.
  for await (const { key } of rowsOf(et.from)) {
    const n = degree.get(key) ?? 0;
    if (n < card.min || (card.max !== null && n > card.max)) {
      out.push({
        kind: 'CardinalityViolation',
        table: et.name,
        key,
        property: null,
        message: `${et.from} ${key} has ${n} outgoing ${et.name} edges; allowed ${card.min}..${card.max ?? '∞'}`,
      });
      if (out.length >= limit) break;
    }
  }
  return out;
}
