/**
 * Three-way merge of schemas: pure, no I/O.
 *
 * When both sides changed the schema since their base, the changes are
 * combined type by type and property by property, by the rule the rows
 * follow: what one side changed is taken, what both changed the same way is
 * taken once, and what both changed differently is a `SchemaConflict`
 * naming the type (and property), with the definitions at the base and on
 * each side. So new tables on either side, new optional properties on
 * both, or a constraint tightened on one side merge. A type's key, kind and
 * edge endpoints are merged like properties: changed on one side only, or
 * a conflict. Stored queries are merged by name by the same rule: the same
 * change on both sides merges, different changes to one query are a
 * `SchemaConflict` on the table `@queries` naming the query.
 *
 * Whether the other side's rows satisfy what the merged schema adds (a
 * required property, a tighter range or cardinality) is not decided here.
 * The merge rechecks those tables against the merged schema
 * (merge-recheck.ts) and reports each failing row as a conflict with its
 * values.
 */
import { canonicalJson } from '../model/canonical.js';
import type { Conflict } from '../model/conflict.js';
import type { PropDef, Schema, StoredQuery, TableType } from '../model/schema.js';

const json = (v: unknown): string => (v === undefined ? '\u0000absent' : canonicalJson(v));

/** The three-way choice for one value: the changed side, the agreed value, or a clash. */
function pick<T>(b: T | undefined, s: T | undefined, t: T | undefined): { value: T | undefined } | 'clash' {
  if (json(s) === json(b)) return { value: t };
  if (json(t) === json(b) || json(s) === json(t)) return { value: s };
  return 'clash';
}

function clash(a: {
  table: string;
  property: string | null;
  b: unknown;
  s: unknown;
  t: unknown;
  what: string;
  message?: string | undefined;
}): Conflict {
  const {
    table,
    property,
    b,
    s,
    t,
    what,
    message = `${table}${property !== null ? `.${property}` : ''}: ${what} differently on the source and on the target`,
  } = a;
  return {
    kind: 'SchemaConflict',
    table,
    key: '',
    property,
    base: (b ?? null) as never,
    source: (s ?? null) as never,
    target: (t ?? null) as never,
    message,
  };
}

/** Names in the target's order, then those only the source has, in its order. */
function names<T extends { name: string }>(target: readonly T[], source: readonly T[]): string[] {
  const seen = new Set(target.map((x) => x.name));
  return [...target.map((x) => x.name), ...source.map((x) => x.name).filter((n) => !seen.has(n))];
}

function mergeType(a: { b: TableType | undefined; s: TableType; t: TableType; out: Conflict[] }): TableType | undefined {
  const { b, s, t, out } = a;
  const before = out.length;
  const field = <K extends string>(name: K, get: (x: TableType) => unknown): unknown => {
    const r = pick(b === undefined ? undefined : get(b), get(s), get(t));
    if (r === 'clash') {
      out.push(clash({ table: t.name, property: null, b: b && get(b), s: get(s), t: get(t), what: `its ${name} was changed` }));
      return get(t);
    }
    return r.value;
  };
  const kind = field('kind', (x) => x.kind) as TableType['kind'];
  const key = field('key', (x) => x.key) as string[];
  const edge = (x: TableType) => (x.kind === 'edge' ? { from: x.from, to: x.to, cardinality: x.cardinality } : null);
  const ends = field('endpoints and cardinality', edge) as ReturnType<typeof edge>;
  const props: PropDef[] = [];
  const byName = (x: TableType | undefined) => new Map((x?.props ?? []).map((p) => [p.name, p]));
  const [pb, ps, pt] = [byName(b), byName(s), byName(t)];
  for (const name of names(t.props, s.props)) {
    const r = pick(pb.get(name), ps.get(name), pt.get(name));
    if (r === 'clash')
      out.push(
        clash({
          table: t.name,
          property: name,
          b: pb.get(name),
          s: ps.get(name),
          t: pt.get(name),
          what: pb.has(name) ? 'it was changed' : 'it was added',
        }),
      );
    else if (r.value !== undefined) props.push(r.value);
  }
  if (out.length > before) return undefined;
  return kind === 'edge' && ends !== null
    ? { kind, name: t.name, from: ends.from, to: ends.to, cardinality: ends.cardinality, key, props }
    : { kind: 'node', name: t.name, key, props };
}

export function mergeSchemaTypes(base: Schema, source: Schema, target: Schema): { schema: Schema } | { conflicts: Conflict[] } {
  const conflicts: Conflict[] = [];
  const find = (x: Schema, n: string) => x.types.find((t) => t.name === n);
  const types: TableType[] = [];
  for (const name of names(target.types, source.types)) {
    const [b, s, t] = [find(base, name), find(source, name), find(target, name)];
    const r = pick(b, s, t);
    if (r !== 'clash') {
      if (r.value !== undefined) types.push(r.value);
      continue;
    }
    // Both sides changed the type: combine their changes, unless one of them removed it.
    if (s === undefined || t === undefined) {
      conflicts.push(
        clash({
          table: name,
          property: null,
          b,
          s,
          t,
          what: '',
          message: `${name}: removed on the ${s === undefined ? 'source' : 'target'} and changed on the ${s === undefined ? 'target' : 'source'}`,
        }),
      );
      continue;
    }
    const merged = mergeType({ b, s, t, out: conflicts });
    if (merged !== undefined) types.push(merged);
  }
  const queries = mergeQueries({ base: base.queries ?? [], source: source.queries ?? [], target: target.queries ?? [] }, conflicts);
  if (conflicts.length > 0) return { conflicts };
  const { queries: _, ...rest } = target;
  return { schema: { ...rest, types, ...(queries.length > 0 ? { queries } : {}) } };
}

/** Where a stored query's conflict is reported: no table has this name (names start with a letter). */
export const QUERIES_TABLE = '@queries';

function mergeQueries(sides: { base: StoredQuery[]; source: StoredQuery[]; target: StoredQuery[] }, out: Conflict[]): StoredQuery[] {
  const { base, source, target } = sides;
  const find = (x: StoredQuery[], n: string) => x.find((q) => q.name === n);
  const merged: StoredQuery[] = [];
  for (const name of names(target, source)) {
    const [b, s, t] = [find(base, name), find(source, name), find(target, name)];
    const r = pick(b, s, t);
    if (r === 'clash') {
      const how =
        b === undefined
          ? 'added differently on the source and on the target'
          : s === undefined || t === undefined
            ? `removed on the ${s === undefined ? 'source' : 'target'} and changed on the ${s === undefined ? 'target' : 'source'}`
            : 'changed differently on the source and on the target';
      out.push(clash({ table: QUERIES_TABLE, property: name, b, s, t, what: how, message: `stored query ${name}: ${how}` }));
    } else if (r.value !== undefined) merged.push(r.value);
  }
  return merged.sort((x, y) => (x.name < y.name ? -1 : 1));
}
