/**
 * The GraphQL endpoint: Yoga over the API schema, with the document limits, masked errors, the
 * pino logger and GraphiQL (offline, loaded when first opened). The HTTP app loads this file on
 * the first GraphQL request, so a process pays for Yoga only once it serves GraphQL.
 */
import { createYoga, processRegularResult, type GraphQLParams, type Plugin, type YogaServerInstance } from 'graphql-yoga';
import type { Logger } from 'pino';
import { renderGraphiqlPage } from './graphiql-page.js';
import { SizedResponse } from './sized-response.js';
import { ByteChunks } from '../model/byte-chunks.js';
import { largeJsonInSlices } from '../model/utf8-in-slices.js';
import { selectionOrder } from '../graphql/selection-order.js';
import { closedSetErrorCodes, closeErrorCodes, costLimit, depthAndAliasLimit, nestingLimit } from '../graphql/limits.js';
import { graphqlSchema, type GraphqlContext } from '../graphql/graphql-schema.js';
import type { Role } from '../service/auth.js';
import { LIMITS } from '../service/limits.js';
import type { BranchgraphService } from '../service/service.js';
import type { RequestContext } from '../service/request-context.js';

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

/** Yoga's own log lines, through the request logger; an error among them is logged as `err`, stack and all. */
export function yogaLogging(logger: Logger) {
  // pino serializes an Error only under its error key: inside an array it would print as {}.
  const fields = (a: unknown[]) => {
    const err = a.find((x) => x instanceof Error);
    return err === undefined ? { yoga: a } : { err, yoga: a.filter((x) => x !== err) };
  };
  return {
    debug: (...a: unknown[]) => logger.debug(fields(a), 'graphql'),
    info: (...a: unknown[]) => logger.info(fields(a), 'graphql'),
    warn: (...a: unknown[]) => logger.warn(fields(a), 'graphql'),
    error: (...a: unknown[]) => logger.error(fields(a), 'graphql'),
  };
}

/** A JSON POST body the route has already read and parsed, handed to Yoga beside the request. */
export interface ParsedBody {
  graphqlBody?: object;
}

/**
 * How both endpoints take their requests from the route. The route reads a POST's body under the
 * server's body limit and budget, and parses a JSON one once (it logs the operation's name), so
 * Yoga neither limits nor reads it again: its parser returns the parsed body, which is what its
 * JSON parser would have returned. Replies are the server's own `Response`, sized where they are
 * made (sized-response.ts), which the HTTP adapter writes out directly.
 */
export function yogaTransport() {
  return {
    maxRequestBodySize: false as const,
    fetchAPI: { Response: SizedResponse },
    plugin: {
      onRequestParse({ serverContext, setRequestParser }: { serverContext: ParsedBody; setRequestParser: (p: () => object) => void }) {
        const body = serverContext.graphqlBody;
        if (body !== undefined) setRequestParser(() => body);
      },
    } as Plugin,
  };
}

/** The media types a direct answer is given in, by the request's `accept` (what Yoga would pick for each). */
const DIRECT_MEDIA_TYPES = new Map<string | null, string>([
  [null, 'application/json'],
  ['*/*', 'application/json'],
  ['application/json', 'application/json'],
  ['application/graphql-response+json', 'application/graphql-response+json'],
]);

/**
 * A request to either endpoint. A plain API call is answered from the body the route parsed:
 * Yoga's handling of the request's parameters (its checks of them and every envelop plugin: the
 * limits, masking, the read report) and its JSON result processor, with the error codes closed
 * as the plugin closes them. What that skips is Yoga's fetch adapter and request hooks (URL
 * parsing, CORS, GraphiQL, health checks), about a fifth of a small read's time, which a
 * non-browser POST of one JSON operation never needs. Anything else (a browser's request, which
 * may need CORS headers; a batch; another media type; a GET) Yoga answers whole.
 */
export async function answerGraphql<C extends ParsedBody, U extends object>(a: {
  yoga: YogaServerInstance<C, U>;
  request: Request;
  serverContext: C;
  count: (code: string) => void;
}): Promise<Response> {
  const { yoga, request, serverContext } = a;
  const body = serverContext.graphqlBody;
  const mediaType = DIRECT_MEDIA_TYPES.get(request.headers.get('accept'));
  if (body !== undefined && mediaType !== undefined && !Array.isArray(body) && !request.headers.has('origin')) {
    // Parameters Yoga refuses throw before anything runs; Yoga then answers them whole, as it would.
    const params = body as GraphQLParams;
    const result = await (async () => yoga.getResultForParams({ params, request }, serverContext))().catch(() => undefined);
    if (result !== undefined) {
      const closed = closeErrorCodes(result, a.count);
      await encodeLargeResult(closed);
      return processRegularResult(closed, yoga.fetchAPI, mediaType);
    }
  }
  return yoga.fetch(request, serverContext);
}

/**
 * A large result without errors, encoded before Yoga serializes it: its JSON text a member at a time
 * and its UTF-8 a piece at a time (model/utf8-in-slices.ts), with turns of the
 * loop between, given to Yoga as the result's `stringify`. Yoga's own is one `JSON.stringify` call
 * (a 15 MB answer holds the loop 60 ms, and as much again to encode it). The bytes are the same
 * text. A result that already has a `stringify` (sliced-introspection.ts) or that Yoga rewrites
 * before serializing (errors, HTTP extensions) is left to it.
 */
async function encodeLargeResult(result: unknown): Promise<void> {
  if (typeof result !== 'object' || result === null || Array.isArray(result)) return;
  const r = result as { errors?: unknown; extensions?: { http?: unknown }; stringify?: unknown };
  if (r.errors !== undefined || r.extensions?.http !== undefined || r.stringify !== undefined) return;
  const bytes = await largeJsonInSlices(result);
  if (bytes === undefined) return;
  // Chunks SizedResponse streams, though Yoga's type says text (anything else reads them as text).
  r.stringify = (): string => new ByteChunks([bytes]) as unknown as string;
}

export type GraphqlEndpoint = YogaServerInstance<{ requestCtx: RequestContext; role: Role } & ParsedBody, GraphqlContext>;

export function graphqlEndpoint(opts: { service: BranchgraphService; logger: Logger; base: string }): GraphqlEndpoint {
  const { service, logger, base } = opts;
  const transport = yogaTransport();
  return createYoga<{ requestCtx: RequestContext; role: Role } & ParsedBody, GraphqlContext>({
    schema: graphqlSchema(),
    maxRequestBodySize: transport.maxRequestBodySize,
    fetchAPI: transport.fetchAPI,
    graphqlEndpoint: `${base}/graphql`,
    logging: yogaLogging(logger),
    maskedErrors: true,
    // GraphiQL served by this server alone (graphiql-page.ts), so the page works with no internet.
    renderGraphiQL: renderGraphiqlPage,
    graphiql: (request) => ({
      title: 'branchgraph GraphiQL',
      endpoint: new URL(request.url).pathname,
      defaultQuery: GRAPHIQL_DEFAULT_QUERY,
    }),
    plugins: [
      nestingLimit(LIMITS.maxGraphqlNesting) as Plugin,
      costLimit({ max: LIMITS.maxGraphqlCost, defaultLimit: LIMITS.maxPage, maxNesting: LIMITS.maxGraphqlNesting }) as Plugin,
      selectionOrder() as Plugin,
      depthAndAliasLimit(LIMITS.maxGraphqlDepth, LIMITS.maxGraphqlAliases) as Plugin,
      closedSetErrorCodes((code) => service.metrics.recordGraphqlError(code)) as Plugin,
      transport.plugin,
    ],
    context: ({ requestCtx, role: r, request }) => ({ service, role: r, request, requestCtx }),
  });
}
