/**
 * Planning a schema change: which changes are safe as they are, which need
 * the existing rows checked, and which need an explicit migration.
 *
 * - Safe: new types, new optional properties, new enum values, loosened
 *   constraints. Old runs simply read new columns as null.
 * - Checked: tightened constraints (new @unique, narrower @range or enum,
 *   optional → required, tighter cardinality). The change lands only if every
 *   existing row satisfies the new schema.
 * - Migration: removing a type or property needs `drop`, and a new required
 *   property needs a value in `defaults`; the affected tables are rewritten.
 * - Refused: a changed property type, key, kind or edge endpoints.
 */
import { canonicalJson } from './canonical.js';
import { BranchgraphError, type ErrorIssue } from './errors.js';
import { findType, type PropDef, type Schema, type TableType } from './schema.js';
import { checkValue, type Value } from './values.js';

export interface SchemaMigration {
  /** `Type` or `Type.prop` names to remove, with their data. */
  drop?: string[];
  /** Values for new required properties, by `Type.prop`. */
  defaults?: Record<string, Value>;
}

export type TablePlan =
  /** A type the change adds: a table that starts empty. */
  | { action: 'create' }
  | { action: 'keep' }
  | { action: 'check' }
  | { action: 'rewrite'; dropProps: string[]; defaults: Record<string, Value> }
  | { action: 'drop' };

export interface SchemaChangePlan {
  tables: Record<string, TablePlan>;
}

function enumWidened(a: PropDef, b: PropDef): boolean {
  return (
    a.type.kind === 'enum' && b.type.kind === 'enum' && a.type.values.every((v) => (b.type as { values: string[] }).values.includes(v))
  );
}

function sameType(a: PropDef, b: PropDef): boolean {
  if (a.type.kind === 'vector' && b.type.kind === 'vector') return a.type.dims === b.type.dims;
  return a.type.kind === b.type.kind;
}

function tightened(a: PropDef, b: PropDef): boolean {
  if (a.optional && !b.optional) return true;
  if (!a.unique && b.unique) return true;
  if (a.type.kind === 'enum' && !enumWidened(a, b)) return true;
  const ra = a.range;
  const rb = b.range;
  if (rb !== null) {
    if (ra === null) return true;
    if (rb.min !== null && (ra.min === null || rb.min > ra.min)) return true;
    if (rb.max !== null && (ra.max === null || rb.max < ra.max)) return true;
  }
  return false;
}

export function planSchemaChange(from: Schema, to: Schema, migration: SchemaMigration = {}): SchemaChangePlan {
  const issues: ErrorIssue[] = [];
  const drop = new Set(migration.drop ?? []);
  const defaults = migration.defaults ?? {};
  const tables: Record<string, TablePlan> = {};
  for (const old of from.types) {
    const next = findType(to, old.name);
    if (next === undefined) {
      if (drop.has(old.name)) tables[old.name] = { action: 'drop' };
      else issues.push({ path: old.name, message: `removing type ${old.name} deletes its data: list it in migration.drop` });
      continue;
    }
    tables[old.name] = planTable({ old, next, drop, defaults, issues });
  }
  for (const t of to.types) {
    if (findType(from, t.name) === undefined) tables[t.name] = { action: 'create' };
  }
  for (const d of drop) {
    const [type, prop] = d.split('.');
    const old = findType(from, type ?? '');
    if (old === undefined || (prop !== undefined && !old.props.some((p) => p.name === prop))) {
      issues.push({ path: `migration.drop`, message: `${d} does not exist in the current schema` });
    }
  }
  if (issues.length > 0) {
    throw new BranchgraphError('schema_incompatible', `the schema change is refused: ${issues[0]?.message}`, { issues });
  }
  return { tables };
}

function planTable(a: {
  old: TableType;
  next: TableType;
  drop: Set<string>;
  defaults: Record<string, Value>;
  issues: ErrorIssue[];
}): TablePlan {
  const { old, next, drop, defaults, issues } = a;
  const name = old.name;
  if (old.kind !== next.kind) {
    issues.push({ path: name, message: `${name} changes from ${old.kind} to ${next.kind}; drop it and declare a new type` });
    return { action: 'keep' };
  }
  if (canonicalJson(old.key) !== canonicalJson(next.key)) {
    issues.push({ path: name, message: `${name}: the key cannot change (${old.key.join(', ')} → ${next.key.join(', ')})` });
  }
  if (old.kind === 'edge' && next.kind === 'edge' && (old.from !== next.from || old.to !== next.to)) {
    issues.push({ path: name, message: `${name}: edge endpoints cannot change` });
  }
  let check = false;
  const dropProps: string[] = [];
  const fill: Record<string, Value> = {};
  for (const p of old.props) {
    const q = next.props.find((x) => x.name === p.name);
    if (q === undefined) {
      if (drop.has(`${name}.${p.name}`)) dropProps.push(p.name);
      else issues.push({ path: `${name}.${p.name}`, message: `removing ${name}.${p.name} deletes its values: list it in migration.drop` });
      continue;
    }
    if (!sameType(p, q)) {
      issues.push({
        path: `${name}.${p.name}`,
        message: `${name}.${p.name} changes type from ${p.type.kind} to ${q.type.kind}; add a new property instead`,
      });
      continue;
    }
    if (tightened(p, q)) check = true;
  }
  for (const q of next.props) {
    if (old.props.some((p) => p.name === q.name)) continue;
    if (q.optional) continue;
    const key = `${name}.${q.name}`;
    if (Object.hasOwn(defaults, key)) {
      // A default is a value like any other, checked whether or not a row takes it.
      const checked = checkValue(q, defaults[key]);
      if (!('error' in checked)) fill[q.name] = checked.value;
      else if (checked.malformed === true) {
        throw new BranchgraphError('invalid_input', `migration.defaults.${key}: ${checked.error}`, {
          issues: [{ path: `migration.defaults.${key}`, message: checked.error }],
        });
      } else issues.push({ path: `migration.defaults.${key}`, message: checked.error });
    } else issues.push({ path: key, message: `new required property ${key} needs a value for existing rows in migration.defaults` });
  }
  if (old.kind === 'edge' && next.kind === 'edge') {
    const a = old.cardinality;
    const b = next.cardinality;
    if (b !== null && (a === null || b.min > a.min || (b.max !== null && (a.max === null || b.max < a.max)))) check = true;
  }
  if (dropProps.length > 0 || Object.keys(fill).length > 0) return { action: 'rewrite', dropProps, defaults: fill };
  return check ? { action: 'check' } : { action: 'keep' };
}

/**
 * Tables whose rows, valid under `from`, may break `to`: a tightened
 * constraint, a new required property, a tighter cardinality. A merge that
 * takes one side's schema checks the other side's data in these tables.
 */
export function tablesToRecheck(from: Schema, to: Schema): string[] {
  const out: string[] = [];
  for (const next of to.types) {
    const old = findType(from, next.name);
    if (old === undefined || old.kind !== next.kind) continue;
    const dropAll = new Set(old.props.map((p) => `${old.name}.${p.name}`));
    const plan = planTable({ old, next, drop: dropAll, defaults: {}, issues: [] });
    const newRequired = next.props.some((q) => !q.optional && !old.props.some((p) => p.name === q.name));
    if (plan.action !== 'keep' || newRequired) out.push(next.name);
  }
  return out.sort();
}
