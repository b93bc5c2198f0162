/**
 * The GraphQL endpoint: Yoga over the API schema, with the document limits, masked errors, the
 * pino logger and GraphiQL (offline, loaded when first opened). The HTTP app loads this file on
 * the first GraphQL request, so a process pays for Yoga only once it serves GraphQL.
 */
import { createYoga, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { closedSetErrorCodes, costLimit, depthAndAliasLimit, nestingLimit } from '../graphql/limits.js';
import { graphqlSchema, type GraphqlContext } from '../graphql/graphql-schema.js';
import type { Role } from '../service/auth.js';
import { LIMITS } from '../service/inputs.js';
import type { BranchgraphService, RequestContext } from '../service/service.js';

/** What GraphiQL opens with: something that runs on any graph and shows its shape. */
export const GRAPHIQL_DEFAULT_QUERY = `# Run with the play button or Ctrl-Enter.
query Branches {
  branches(limit: 100) {
    items {
      name
      head { id kind message time }
    }
    nextCursor
  }
}
`;

/** Yoga's own log lines, through the request logger. */
export function yogaLogging(logger: Logger) {
  return {
    debug: (...a: unknown[]) => logger.debug({ yoga: a }, 'graphql'),
    info: (...a: unknown[]) => logger.info({ yoga: a }, 'graphql'),
    warn: (...a: unknown[]) => logger.warn({ yoga: a }, 'graphql'),
    error: (...a: unknown[]) => logger.error({ yoga: a }, 'graphql'),
  };
}

export type GraphqlEndpoint = YogaServerInstance<{ requestCtx: RequestContext; role: Role }, GraphqlContext>;

export function graphqlEndpoint(opts: { service: BranchgraphService; logger: Logger; base: string }): GraphqlEndpoint {
  const { service, logger, base } = opts;
  return createYoga<{ requestCtx: RequestContext; role: Role }, GraphqlContext>({
    schema: graphqlSchema(),
    graphqlEndpoint: `${base}/graphql`,
    logging: yogaLogging(logger),
    maskedErrors: true,
    // GraphiQL with its scripts, styles and editor workers inlined, so the page works with no internet.
    // The module is ~9 MB of JavaScript: loaded when someone first opens the page, not by every process.
    renderGraphiQL: async (o) => (await import('@graphql-yoga/render-graphiql')).renderGraphiQL(o),
    graphiql: { title: 'branchgraph GraphiQL', defaultQuery: GRAPHIQL_DEFAULT_QUERY },
    plugins: [
      nestingLimit(LIMITS.maxGraphqlNesting) as Plugin,
      costLimit(LIMITS.maxGraphqlCost, LIMITS.maxPage) as Plugin,
      depthAndAliasLimit(LIMITS.maxGraphqlDepth, LIMITS.maxGraphqlAliases) as Plugin,
      closedSetErrorCodes((code) => service.metrics.recordGraphqlError(code)) as Plugin,
    ],
    context: ({ requestCtx, role: r, request }) => ({ service, role: r, request, requestCtx }),
  });
}
