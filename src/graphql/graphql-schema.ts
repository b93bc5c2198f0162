/**
 * The GraphQL API: the SDL in `schema/branchgraph.graphql` (generated from the operation table) with resolvers
 * that validate arguments, check the caller's role and call the service.
 * Errors leave as GraphQL errors whose `extensions.code` is the stable code.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { GraphQLError, GraphQLScalarType, Kind, parse, type ValueNode } from 'graphql';
import { createSchema } from 'graphql-yoga';
import { requireRole, type Role } from '../service/auth.js';
import type { BranchgraphService } from '../service/service.js';
import type { RequestContext } from '../service/request-context.js';
import { invoke } from '../service/api.js';
import { OPERATION_LIST } from '../service/operation-table.js';
import { packageRoot } from '../service/package-root.js';
import { toGraphqlError } from './graphql-errors.js';
import { eventSubscription } from './event-subscription.js';

export const SDL_PATH = path.join(packageRoot(), 'schema', 'branchgraph.graphql');

export interface GraphqlContext {
  service: BranchgraphService;
  role: Role;
  request: Request;
  requestCtx: RequestContext;
}

function literal(ast: ValueNode): unknown {
  switch (ast.kind) {
    case Kind.STRING:
    case Kind.BOOLEAN:
      return ast.value;
    case Kind.INT:
    case Kind.FLOAT:
      return Number(ast.value);
    case Kind.NULL:
      return null;
    case Kind.LIST:
      return ast.values.map(literal);
    case Kind.OBJECT:
      return Object.fromEntries(ast.fields.map((f) => [f.name.value, literal(f.value)]));
    default:
      throw new GraphQLError('JSON literals cannot use variables inside', { extensions: { code: 'invalid_input' } });
  }
}

const JSONScalar = new GraphQLScalarType({
  name: 'JSON',
  description: 'Any JSON value: row properties, filters, conflict values.',
  serialize: (v) => v,
  parseValue: (v) => v,
  parseLiteral: literal,
});

type Resolver = (parent: unknown, args: Record<string, unknown>, ctx: GraphqlContext) => Promise<unknown>;

/** Role check, then the call, with every failure mapped to a typed GraphQL error. */
function op(role: Role, fn: Resolver): Resolver {
  return async (parent, args, ctx) => {
    try {
      requireRole(ctx.role, role);
      return await fn(parent, args, ctx);
    } catch (e) {
      throw toGraphqlError(e, ctx.requestCtx);
    }
  };
}

/**
 * Every GraphQL field the table names, resolved by its operation: the field's arguments, with an
 * `input` argument spread in, are the operation's input (explicit nulls read as absent), checked
 * by the same contract REST applies; the value is the operation's result, shaped as the field says.
 */
function operationResolvers(): { Query: Record<string, Resolver>; Mutation: Record<string, Resolver> } {
  const out = { Query: {} as Record<string, Resolver>, Mutation: {} as Record<string, Resolver> };
  for (const o of OPERATION_LIST) {
    for (const g of o.graphql ?? []) {
      out[g.type][g.field] = op(o.role, async (_p, args, c) => {
        const { input, ...rest } = args;
        const value = await invoke(o, c.service, { input: stripNulls({ ...(input as object | undefined), ...rest }), ctx: c.requestCtx });
        if (g.pick !== undefined) return (value as Record<string, unknown>)[g.pick];
        return g.result === undefined ? value : g.result(value);
      });
    }
  }
  return out;
}

let built: ReturnType<typeof buildSchema> | undefined;

/**
 * The admin API's schema, built once per process: it is the same for every graph (resolvers take
 * the graph's service from the context), and building it costs ~15 ms, which each hosted graph's
 * first GraphQL request paid again.
 */
export function graphqlSchema(): ReturnType<typeof buildSchema> {
  built ??= buildSchema();
  return built;
}

function buildSchema() {
  const typeDefs = readFileSync(SDL_PATH, 'utf8');
  // A union's value names its own type: the operation's GraphQL result sets `__typename`.
  const unions = parse(typeDefs)
    .definitions.filter((d) => d.kind === Kind.UNION_TYPE_DEFINITION)
    .map((d) => [d.name.value, { __resolveType: (obj: { __typename: string }) => obj.__typename }]);
  return createSchema<GraphqlContext>({
    typeDefs,
    resolvers: {
      JSON: JSONScalar,
      ...Object.fromEntries(unions),
      ...operationResolvers(),
      Subscription: eventSubscription,
    },
  });
}

/** GraphQL inputs carry explicit nulls for omitted optionals; the contracts expect absence. */
/** Arguments whose values are data, where null means something (a resolution's value deletes a row). */
const DATA_ARGS = new Set(['values', 'migration', 'value', 'expected']);

function stripNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stripNulls);
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([k, x]) => x !== undefined && (x !== null || DATA_ARGS.has(k)))
        .map(([k, x]) => [k, DATA_ARGS.has(k) ? x : stripNulls(x)]),
    );
  }
  return v;
}
