/**
 * The typed API's scalars and input types: a comparison filter per value
 * type, a `where` and an `orderBy` per table, the row inputs of mutations,
 * and the conversions from what GraphQL hands a resolver to what the
 * operations take (field names back to property names, `key` to `_key`,
 * `from` / `to` to endpoint filters).
 *
 * Scalars: `SafeInt` (graphql-scalars) carries int properties, which are
 * stored within ±2^53: GraphQL's own Int is 32-bit, and a wider value is
 * refused rather than rounded. `Date` is graphql-scalars' LocalDate under
 * our name (a calendar date as text). `DateTime` is ours: graphql-scalars'
 * DateTime parses to a JavaScript Date and would drop the microseconds a
 * stored datetime keeps, so ours normalizes text to the stored UTC form.
 */
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLError,
  GraphQLFloat,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  GraphQLScalarType,
  GraphQLString,
  Kind,
  type GraphQLInputFieldConfigMap,
  type GraphQLInputType,
} from 'graphql';
import { GraphQLJSON, GraphQLLocalDate, GraphQLSafeInt } from 'graphql-scalars';
import { BranchgraphError } from '../model/errors.js';
import { KEY_FIELD, type OrderTerm } from '../model/row-filter.js';
import { keyProps, type PropDef, type Schema, type TableType } from '../model/schema.js';
import { normalizeDatetime } from '../model/values.js';
import { enumValueName, type TableNames } from './typed-names.js';

export const SafeInt = GraphQLSafeInt;
export const JSONType = GraphQLJSON;
export const DateType = new GraphQLScalarType({
  ...GraphQLLocalDate.toConfig(),
  name: 'Date',
  description: 'A calendar date, YYYY-MM-DD.',
});

function vector(v: unknown): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) throw new GraphQLError('Vector must be a list of numbers');
  return v as number[];
}

export const VectorType = new GraphQLScalarType({
  name: 'Vector',
  description: 'A vector property: a list of float32 numbers of the length the schema declares.',
  serialize: (v) => v,
  parseValue: vector,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.LIST) throw new GraphQLError('Vector must be a list of numbers');
    return vector(ast.values.map((x) => (x.kind === Kind.FLOAT || x.kind === Kind.INT ? Number(x.value) : null)));
  },
});

function datetime(v: unknown): string {
  if (typeof v !== 'string') throw new GraphQLError('DateTime must be an ISO 8601 date-time string');
  const r = normalizeDatetime(v);
  if ('error' in r) throw new GraphQLError(`DateTime ${r.error}`);
  return r.value;
}

export const DateTimeType = new GraphQLScalarType({
  name: 'DateTime',
  description: 'An instant as ISO 8601 text, kept to the microsecond; returned in UTC as YYYY-MM-DDTHH:MM:SS.ffffffZ.',
  serialize: (v) => v,
  parseValue: datetime,
  parseLiteral: (ast) => {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string');
    return datetime(ast.value);
  },
});

/** Arguments as an operation takes them: GraphQL gives an unset argument as null or leaves it out, an operation takes it left out. */
export function givenArgs<T extends Record<string, unknown>>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

export const SortDirection = new GraphQLEnumType({
  name: 'SortDirection',
  values: { ASC: { value: 'asc' }, DESC: { value: 'desc' } },
});

/** The GraphQL type of a stored property's values (enums are built per property). */
export function scalarOf(p: PropDef, enums: Map<string, GraphQLEnumType>, owner: string): GraphQLInputType & GraphQLScalarType {
  switch (p.type.kind) {
    case 'string':
      return GraphQLString;
    case 'int':
      return SafeInt;
    case 'float':
      return GraphQLFloat;
    case 'bool':
      return GraphQLBoolean;
    case 'date':
      return DateType;
    case 'datetime':
      return DateTimeType;
    case 'json':
      return JSONType;
    case 'vector':
      return VectorType;
    case 'enum':
      return enums.get(`${owner}.${p.name}`) as unknown as GraphQLScalarType;
  }
}

/** A property's enum type: stored values, named so GraphQL accepts them. */
export function enumType(p: PropDef, name: string): GraphQLEnumType {
  const values = p.type.kind === 'enum' ? p.type.values : [];
  return new GraphQLEnumType({ name, values: Object.fromEntries(values.map((v) => [enumValueName(v), { value: v }])) });
}

/** A comparison filter over one value type. */
export function filterType(name: string, of: GraphQLInputType, kind: FilterKind): GraphQLInputObjectType {
  const fields: GraphQLInputFieldConfigMap =
    kind === 'null'
      ? {}
      : {
          eq: { type: of },
          ne: { type: of },
          in: { type: new GraphQLList(new GraphQLNonNull(of)) },
          notIn: { type: new GraphQLList(new GraphQLNonNull(of)) },
        };
  if (kind === 'text' || kind === 'ordered') for (const op of ['lt', 'lte', 'gt', 'gte']) fields[op] = { type: of };
  if (kind === 'text') {
    fields.prefix = { type: GraphQLString };
    fields.contains = { type: GraphQLString };
  }
  fields.isNull = { type: GraphQLBoolean, description: 'Optional properties only: whether the value is unset.' };
  return new GraphQLInputObjectType({ name, fields });
}

/** What a filter on a type compares: text (with prefix and contains), an order, equality only, or only whether it is set (vectors). */
type FilterKind = 'text' | 'ordered' | 'plain' | 'null';

const FILTER_KIND: Record<string, FilterKind> = {
  string: 'text',
  int: 'ordered',
  float: 'ordered',
  date: 'ordered',
  datetime: 'ordered',
  enum: 'ordered',
  bool: 'plain',
  json: 'plain',
  vector: 'null',
};

/** The built-in comparison filters, one per scalar type. */
export function builtInFilters(): Map<string, GraphQLInputObjectType> {
  const of: [string, GraphQLInputType, string][] = [
    ['string', GraphQLString, 'StringFilter'],
    ['int', SafeInt, 'SafeIntFilter'],
    ['float', GraphQLFloat, 'FloatFilter'],
    ['bool', GraphQLBoolean, 'BooleanFilter'],
    ['date', DateType, 'DateFilter'],
    ['datetime', DateTimeType, 'DateTimeFilter'],
    ['json', JSONType, 'JSONFilter'],
    ['vector', VectorType, 'VectorFilter'],
  ];
  return new Map(of.map(([kind, t, name]) => [kind, filterType(name, t, FILTER_KIND[kind] as 'text')]));
}

export function filterKind(p: PropDef): FilterKind {
  return FILTER_KIND[p.type.kind] as 'text';
}

/** How one table's where/orderBy fields map back to what the operations take. */
export interface FieldMap {
  /** GraphQL field name → property name, `_key`, or an endpoint (`_from` / `_to` with the endpoint table). */
  where: Map<string, { to: string; end?: string }>;
  orderBy: Map<string, string>;
}

export function fieldMapOf(t: TableType, n: TableNames): FieldMap {
  const where = new Map<string, { to: string; end?: string }>();
  const orderBy = new Map<string, string>();
  for (const p of t.props) {
    where.set(n.fields.props[p.name] as string, { to: p.name });
    orderBy.set(n.fields.props[p.name] as string, p.name);
  }
  where.set(n.fields.key, { to: KEY_FIELD });
  orderBy.set(n.fields.key, KEY_FIELD);
  if (t.kind === 'edge') {
    where.set(n.fields.fromKey as string, { to: 'from' });
    where.set(n.fields.toKey as string, { to: 'to' });
    orderBy.set(n.fields.fromKey as string, 'from');
    orderBy.set(n.fields.toKey as string, 'to');
    where.set(n.fields.from as string, { to: '_from', end: t.from });
    where.set(n.fields.to as string, { to: '_to', end: t.to });
  }
  return { where, orderBy };
}

/** A typed `where` as the operations take it. */
export function engineWhere(where: unknown, table: string, maps: Map<string, FieldMap>): Record<string, unknown> {
  const m = maps.get(table) as FieldMap;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(where as Record<string, unknown>)) {
    if (v === null || v === undefined) continue;
    if (k === '_and' || k === '_or') out[k] = (v as unknown[]).map((x) => engineWhere(x, table, maps));
    else if (k === '_not') out[k] = engineWhere(v, table, maps);
    else {
      const f = m.where.get(k);
      if (f === undefined) continue;
      out[f.to] = f.end !== undefined ? engineWhere(v, f.end, maps) : dropNulls(v as Record<string, unknown>);
    }
  }
  return out;
}

/** GraphQL hands absent input fields as absent, but explicit nulls as null: a null comparison means no comparison. */
function dropNulls(v: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(v).filter(([, x]) => x !== null && x !== undefined));
}

/** A typed `orderBy` as the operations take it: each element names exactly one field. */
export function engineOrder(orderBy: unknown, m: FieldMap): OrderTerm[] {
  return (orderBy as Record<string, unknown>[]).map((o, i) => {
    const set = Object.entries(o).filter(([, d]) => d !== null && d !== undefined);
    if (set.length !== 1)
      throw new BranchgraphError('invalid_input', `orderBy[${i}] must name exactly one field`, {
        issues: [{ path: `orderBy.${i}`, message: 'exactly one field, as {name: ASC}' }],
      });
    const [field, direction] = set[0] as [string, 'asc' | 'desc'];
    return { prop: m.orderBy.get(field) as string, direction };
  });
}

/** The where input of a table: its fields' filters, endpoint filters on edges, and `_and` / `_or` / `_not`. */
export function whereType(
  c: { t: TableType; n: TableNames; schema: Schema },
  deps: {
    filters: Map<string, GraphQLInputObjectType>;
    enumFilters: Map<string, GraphQLInputObjectType>;
    wheres: Map<string, GraphQLInputObjectType>;
  },
): GraphQLInputObjectType {
  const { t, n } = c;
  const self: GraphQLInputObjectType = new GraphQLInputObjectType({
    name: n.where,
    description: `A filter on ${t.name}: every field given must hold.`,
    fields: () => {
      const f: GraphQLInputFieldConfigMap = {};
      for (const p of t.props)
        f[n.fields.props[p.name] as string] = {
          type: (p.type.kind === 'enum'
            ? deps.enumFilters.get(`${t.name}.${p.name}`)
            : deps.filters.get(p.type.kind)) as GraphQLInputObjectType,
        };
      f[n.fields.key] = { type: deps.filters.get('string') as GraphQLInputObjectType, description: 'The entity key.' };
      if (t.kind === 'edge') {
        f[n.fields.fromKey as string] = { type: deps.filters.get('string') as GraphQLInputObjectType };
        f[n.fields.toKey as string] = { type: deps.filters.get('string') as GraphQLInputObjectType };
        f[n.fields.from as string] = {
          type: deps.wheres.get(t.from) as GraphQLInputObjectType,
          description: 'A filter on the source node.',
        };
        f[n.fields.to as string] = { type: deps.wheres.get(t.to) as GraphQLInputObjectType, description: 'A filter on the target node.' };
      }
      f._and = { type: new GraphQLList(new GraphQLNonNull(self)) };
      f._or = { type: new GraphQLList(new GraphQLNonNull(self)) };
      f._not = { type: self };
      return f;
    },
  });
  return self;
}

/** The order input of a table: one field per property (and the key), each a direction. */
export function orderByType(t: TableType, n: TableNames): GraphQLInputObjectType {
  const names = [...t.props.map((p) => n.fields.props[p.name] as string), n.fields.key];
  if (t.kind === 'edge') names.push(n.fields.fromKey as string, n.fields.toKey as string);
  return new GraphQLInputObjectType({
    name: n.orderBy,
    description: `One field of ${t.name} to order by, as {field: ASC}; the key breaks ties.`,
    fields: Object.fromEntries(names.map((f) => [f, { type: SortDirection }])),
  });
}

/** GraphQL field name → property name, for the row inputs of mutations (edge endpoints are fromKey/toKey). */
export function rowFieldNames(t: TableType, n: TableNames): Map<string, string> {
  const m = new Map<string, string>(t.props.map((p) => [n.fields.props[p.name] as string, p.name]));
  if (t.kind === 'edge') {
    m.set(n.fields.fromKey as string, 'from');
    m.set(n.fields.toKey as string, 'to');
  }
  return m;
}

/** The input fields of a full row (create, upsert) or of a patch (update: no key, everything optional), or the key's arguments. */
export function rowInputFields(
  c: { t: TableType; n: TableNames; enums: Map<string, GraphQLEnumType> },
  mode: 'full' | 'patch' | 'key',
): GraphQLInputFieldConfigMap {
  const { t, n } = c;
  const keys = new Set(keyProps(t));
  const f: GraphQLInputFieldConfigMap = {};
  const name = (prop: string, field: string): string => (mode === 'key' ? (n.keyArgs[prop] as string) : field);
  if (t.kind === 'edge' && mode !== 'patch') {
    f[name('from', n.fields.fromKey as string)] = { type: new GraphQLNonNull(GraphQLString) };
    f[name('to', n.fields.toKey as string)] = { type: new GraphQLNonNull(GraphQLString) };
  }
  for (const p of t.props) {
    const isKey = keys.has(p.name);
    if ((mode === 'patch' && isKey) || (mode === 'key' && !isKey)) continue;
    const type = scalarOf(p, c.enums, t.name);
    f[name(p.name, n.fields.props[p.name] as string)] = { type: mode !== 'patch' && !p.optional ? new GraphQLNonNull(type) : type };
  }
  return f;
}
