/**
 * The typed GraphQL schema generated from a graph schema: an object type per
 * table with a field per property, typed by the property's type; traversal
 * fields along every edge table, out and in, each a connection with a
 * filter (on the edge and, through `from` / `to`, on the far node), an order
 * and a page; per table a by-key lookup and a connection with `where`,
 * `orderBy`, `first` / `after` and `totalCount`; per table an aggregate
 * (typed-aggregate.ts) and, where it has `@search` or vector properties, a
 * search (typed-search.ts); the walks over every edge table
 * (typed-walks.ts); typed mutations (create, update, upsert, delete) that
 * land together as one commit (typed-mutations.ts). Names follow
 * typed-names.ts.
 *
 * Resolvers stay thin: every read is a batched operation through the
 * request's `TypedReads`, every write one `write` operation. Generated once
 * per schema content hash and kept in a small cache (typed-schema-cache.ts).
 */
import {
  GraphQLBoolean,
  type GraphQLEnumType,
  type GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  specifiedDirectives,
  type GraphQLFieldConfig,
  type GraphQLFieldConfigArgumentMap,
  type GraphQLFieldConfigMap,
} from 'graphql';
import { keyProps, type Schema, type TableType } from '../model/schema.js';
import { guarded, keyFromArgs, TYPED_DIRECTIVES, type ResolverCall, type TypedContext, type TypedSchema } from './typed-context.js';
import { typedNameSteps, type TableNames } from './typed-names.js';
import {
  builtInFilters,
  enumType,
  fieldMapOf,
  filterKind,
  filterType,
  orderByType,
  rowFieldNames,
  rowInputFields,
  scalarOf,
  whereType,
} from './typed-inputs.js';
import type { Entity, EntityPage } from './typed-reads.js';
import {
  DEFAULT_FIRST,
  documentOf,
  pageArgs,
  planBelowEntity,
  planBelowPage,
  READ_FIELD,
  type PageFieldArgs,
  type ReadField,
} from './typed-plan.js';
import { mutationFields } from './typed-mutations.js';
import { searchField, searchTypes } from './typed-search.js';
import { aggregateField } from './typed-aggregate.js';
import { walkFields } from './typed-walks.js';
import { runSteps, type Steps } from '../model/steps.js';
import { runStepsInSlices } from '../model/turns.js';
import { assembleSchema } from './schema-assembly.js';

function pageArgsConfig(wheres: Map<string, GraphQLInputObjectType>, orders: Map<string, GraphQLInputObjectType>, table: string) {
  return {
    where: { type: wheres.get(table) as GraphQLInputObjectType },
    orderBy: { type: new GraphQLList(new GraphQLNonNull(orders.get(table) as GraphQLInputObjectType)) },
    first: { type: GraphQLInt, description: `Page size, 0 to 1000 (default ${DEFAULT_FIRST}).` },
    after: { type: GraphQLString, description: "An edge's cursor from a previous page of this same field." },
  } satisfies GraphQLFieldConfigArgumentMap;
}

/** Shared output types: the page info and a commit. */
function sharedTypes() {
  // Resolved from the page itself: a cursor is made only when a document selects it.
  const pageInfo = new GraphQLObjectType<EntityPage>({
    name: 'PageInfo',
    fields: {
      hasNextPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      hasPreviousPage: { type: new GraphQLNonNull(GraphQLBoolean) },
      startCursor: { type: GraphQLString, resolve: (p) => p.items[0]?.cursor ?? null },
      endCursor: { type: GraphQLString, resolve: (p) => p.items[p.items.length - 1]?.cursor ?? null },
    },
  });
  const text = { type: new GraphQLNonNull(GraphQLString) };
  const commit = new GraphQLObjectType({
    name: 'Commit',
    description: 'A published commit.',
    fields: {
      ...Object.fromEntries(['id', 'branch', 'kind', 'actor', 'author', 'message', 'time'].map((f) => [f, text])),
      parents: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))) },
    },
  });
  return { pageInfo, commit };
}

/** The enum, filter and order types of every table, as steps: it yields after each table. */
function* tableTypes(
  schema: Schema,
  names: Map<string, TableNames>,
): Generator<undefined, { enums: Map<string, GraphQLEnumType>; wheres: Deps['wheres']; orders: Deps['orders'] }> {
  const enums = new Map<string, GraphQLEnumType>();
  const enumFilters = new Map<string, GraphQLInputObjectType>();
  for (const t of schema.types)
    for (const p of t.props) {
      if (p.type.kind !== 'enum') continue;
      const en = names.get(t.name)?.enums[p.name] as { type: string; filter: string };
      const e = enumType(p, en.type);
      enums.set(`${t.name}.${p.name}`, e);
      enumFilters.set(`${t.name}.${p.name}`, filterType(en.filter, e, filterKind(p)));
      yield;
    }
  const filters = builtInFilters();
  const wheres = new Map<string, GraphQLInputObjectType>();
  const orders = new Map<string, GraphQLInputObjectType>();
  for (const t of schema.types) {
    const n = names.get(t.name) as TableNames;
    wheres.set(t.name, whereType({ t, n, schema }, { filters, enumFilters, wheres }));
    orders.set(t.name, orderByType(t, n));
    yield;
  }
  return { enums, wheres, orders };
}

/** The typed schema of a graph schema, built in one go (tests, small schemas). */
export function buildTypedSchema(schema: Schema): TypedSchema {
  return runSteps(typedSchemaSteps(schema));
}

/**
 * The typed schema of a graph schema, built in slices (model/turns.ts) between turns of the event
 * loop: a schema of thousands of tables never holds a server's loop for the whole build, its
 * assembly included (schema-assembly.ts).
 */
export function buildTypedSchemaYielding(schema: Schema): Promise<TypedSchema> {
  return runStepsInSlices(typedSchemaSteps(schema));
}

/** The build as steps: it yields after each table and each type whose fields it resolved, and returns the schema. */
export function* typedSchemaSteps(schema: Schema): Steps<TypedSchema> {
  const names = yield* typedNameSteps(schema);
  const types = new Map(schema.types.map((t) => [t.name, t]));
  const fieldMaps = new Map<string, ReturnType<typeof fieldMapOf>>();
  const rowFields = new Map<string, ReturnType<typeof rowFieldNames>>();
  for (const t of schema.types) {
    fieldMaps.set(t.name, fieldMapOf(t, names.get(t.name) as TableNames));
    rowFields.set(t.name, rowFieldNames(t, names.get(t.name) as TableNames));
    yield;
  }
  const ts = { names, fieldMaps, rowFields, types } as TypedSchema;
  const { pageInfo, commit } = sharedTypes();
  const { enums, wheres, orders } = yield* tableTypes(schema, names);
  const objects = new Map<string, GraphQLObjectType>();
  const connections = new Map<string, GraphQLObjectType>();
  for (const t of schema.types) {
    const n = names.get(t.name) as TableNames;
    objects.set(t.name, objectType({ t, n, schema, ts, enums }, { objects, connections, wheres, orders }));
    connections.set(t.name, connectionType(n, objects.get(t.name) as GraphQLObjectType, pageInfo));
    yield;
  }
  const query: GraphQLFieldConfigMap<unknown, TypedContext> = {};
  const searchShared = searchTypes();
  for (const t of schema.types) {
    const n = names.get(t.name) as TableNames;
    Object.assign(query, rootReads({ t, n, ts, enums }, { objects, connections, wheres, orders }));
    const search = searchField(
      { t, n, ts, node: objects.get(t.name) as GraphQLObjectType, where: wheres.get(t.name) as GraphQLInputObjectType },
      searchShared,
    );
    if (search !== undefined) query[search.name] = search.field;
    const aggregate = aggregateField({ t, n, ts, where: wheres.get(t.name) as GraphQLInputObjectType });
    query[aggregate.name] = aggregate.field;
    yield;
  }
  Object.assign(query, walkFields({ schema, names, objects }));
  if (schema.types.length === 0)
    query.tables = {
      type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(GraphQLString))),
      description: 'This branch has no tables yet.',
      resolve: () => [],
    };
  const mutation = yield* mutationFields({ schema, ts, enums, objects, commit });
  const roots = {
    query: new GraphQLObjectType({ name: 'Query', fields: query }),
    ...(Object.keys(mutation).length > 0 ? { mutation: new GraphQLObjectType({ name: 'Mutation', fields: mutation }) } : {}),
  };
  yield 'turn';
  // Valid by construction, not checked per build: graph names are identifiers that start with a
  // letter, typed-names.ts keeps every generated name apart from the others and from the built-in
  // ones, and enum values are escaped. graphql-js's validation of 1,500 tables held the loop up to
  // 100 ms in one call; test/typed-schema-validity.test.ts validates generated schemas instead.
  // Its constructor's walk over every type held it 55-90 ms: the schema is assembled a type a step.
  ts.schema = yield* assembleSchema({ ...roots, directives: [...specifiedDirectives, ...TYPED_DIRECTIVES] });
  return ts;
}

type Deps = {
  objects: Map<string, GraphQLObjectType>;
  connections: Map<string, GraphQLObjectType>;
  wheres: Map<string, GraphQLInputObjectType>;
  orders: Map<string, GraphQLInputObjectType>;
};

function connectionType(n: TableNames, node: GraphQLObjectType, pageInfo: GraphQLObjectType): GraphQLObjectType {
  const edge = new GraphQLObjectType({
    name: n.edge,
    fields: {
      // A cursor is a hash, made only for the edges a document asks it of.
      cursor: { type: new GraphQLNonNull(GraphQLString), resolve: (e: { node: { cursor: string } }) => e.node.cursor },
      node: { type: new GraphQLNonNull(node) },
    },
  });
  return new GraphQLObjectType<EntityPage>({
    name: n.connection,
    fields: {
      edges: {
        type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(edge))),
        resolve: (p) => p.items.map((i) => ({ node: i })),
      },
      nodes: { type: new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(node))), resolve: (p) => p.items },
      pageInfo: {
        type: new GraphQLNonNull(pageInfo),
        resolve: (p) => p,
      },
      totalCount: {
        type: new GraphQLNonNull(GraphQLInt),
        description: 'Entities the filter admits, over every page.',
        resolve: (p) => p.totalCount ?? 0,
      },
    },
  });
}

function objectType(
  c: { t: TableType; n: TableNames; schema: Schema; ts: TypedSchema; enums: Map<string, GraphQLEnumType> },
  d: Deps,
): GraphQLObjectType {
  const { t, n, schema, ts } = c;
  return new GraphQLObjectType<Entity, TypedContext>({
    name: n.type,
    description: `A ${t.kind} of table ${t.name}.`,
    fields: () => {
      const f: GraphQLFieldConfigMap<Entity, TypedContext> = {};
      f[n.fields.key] = { type: new GraphQLNonNull(GraphQLString), description: 'The entity key.', resolve: (e) => e.key };
      for (const p of t.props) {
        const type = scalarOf(p, c.enums, t.name);
        f[n.fields.props[p.name] as string] = { type: p.optional ? type : new GraphQLNonNull(type), resolve: (e) => e.row[p.name] ?? null };
      }
      if (t.kind === 'edge') {
        f[n.fields.fromKey as string] = { type: new GraphQLNonNull(GraphQLString), resolve: (e) => e.row.from };
        f[n.fields.toKey as string] = { type: new GraphQLNonNull(GraphQLString), resolve: (e) => e.row.to };
        for (const [end, table] of [['from', t.from] as const, ['to', t.to] as const]) {
          f[n.fields[end] as string] = {
            type: new GraphQLNonNull(d.objects.get(table) as GraphQLObjectType),
            extensions: { [READ_FIELD]: { kind: 'end', table, end } satisfies ReadField },
            resolve: guarded('read', ({ source: e, ctx }: ResolverCall<Entity, unknown>) =>
              ctx.reads.lookup({ table, at: e.at, key: e.row[end] as string, level: e.level + 1 }),
            ),
          };
        }
      }
      for (const e of schema.types) {
        if (e.kind !== 'edge') continue;
        for (const direction of ['out', 'in'] as const) {
          const field = n.fields[direction][e.name];
          if (field === undefined) continue;
          f[field] = traversalField({ edgeTable: e.name, direction, ts }, d);
        }
      }
      return f;
    },
  });
}

function traversalField(
  c: { edgeTable: string; direction: 'out' | 'in'; ts: TypedSchema },
  d: Deps,
): GraphQLFieldConfig<Entity, TypedContext> {
  const { edgeTable, direction, ts } = c;
  return {
    type: new GraphQLNonNull(d.connections.get(edgeTable) as GraphQLObjectType),
    description: `${edgeTable} edges ${direction === 'out' ? 'leaving' : 'reaching'} this node.`,
    args: pageArgsConfig(d.wheres, d.orders, edgeTable),
    extensions: { [READ_FIELD]: { kind: 'neighbors', edgeTable, direction } satisfies ReadField },
    resolve: guarded('read', ({ source: from, args, ctx, info }: ResolverCall<Entity, PageFieldArgs>) =>
      ctx.reads.neighbors({
        edgeTable,
        direction,
        from,
        page: pageArgs(args, { table: edgeTable, ts, nodes: info.fieldNodes, doc: info }),
      }),
    ),
  };
}

/** The by-key lookup and the connection of one table. */
function rootReads(
  c: { t: TableType; n: TableNames; ts: TypedSchema; enums: Map<string, GraphQLEnumType> },
  d: Deps,
): GraphQLFieldConfigMap<unknown, TypedContext> {
  const { t, n, ts } = c;
  const at = { type: GraphQLString, description: 'The ref to read: a branch, commit:<id> or tag:<name> (default: this branch).' };
  const keyArgs = rowInputFields({ t, n, enums: c.enums }, 'key');
  return {
    [n.get]: {
      type: d.objects.get(t.name) as GraphQLObjectType,
      description: `One ${t.name} by key (${keyProps(t).join(', ')}), or null.`,
      args: { ...keyArgs, at },
      resolve: guarded('read', async ({ args, ctx, info }: ResolverCall<unknown, Record<string, unknown>>) => {
        const entity = await ctx.reads.lookup({
          table: t.name,
          at: (args.at as string | undefined) ?? ctx.branch,
          key: keyFromArgs(args, { t, n }),
          level: 1,
        });
        const type = d.objects.get(t.name) as GraphQLObjectType;
        await planBelowEntity({ reads: ctx.reads, ts, doc: documentOf(info), entity, type, nodes: info.fieldNodes });
        return entity;
      }),
    },
    [n.query]: {
      type: new GraphQLNonNull(d.connections.get(t.name) as GraphQLObjectType),
      description: `${t.name} entities: filtered, ordered, a page at a time.`,
      args: { ...pageArgsConfig(d.wheres, d.orders, t.name), at },
      resolve: guarded('read', async ({ args, ctx, info }: ResolverCall<unknown, PageFieldArgs & { at?: string }>) => {
        const page = pageArgs(args, { table: t.name, ts, nodes: info.fieldNodes, doc: info });
        const got = await ctx.reads.query({ table: t.name, at: args.at ?? ctx.branch, page });
        const connection = d.connections.get(t.name) as GraphQLObjectType;
        await planBelowPage({ reads: ctx.reads, ts, doc: documentOf(info), entities: got.items, connection, nodes: info.fieldNodes });
        return got;
      }),
    },
  };
}
