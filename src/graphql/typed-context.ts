/**
 * What the typed API's resolvers share: the request's context, the generated
 * schema's name maps, the role guard, typed key arguments, and the
 * directives (`@explain`, `@commit`).
 */
import { DirectiveLocation, GraphQLDirective, GraphQLString, type GraphQLResolveInfo, type GraphQLSchema } from 'graphql';
import { requireRole, type Role } from '../service/auth.js';
import type { BranchgraphService } from '../service/service.js';
import type { RequestContext } from '../service/request-context.js';
import type { TableType } from '../model/schema.js';
import { entityKey, type Row } from '../model/values.js';
import { toGraphqlError } from './graphql-errors.js';
import type { TableNames } from './typed-names.js';
import type { FieldMap } from './typed-inputs.js';
import type { TypedReads } from './typed-reads.js';

/** What every typed resolver runs with: the service, the caller's role, the endpoint's branch and the request's reads. */
export interface TypedContext {
  service: BranchgraphService;
  role: Role;
  requestCtx: RequestContext;
  /** The branch the endpoint serves: reads default to its head, mutations write to it. */
  branch: string;
  reads: TypedReads;
  mutations: { answer(info: GraphQLResolveInfo): Promise<unknown> };
}

/** A generated schema with what its resolvers need to map names back. */
export interface TypedSchema {
  schema: GraphQLSchema;
  names: Map<string, TableNames>;
  fieldMaps: Map<string, FieldMap>;
  rowFields: Map<string, Map<string, string>>;
  types: Map<string, TableType>;
}

/** What a typed resolver is handed, as one object. */
export interface ResolverCall<S, A> {
  source: S;
  args: A;
  ctx: TypedContext;
  info: GraphQLResolveInfo;
}

/**
 * Resolvers check the role, then run; any failure leaves as a typed GraphQL error. An answer
 * already at hand (a planned read) is returned as it is, not wrapped in a promise: graphql-js
 * walks synchronous answers without a microtask per field.
 */
export function guarded<S, A>(
  role: Role,
  fn: (call: ResolverCall<S, A>) => unknown,
): (source: S, args: A, ctx: TypedContext, info: GraphQLResolveInfo) => unknown {
  // biome-ignore lint/complexity/useMaxParams: GraphQL's resolver signature.
  return (source, args, ctx, info) => {
    try {
      requireRole(ctx.role, role);
      const out = fn({ source, args, ctx, info });
      return out instanceof Promise ? out.catch((e: unknown) => failed(e, ctx, info)) : out;
    } catch (e) {
      return failed(e, ctx, info);
    }
  };
}

/** A resolver's failure as a GraphQL error located at its field, whichever executor runs it. */
function failed(e: unknown, ctx: TypedContext, info: GraphQLResolveInfo): never {
  throw toGraphqlError(e, ctx.requestCtx, info.fieldNodes);
}

/** The key of an entity from typed key arguments (see `TableNames.keyArgs`). */
export function keyFromArgs(args: Record<string, unknown>, c: { t: TableType; n: TableNames }): string {
  const row: Row = {};
  for (const [prop, arg] of Object.entries(c.n.keyArgs)) row[prop] = (args[arg] ?? null) as Row[string];
  return entityKey(c.t, row);
}

/** `@explain`: report the cost of each level. */
export const EXPLAIN_DIRECTIVE = new GraphQLDirective({
  name: 'explain',
  description: 'Report the store calls, rows read and batches of each level in extensions.explain.',
  locations: [DirectiveLocation.QUERY, DirectiveLocation.MUTATION],
});

/** `@commit`: the message, author and expected head of a mutation's one commit. */
export const COMMIT_DIRECTIVE = new GraphQLDirective({
  name: 'commit',
  description: "The commit a mutation's writes land as: its message and author, and the head it expects the branch to have.",
  locations: [DirectiveLocation.MUTATION],
  args: { message: { type: GraphQLString }, author: { type: GraphQLString }, expectedHead: { type: GraphQLString } },
});

export const TYPED_DIRECTIVES = [EXPLAIN_DIRECTIVE, COMMIT_DIRECTIVE];
