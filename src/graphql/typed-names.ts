/**
 * Naming rules of the typed GraphQL API: every type, field and input name
 * generated from a graph schema, decided here, deterministically, with
 * collisions settled by one rule. Pure.
 *
 * Types. A table's base name T is its name with the first letter
 * upper-cased (`person` → `Person`). Each table owns a family of names: T,
 * `TConnection`, `TEdge`, `TWhere`, `TOrderBy`, `TInput`, `TPatch`,
 * `TResult`, `TSearchHit`, `TAggregate`, `TAggregateGroup`, `TNumbers`, and per enum property p the enum `T<P>` and its filter
 * `T<P>Filter`. Tables are named in table-name order; when any name of a
 * family is taken (by a built-in name such as `Query`, `String`, `Commit`,
 * `PageInfo`, `StringFilter`, or by an earlier table's family, as with
 * `person` after `Person`, or a table `PersonWhere` after `Person`), T gets
 * a trailing `_` until the whole family is free.
 *
 * Root fields. From T: `getT` (by key), `queryT` (a connection), and the
 * mutations `createT`, `updateT`, `upsertT`, `deleteT`, `createManyT`,
 * `upsertManyT`, `aggregateT`, and on a table with `@search` or vector properties `searchT`. They are in T's family too, so no two tables' root fields
 * meet (`createManyPerson` of `Person` and of a table `ManyPerson`). Key
 * arguments take the key's field names, with a trailing `_` when that is
 * `at` or `set` (the other arguments' names).
 *
 * Fields of a row type. A property keeps its name (property names are
 * GraphQL names and never start with `_`). Generated fields: `key` (the
 * entity key), on node types a traversal per edge table in each direction it
 * can be walked, `<e>Out` and `<e>In` (e is the edge's T with its first
 * letter lower-cased), and on edge types `from`, `to` (the endpoint nodes),
 * `fromKey`, `toKey`. A generated field whose name a property already has
 * gets a trailing `_` until free. Where and order inputs use the same field
 * names as the row type, plus `_and`, `_or`, `_not`, which no property can
 * take.
 *
 * Enum values keep their text, except the three GraphQL forbids as enum
 * values (`true`, `false`, `null`), which get a trailing `_`.
 */
import { keyProps } from '../model/key-props.js';
import type { EdgeType, Schema, TableType } from '../model/schema.js';
import { runSteps, type Steps } from '../model/steps.js';

/** Names every generated schema defines itself, which no table's family may take. */
export const BUILT_IN_NAMES = [
  'Query',
  'Mutation',
  'Subscription',
  'String',
  'Int',
  'Float',
  'Boolean',
  'ID',
  'SafeInt',
  'Date',
  'DateTime',
  'JSON',
  'Commit',
  'PageInfo',
  'SortDirection',
  'StringFilter',
  'SafeIntFilter',
  'FloatFilter',
  'BooleanFilter',
  'DateFilter',
  'DateTimeFilter',
  'JSONFilter',
  'Vector',
  'VectorFilter',
  'Near',
  'Highlight',
  'WalkNode',
  'WalkEdge',
  'WalkNodeRef',
  'WalkDirection',
  'WalkPath',
  'Neighborhood',
  'NeighborhoodNode',
] as const;

const FAMILY_SUFFIXES = [
  '',
  'Connection',
  'Edge',
  'Where',
  'OrderBy',
  'Input',
  'Patch',
  'Result',
  'SearchHit',
  'Aggregate',
  'AggregateGroup',
  'Numbers',
] as const;

/** The names of one table's part of the API. */
export interface TableNames {
  table: string;
  /** The base name T; the object type's name. */
  type: string;
  connection: string;
  edge: string;
  where: string;
  orderBy: string;
  input: string;
  patch: string;
  result: string;
  /** A search hit of the table (its searchable tables only have the field). */
  searchHit: string;
  /** The aggregate's answer type, its groups' type, and the per-property numbers' type. */
  aggregateResult: string;
  aggregateGroup: string;
  numbers: string;
  get: string;
  query: string;
  create: string;
  update: string;
  upsert: string;
  remove: string;
  createMany: string;
  upsertMany: string;
  search: string;
  aggregate: string;
  /** The key's arguments on lookups, updates and deletes, by property (the row field's name, or with `_` when it is `at` or `set`). */
  keyArgs: Record<string, string>;
  /** Enum type names by property. */
  enums: Record<string, { type: string; filter: string }>;
  /** Field names of the row type: properties by property name, and the generated fields. */
  fields: {
    props: Record<string, string>;
    key: string;
    /** Node types: traversals by edge table, per direction. */
    out: Record<string, string>;
    in: Record<string, string>;
    /** Edge types: the endpoints and their keys. */
    from?: string;
    to?: string;
    fromKey?: string;
    toKey?: string;
  };
}

const upperFirst = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
const lowerFirst = (s: string): string => s.charAt(0).toLowerCase() + s.slice(1);

/** Root field names a base takes; in the family so that `createManyPerson` of `Person` and `createManyPerson` of `ManyPerson` cannot meet. */
const ROOT_PREFIXES = ['get', 'query', 'create', 'update', 'upsert', 'delete', 'createMany', 'upsertMany', 'search', 'aggregate'] as const;

/** Arguments a lookup or an update takes besides the key's. */
const FIXED_ARGS = new Set(['at', 'set']);

function keyArgsOf(t: TableType, f: TableNames['fields']): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of keyProps(t)) {
    let name = (k === 'from' && t.kind === 'edge' ? f.fromKey : k === 'to' && t.kind === 'edge' ? f.toKey : f.props[k]) as string;
    while (FIXED_ARGS.has(name)) name = `${name}_`;
    out[k] = name;
  }
  return out;
}

function family(base: string, t: TableType): string[] {
  const roots = ROOT_PREFIXES.map((p) => `${p}${base}`);
  const enums = Object.values(enumTypeNames(base, t)).flatMap((e) => [e.type, e.filter]);
  return [...FAMILY_SUFFIXES.map((s) => `${base}${s}`), ...roots, ...enums];
}

/**
 * The enum type and filter names of a table's enum properties: `<base><Prop>` and
 * `<base><Prop>Filter`, with trailing underscores where two properties would meet (`t` and `T`)
 * or one would meet the table's own types (a property named `connection`).
 */
function enumTypeNames(base: string, t: TableType): Record<string, { type: string; filter: string }> {
  const own = new Set(FAMILY_SUFFIXES.map((s) => `${base}${s}`));
  const out: Record<string, { type: string; filter: string }> = {};
  for (const p of t.props) {
    if (p.type.kind !== 'enum') continue;
    let type = `${base}${upperFirst(p.name)}`;
    while (own.has(type) || own.has(`${type}Filter`)) type = `${type}_`;
    own.add(type).add(`${type}Filter`);
    out[p.name] = { type, filter: `${type}Filter` };
  }
  return out;
}

/** A generated field's name: `want`, or with trailing underscores until no property has it. */
function freeField(want: string, taken: Set<string>): string {
  let n = want;
  while (taken.has(n)) n = `${n}_`;
  taken.add(n);
  return n;
}

/**
 * The value name GraphQL shows for a stored enum value. Two kinds of value cannot be shown as they
 * are, and each is escaped so that no two values ever show as one:
 * - GraphQL's words `true`, `false` and `null` take a trailing underscore, and so does any of
 *   them already followed by underscores (`true` shows as `true_`, `true_` as `true__`);
 * - a name that begins with `__` is GraphQL's own, so it takes a leading `E`, and so does any
 *   value of `E`s followed by `__` (`__a` shows as `E__a`, `E__a` as `EE__a`).
 */
export function enumValueName(value: string): string {
  if (/^(true|false|null)_*$/.test(value)) return `${value}_`;
  return /^E*__/.test(value) ? `E${value}` : value;
}

/** Every table's names under the rules above, by table name. */
export function typedNames(schema: Schema): Map<string, TableNames> {
  return runSteps(typedNameSteps(schema));
}

/** The same as steps, two a table (model/steps.ts): a schema may declare tens of thousands of tables. */
export function* typedNameSteps(schema: Schema): Steps<Map<string, TableNames>> {
  const taken = new Set<string>(BUILT_IN_NAMES);
  const bases = new Map<string, string>();
  for (const t of [...schema.types].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    let base = upperFirst(t.name);
    while (family(base, t).some((n) => taken.has(n))) base = `${base}_`;
    for (const n of family(base, t)) taken.add(n);
    bases.set(t.name, base);
    yield;
  }
  // Each node's edge tables, in schema order, found once: a node looking through every table for
  // its edges made 1,500 tables cost 2.3 million comparisons.
  const edgesOf = new Map<string, EdgeType[]>();
  for (const e of schema.types) {
    if (e.kind !== 'edge') continue;
    for (const node of new Set([e.from, e.to])) {
      const list = edgesOf.get(node);
      if (list === undefined) edgesOf.set(node, [e]);
      else list.push(e);
    }
  }
  const out = new Map<string, TableNames>();
  for (const t of schema.types) {
    yield;
    const T = bases.get(t.name) as string;
    // Edge properties never take `from` or `to` (the schema language keeps them for the endpoints).
    const fieldsTaken = new Set<string>(t.props.map((p) => p.name));
    const props = Object.fromEntries(t.props.map((p) => [p.name, p.name]));
    const fields: TableNames['fields'] = { props, key: freeField('key', fieldsTaken), out: {}, in: {} };
    if (t.kind === 'edge') {
      fields.from = freeField('from', fieldsTaken);
      fields.to = freeField('to', fieldsTaken);
      fields.fromKey = freeField('fromKey', fieldsTaken);
      fields.toKey = freeField('toKey', fieldsTaken);
    } else {
      // Out before in per edge table, in schema order, as the names were always given.
      for (const e of edgesOf.get(t.name) ?? []) {
        const eb = lowerFirst(bases.get(e.name) as string);
        if (e.from === t.name) fields.out[e.name] = freeField(`${eb}Out`, fieldsTaken);
        if (e.to === t.name) fields.in[e.name] = freeField(`${eb}In`, fieldsTaken);
      }
    }
    const enums = enumTypeNames(T, t);
    out.set(t.name, {
      table: t.name,
      type: T,
      connection: `${T}Connection`,
      edge: `${T}Edge`,
      where: `${T}Where`,
      orderBy: `${T}OrderBy`,
      input: `${T}Input`,
      patch: `${T}Patch`,
      result: `${T}Result`,
      searchHit: `${T}SearchHit`,
      aggregateResult: `${T}Aggregate`,
      aggregateGroup: `${T}AggregateGroup`,
      numbers: `${T}Numbers`,
      get: `get${T}`,
      query: `query${T}`,
      create: `create${T}`,
      update: `update${T}`,
      upsert: `upsert${T}`,
      remove: `delete${T}`,
      createMany: `createMany${T}`,
      upsertMany: `upsertMany${T}`,
      search: `search${T}`,
      aggregate: `aggregate${T}`,
      keyArgs: keyArgsOf(t, fields),
      enums,
      fields,
    });
  }
  return out;
}
