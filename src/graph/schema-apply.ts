/**
 * Applying a new schema as a commit. `planSchemaChange` (pure) decides what
 * each table needs; here the tables that need their rows checked or
 * rewritten are read, validated against the new types, and (for rewrites)
 * compacted into one new run. A refusal changes nothing.
 */
import { canonicalJson } from '../model/canonical.js';
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import { planSchemaChange, type SchemaMigration } from '../model/schema-change.js';
import { parseSchema } from '../model/schema-parser.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import { checkRow, rowHash, type Row } from '../model/values.js';
import type { RunRef, RunRow } from '../table/run.js';
import { EMPTY_TABLE, mergeRuns, type TableVersion } from '../table/table-version.js';
import type { ChangePlan, Graph, Snapshot } from './graph.js';

export interface SchemaApplyResult {
  schema: Schema;
  tables: Record<string, 'keep' | 'check' | 'rewrite' | 'drop'>;
}

export async function planSchemaApply(
  graph: Graph,
  head: Snapshot,
  input: string | Schema,
  migration: SchemaMigration | undefined,
  signal?: AbortSignal,
): Promise<ChangePlan<SchemaApplyResult> | { unchanged: SchemaApplyResult }> {
  const next = typeof input === 'string' ? parseSchema(input) : input;
  const plan = planSchemaChange(head.schema, next, migration);
  const result: SchemaApplyResult = { schema: next, tables: Object.fromEntries(Object.entries(plan.tables).map(([k, v]) => [k, v.action])) };
  if (canonicalJson(next) === canonicalJson(head.schema)) return { unchanged: result };

  const tables: Record<string, TableVersion | null> = {};
  const scratch: RunRef[] = [];
  const issues: ErrorIssue[] = [];
  for (const [name, p] of Object.entries(plan.tables)) {
    if (p.action === 'drop') {
      tables[name] = null;
      continue;
    }
    if (p.action === 'keep') continue;
    const oldType = findType(head.schema, name) as TableType;
    const newType = findType(next, name) as TableType;
    const version = head.tables[name] ?? EMPTY_TABLE;
    const rows: RunRow[] = [];
    const uniques = newType.props.filter((q) => q.unique);
    const seen = new Map<string, string>();
    for await (const r of mergeRuns(version.runs, graph.runs.loader(oldType, signal), undefined)) {
      let row: Row = { ...(r.props as Row) };
      if (p.action === 'rewrite') {
        for (const d of p.dropProps) delete row[d];
        row = { ...row, ...p.defaults };
      }
      const checked = checkRow(newType, row, 'full', `${name}/${r.key}`);
      issues.push(...checked.issues.slice(0, 50));
      for (const q of uniques) {
        const v = checked.row[q.name];
        if (v === null || v === undefined) continue;
        const id = `${q.name}\u0000${canonicalJson(v)}`;
        const other = seen.get(id);
        if (other !== undefined) issues.push({ path: `${name}/${r.key}`, message: `${name}.${q.name} = ${canonicalJson(v)} is also used by ${other}` });
        else seen.set(id, r.key);
      }
      rows.push({ key: r.key, tomb: false, hash: rowHash(checked.row), props: checked.row });
      if (issues.length >= 200) break;
    }
    if (newType.kind === 'edge' && newType.cardinality !== null) {
      const { min, max } = newType.cardinality;
      const degree = new Map<string, number>();
      for (const r of rows) degree.set(String(r.props?.from), (degree.get(String(r.props?.from)) ?? 0) + 1);
      for (const [from, n] of degree) {
        if (n < min || (max !== null && n > max)) issues.push({ path: `${name}/${from}`, message: `${newType.from} ${from} has ${n} outgoing ${name} edges; allowed ${min}..${max ?? '∞'}` });
      }
    }
    if (issues.length === 0 && p.action === 'rewrite') {
      const ref = await graph.runs.write(newType, rows, signal);
      scratch.push(ref);
      tables[name] = { runs: [ref] };
    }
  }
  if (issues.length > 0) {
    await graph.runs.delete(scratch).catch(() => undefined);
    throw new BranchgraphError('schema_incompatible', `existing rows do not satisfy the new schema: ${issues[0]?.path}: ${issues[0]?.message}`, { issues });
  }
  return { kind: 'schema', schema: next, tables, scratch, result, message: 'apply schema' };
}
