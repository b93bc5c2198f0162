/**
 * Applying a new schema as a commit. `planSchemaChange` (pure) decides what
 * each table needs; here the tables that need rewriting are rewritten in
 * memory, every table the change can break is checked by the one
 * whole-table checker (table-check.ts, which merges use too), and only then
 * are the rewrites written, as one new run each. A refusal changes nothing.
 */
import { checkTable, type LiveRows } from './table-check.js';
import { BranchgraphError, type ErrorIssue } from '../model/errors.js';
import { planSchemaChange, type SchemaMigration } from '../model/schema-change.js';
import { parseSchemaInSlices } from '../model/schema-parser.js';
import { nextTurn } from '../model/turns.js';
import { findType, schemaHashInSlices, type Schema, type TableType } from '../model/schema.js';
import { checkRow, rowHash, type Row } from '../model/values.js';
import type { RunRef, RunRow } from '../table/run.js';
import { EMPTY_TABLE, type TableVersion } from '../table/table-version.js';
import { mergeRuns } from '../table/merge-walk.js';
import type { PlanResult } from './change.js';
import type { Snapshot } from './snapshot.js';
import type { RunReader, RunWriter } from './ports.js';

export interface SchemaApplyResult {
  schema: Schema;
  tables: Record<string, 'create' | 'keep' | 'check' | 'rewrite' | 'drop'>;
}

/** A schema change to plan: the new schema (text or IR) and its migration, against a head. */
export interface SchemaApplyRequest {
  runs: RunReader & RunWriter;
  head: Snapshot;
  schema: string | Schema;
  migration?: SchemaMigration | undefined;
  signal?: AbortSignal | undefined;
}

export async function planSchemaApply(request: SchemaApplyRequest): Promise<PlanResult<SchemaApplyResult>> {
  const { runs, head, schema: input, migration, signal } = request;
  // Types come from the request; the branch's stored queries stay as they are (stored-query.ts changes them).
  // A schema near its size limit declares tens of thousands of tables: parse and hash go in slices.
  const { queries: _given, ...types } = typeof input === 'string' ? await parseSchemaInSlices(input) : input;
  const next: Schema = head.schema.queries === undefined ? types : { ...types, queries: head.schema.queries };
  const plan = planSchemaChange(head.schema, next, migration);
  await nextTurn(); // the plan compares every table's text: a slice of its own
  const result: SchemaApplyResult = {
    schema: next,
    tables: Object.fromEntries(Object.entries(plan.tables).map(([k, v]) => [k, v.action])),
  };
  // Hashes, not texts: the publication names the new schema by this hash, computed once.
  if ((await schemaHashInSlices(next)) === (await schemaHashInSlices(head.schema))) return { unchanged: result };

  const tables: Record<string, TableVersion | null> = {};
  const scratch: RunRef[] = [];
  // Rewritten tables first (dropped properties, defaults), then one check of every table the change can break.
  const rewritten = new Map<string, RunRow[]>();
  for (const [name, p] of Object.entries(plan.tables)) {
    if (p.action === 'drop') tables[name] = null;
    if (p.action !== 'rewrite') continue;
    const rows: RunRow[] = [];
    for await (const r of mergeRuns({
      runs: (head.tables[name] ?? EMPTY_TABLE).runs,
      load: runs.loader(findType(head.schema, name) as TableType, signal),
    })) {
      const row = { ...(r.props as Row), ...p.defaults };
      for (const d of p.dropProps) delete row[d];
      const normalized = checkRow({ table: findType(next, name) as TableType, input: row, mode: 'full', path: '' }).row;
      rows.push({ key: r.key, tomb: false, hash: rowHash(normalized), props: normalized });
    }
    rewritten.set(name, rows);
  }
  const rowsOf: LiveRows = async function* (name) {
    const done = rewritten.get(name);
    if (done !== undefined) {
      for (const r of done) yield { key: r.key, row: r.props as Row };
      return;
    }
    const type = findType(head.schema, name) ?? findType(next, name);
    if (type === undefined) return;
    for await (const r of mergeRuns({ runs: (head.tables[name] ?? EMPTY_TABLE).runs, load: runs.loader(type, signal) }))
      yield { key: r.key, row: r.props as Row };
  };
  const issues: ErrorIssue[] = [];
  for (const [name, p] of Object.entries(plan.tables).sort(([a], [b]) => (a < b ? -1 : 1))) {
    if (p.action !== 'check' && p.action !== 'rewrite') continue;
    for (const v of await checkTable({ schema: next, name, rowsOf, limit: 200 - issues.length }))
      issues.push({ path: `${name}/${v.key}`, message: v.message });
    if (issues.length >= 200) break;
  }
  if (issues.length > 0) {
    throw new BranchgraphError(
      'schema_incompatible',
      `existing rows do not satisfy the new schema: ${issues[0]?.path}: ${issues[0]?.message}`,
      { issues },
    );
  }
  for (const [name, rows] of rewritten) {
    if (rows.length === 0) {
      tables[name] = { runs: [] };
      continue;
    }
    const ref = await runs.write(findType(next, name) as TableType, rows, signal);
    scratch.push(ref);
    tables[name] = { runs: [ref] };
  }
  return { kind: 'schema', schema: next, tables, scratch, result, message: 'apply schema' };
}
