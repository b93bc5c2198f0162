/**
 * The typed GraphQL endpoint of each branch, `/branches/{id}/graphql`: Yoga
 * over the schema generated from the branch head's graph schema, with the
 * same document limits, error codes and offline GraphiQL as `/graphql`.
 *
 * Each request resolves the branch head once; that snapshot's schema picks
 * the generated schema (cached by content hash), and every field that reads
 * the branch reads that same snapshot (the request's pins). The response's
 * `extensions.branchgraph` names the branch and the commit each ref read;
 * `@explain` adds the cost of each level. `runTypedGraphql` is the same
 * path without HTTP in front, for embedded callers.
 */
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import { Kind, type DocumentNode } from 'graphql';
import pino, { type Logger } from 'pino';
import { renderGraphiqlPage } from './graphiql-page.js';
import { answerGraphql, yogaLogging, yogaTransport, type ParsedBody } from './graphql-endpoint.js';
import { selectionOrder } from '../graphql/selection-order.js';
import { closedSetErrorCodes, costLimit, depthAndAliasLimit, nestingLimit } from '../graphql/limits.js';
import { EXPLAIN_DIRECTIVE, type TypedContext } from '../graphql/typed-context.js';
import { TypedReads } from '../graphql/typed-reads.js';
import { COMPILE_AFTER, jitExecution } from '../graphql/jit-execution.js';
import { slicedIntrospection } from '../graphql/sliced-introspection.js';
import { knownTypeNamesOnError } from '../graphql/known-type-names.js';
import { TypedMutations } from '../graphql/typed-mutations.js';
import { TypedSchemaCache, type ServedSchema } from '../graphql/typed-schema-cache.js';
import type { Role } from '../service/auth.js';
import { LIMITS } from '../service/limits.js';
import type { BranchgraphService } from '../service/service.js';
import { pinnedContext, type RequestContext } from '../service/request-context.js';

/** What the route hands each request: the caller, the branch, and its generated schema. */
export interface TypedServerContext extends ParsedBody {
  requestCtx: RequestContext;
  role: Role;
  branch: string;
  served: ServedSchema;
}

export type TypedEndpoint = YogaServerInstance<TypedServerContext, TypedContext>;

/** Whether the executed operation asks for `@explain`. */
function explains(document: DocumentNode, operationName: string | null | undefined): boolean {
  return document.definitions.some(
    (d) =>
      d.kind === Kind.OPERATION_DEFINITION &&
      (!operationName || d.name?.value === operationName) &&
      d.directives?.some((x) => x.name.value === EXPLAIN_DIRECTIVE.name) === true,
  );
}

/** Extensions on every typed result: the branch and the commits read, and the cost per level when explained. */
function readReport(): Plugin<TypedContext> {
  return {
    onExecute({ args }) {
      const ctx = args.contextValue as TypedContext;
      if (explains(args.document, args.operationName)) ctx.reads.explain = true;
      return {
        async onExecuteDone({ result, setResult }) {
          if (Symbol.asyncIterator in result) return;
          const report = { branch: ctx.branch, commits: await ctx.reads.commits() };
          const explain = ctx.reads.explain ? { explain: { levels: ctx.reads.cost() } } : {};
          setResult({ ...result, extensions: { ...result.extensions, branchgraph: report, ...explain } });
        },
      };
    },
  };
}

/**
 * Each request runs on the schema generated for the snapshot the route resolved. It is set when
 * the request's envelop is built, which every way into Yoga goes through (a request parsed by
 * Yoga, or parameters handed over directly); a schema factory would only run on the former.
 */
function servedSchema(): Plugin<TypedContext> {
  return {
    onEnveloped({ context, setSchema }) {
      const served = (context as Partial<TypedServerContext> | undefined)?.served;
      if (served !== undefined) setSchema(served.typed.schema);
    },
  };
}

export function typedGraphqlEndpoint(opts: {
  service: BranchgraphService;
  logger: Logger;
  base: string;
  /** Runs of a document before it is compiled (default COMPILE_AFTER; Infinity: always interpreted, as tests compare). */
  compileAfter?: number;
}): TypedEndpoint {
  const { service, logger, base, compileAfter = COMPILE_AFTER } = opts;
  const transport = yogaTransport();
  return createYoga<TypedServerContext, TypedContext>({
    maxRequestBodySize: transport.maxRequestBodySize,
    fetchAPI: transport.fetchAPI,
    graphqlEndpoint: `${base}/branches/:id/graphql`,
    logging: yogaLogging(logger),
    maskedErrors: true,
    renderGraphiQL: renderGraphiqlPage,
    // Each branch's page posts to its own endpoint and opens with a query of that branch's tables.
    graphiql: (request, ctx) => ({
      title: `branchgraph · ${ctx.branch}`,
      endpoint: new URL(request.url).pathname,
      defaultQuery: ctx.served.example,
    }),
    plugins: [
      nestingLimit(LIMITS.maxGraphqlNesting) as Plugin,
      costLimit({ max: LIMITS.maxGraphqlCost, defaultLimit: LIMITS.maxPage, maxNesting: LIMITS.maxGraphqlNesting }) as Plugin,
      selectionOrder() as Plugin,
      depthAndAliasLimit(LIMITS.maxGraphqlDepth, LIMITS.maxGraphqlAliases) as Plugin,
      closedSetErrorCodes((code) => service.metrics.recordGraphqlError(code)) as Plugin,
      servedSchema(),
      jitExecution(compileAfter),
      // After compiled execution: an introspection-only operation is answered in slices either way.
      slicedIntrospection(),
      // A generated schema has tens of thousands of types; graphql-js's rule listed them for every new document.
      knownTypeNamesOnError(),
      readReport(),
      transport.plugin,
    ],
    context: ({ requestCtx, role, branch, served }) => ({
      service,
      role,
      requestCtx,
      branch,
      reads: new TypedReads(service, requestCtx, false),
      mutations: new TypedMutations(service, requestCtx, { ts: served.typed, branch }),
    }),
  });
}

/** What one typed request needs besides its body: the service's endpoint and schemas, the caller and the branch. */
export interface TypedRequest {
  endpoint: TypedEndpoint;
  schemas: TypedSchemaCache;
  service: BranchgraphService;
  branch: string;
  role: Role;
  ctx: RequestContext;
}

/** The branch head resolved once for the request, and the generated schema of its graph schema. */
export async function servedFor(r: Omit<TypedRequest, 'endpoint' | 'role'>): Promise<{ ctx: RequestContext; served: ServedSchema }> {
  const ctx = pinnedContext(r.ctx);
  const head = await r.service.snapshot({ branch: r.branch }, ctx);
  return { ctx, served: await r.schemas.get(head.manifest.schema, head.schema) };
}

/** Run one typed request (an HTTP request to the endpoint, or one built in process). */
export async function runTypedGraphql(r: TypedRequest, request: Request, parsed: ParsedBody = {}): Promise<Response> {
  const { ctx, served } = await servedFor(r);
  const serverContext: TypedServerContext = { requestCtx: ctx, role: r.role, branch: r.branch, served, ...parsed };
  const count = (code: string) => r.service.metrics.recordGraphqlError(code);
  return answerGraphql({ yoga: r.endpoint, request, serverContext, count });
}

export { TypedSchemaCache };

/** The SDL of a branch's typed API, for callers in this process (MCP's resources), read under the caller's request. */
export function embeddedTypedSdl(service: BranchgraphService): (branch: string, ctx: RequestContext) => Promise<string> {
  const schemas = new TypedSchemaCache();
  return async (branch, ctx) => (await servedFor({ schemas, service, branch, ctx })).served.sdl();
}

/**
 * The typed endpoint in this process, for embedded callers: the same Yoga, schema and limits as
 * over HTTP, reached without a socket. Runs as an admin (the embedded API checks no roles), or as
 * the role and request a caller gives (MCP's `query` tool, for the token that called it).
 */
export function embeddedTypedGraphql(
  service: BranchgraphService,
  ctx: RequestContext,
  opts: { compileAfter?: number } = {},
): (
  branch: string,
  query: string,
  more?: { variables?: Record<string, unknown> | undefined; role?: Role; ctx?: RequestContext },
) => Promise<unknown> {
  const endpoint = typedGraphqlEndpoint({ service, logger: pino({ level: 'silent' }), base: '', ...opts });
  const schemas = new TypedSchemaCache();
  return async (branch, query, more = {}) => {
    const { variables } = more;
    const request = new Request(`http://embedded/branches/${encodeURIComponent(branch)}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
      body: JSON.stringify({ query, ...(variables !== undefined ? { variables } : {}) }),
    });
    const res = await runTypedGraphql(
      { endpoint, schemas, service, branch, role: more.role ?? 'admin', ctx: { ...(more.ctx ?? ctx) } },
      request,
    );
    return res.json();
  };
}
