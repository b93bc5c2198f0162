/**
 * The typed walk fields of a branch's API: `neighborhood`, `paths` and
 * `shortestPath`. They run the walk operations; the nodes and edges they
 * answer are the tables' own object types, through the unions `WalkNode`
 * (every node table) and `WalkEdge` (every edge table), so a document
 * selects each table's fields with `... on Person { name }` and can walk on
 * from there.
 */
import {
  GraphQLBoolean,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  GraphQLUnionType,
  type GraphQLFieldConfigMap,
} from 'graphql';
import type { Schema } from '../model/schema.js';
import type { Row } from '../model/values.js';
import { invoke } from '../service/api.js';
import { OPERATIONS } from '../service/operation-table.js';
import { guarded, type ResolverCall, type TypedContext } from './typed-context.js';
import type { TableNames } from './typed-names.js';
import { givenArgs } from './typed-inputs.js';
import type { Entity } from './typed-reads.js';

const nonNullList = <T extends GraphQLObjectType | GraphQLUnionType>(t: T) => new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(t)));

interface WalkArgs {
  from: { table: string; key: string };
  to?: { table: string; key: string };
  hops?: number | null;
  maxHops?: number | null;
  first?: number | null;
  via?: string[] | null;
  direction?: 'out' | 'in' | 'both' | null;
  at?: string | null;
}

type Answered = { table: string; key: string; row: Record<string, unknown> };

const entity = (x: Answered, at: string): Entity => ({ table: x.table, key: x.key, row: x.row as Row, at, level: 1 });

/** The walk fields, when the schema has node tables (a union needs a member). */
export function walkFields(c: {
  schema: Schema;
  names: Map<string, TableNames>;
  objects: Map<string, GraphQLObjectType>;
}): GraphQLFieldConfigMap<unknown, TypedContext> {
  const member = (kind: 'node' | 'edge') =>
    c.schema.types.filter((t) => t.kind === kind).map((t) => c.objects.get(t.name) as GraphQLObjectType);
  const nodes = member('node');
  if (nodes.length === 0) return {};
  const typeOf = (e: Entity): string => (c.names.get(e.table) as TableNames).type;
  const node = new GraphQLUnionType({ name: 'WalkNode', description: 'A node of any node table.', types: nodes, resolveType: typeOf });
  const edges = member('edge');
  const edge =
    edges.length === 0
      ? undefined
      : new GraphQLUnionType({ name: 'WalkEdge', description: 'An edge of any edge table.', types: edges, resolveType: typeOf });
  const nodeRef = new GraphQLInputObjectType({
    name: 'WalkNodeRef',
    description: 'A node: its table and its key.',
    fields: { table: { type: new GraphQLNonNull(GraphQLString) }, key: { type: new GraphQLNonNull(GraphQLString) } },
  });
  const direction = new GraphQLEnumType({ name: 'WalkDirection', values: { out: {}, in: {}, both: {} } });
  const path = new GraphQLObjectType({
    name: 'WalkPath',
    fields: { nodes: { type: nonNullList(node) }, ...(edge !== undefined ? { edges: { type: nonNullList(edge) } } : {}) },
  });
  const common = {
    via: { type: new GraphQLList(new GraphQLNonNull(GraphQLString)), description: 'Edge tables the walk may take (all by default).' },
    direction: { type: direction },
    at: { type: GraphQLString, description: 'The ref to walk: a branch, commit:<id> or tag:<name> (default: this branch).' },
  };
  const args = (a: WalkArgs, ctx: TypedContext) => ({ ...givenArgs({ ...a, at: undefined }), at: a.at ?? ctx.branch });
  const asPath = (p: { nodes: Answered[]; edges: Answered[] }, at: string) => ({
    nodes: p.nodes.map((n) => entity(n, at)),
    edges: p.edges.map((e) => entity(e, at)),
  });
  return {
    neighborhood: {
      type: new GraphQLNonNull(
        new GraphQLObjectType({
          name: 'Neighborhood',
          fields: {
            nodes: {
              type: nonNullList(
                new GraphQLObjectType({
                  name: 'NeighborhoodNode',
                  fields: { depth: { type: new GraphQLNonNull(GraphQLInt) }, node: { type: new GraphQLNonNull(node) } },
                }),
              ),
            },
            ...(edge !== undefined ? { edges: { type: nonNullList(edge) } } : {}),
            truncated: { type: new GraphQLNonNull(GraphQLBoolean) },
          },
        }),
      ),
      description: 'The nodes within some hops (1 to 6) of a node, each at its least depth, and the edges the walk took.',
      args: {
        from: { type: new GraphQLNonNull(nodeRef) },
        hops: { type: GraphQLInt },
        first: { type: GraphQLInt, description: 'Most nodes (default 100).' },
        ...common,
      },
      resolve: guarded('read', async ({ args: a, ctx }: ResolverCall<unknown, WalkArgs>) => {
        const input = args(a, ctx);
        const r = await invoke(OPERATIONS.neighborhood, ctx.service, { input, ctx: ctx.requestCtx });
        return {
          nodes: r.nodes.map((n) => ({ depth: n.depth, node: entity(n, input.at) })),
          edges: r.edges.map((e) => entity(e, input.at)),
          truncated: r.truncated,
        };
      }),
    },
    shortestPath: {
      type: path,
      description: 'The shortest path from one node to another (at most maxHops, default 6), or null.',
      args: {
        from: { type: new GraphQLNonNull(nodeRef) },
        to: { type: new GraphQLNonNull(nodeRef) },
        maxHops: { type: GraphQLInt },
        ...common,
      },
      resolve: guarded('read', async ({ args: a, ctx }: ResolverCall<unknown, WalkArgs>) => {
        const input = args(a, ctx);
        const r = await invoke(OPERATIONS.shortestPath, ctx.service, { input, ctx: ctx.requestCtx });
        return r.path === null ? null : asPath(r.path, input.at);
      }),
    },
    paths: {
      type: nonNullList(path),
      description: 'Every simple path from one node to another up to maxHops (default 3, at most 6), shortest first.',
      args: {
        from: { type: new GraphQLNonNull(nodeRef) },
        to: { type: new GraphQLNonNull(nodeRef) },
        maxHops: { type: GraphQLInt },
        first: { type: GraphQLInt },
        ...common,
      },
      resolve: guarded('read', async ({ args: a, ctx }: ResolverCall<unknown, WalkArgs>) => {
        const input = args(a, ctx);
        const r = await invoke(OPERATIONS.paths, ctx.service, { input, ctx: ctx.requestCtx });
        return r.paths.map((p) => asPath(p, input.at));
      }),
    },
  };
}
