/**
 * The HTTP edge: one app per graph (the default graph at the root, hosted
 * graphs under `/graphs/<name>/`), each with its request log, its
 * authentication (before any byte of a body is read), one error envelope
 * with a stable code, and its routes: the public pages (routes/
 * public-routes.ts), every operation of the table (routes/
 * operation-routes.ts), and GraphQL (routes/graphql-route.ts).
 */
import { eventStreamRoute } from './routes/event-stream-route.js';
import { Hono, type MiddlewareHandler } from 'hono';
import { compress } from 'hono/compress';
import { cors } from 'hono/cors';
import type { Logger } from 'pino';
import { BranchgraphError, isMasked, toBranchgraphError } from '../model/errors.js';
import { authenticate, type TokenTable } from '../service/auth.js';
import { DEFAULT_GRAPH } from '../model/token-scope.js';
import { requireGraph } from '../service/access.js';
import { LIMITS } from '../service/limits.js';
import type { BranchgraphService } from '../service/service.js';
import type { GraphHost } from '../service/graph-host.js';
import { BodyBudget } from './request-body.js';
import { errorBody, errorResponse, jsonReply, type Env } from './http-context.js';
import { isPublicRoute, publicRoutes } from './routes/public-routes.js';
import { operationRoutes } from './routes/operation-routes.js';
import { graphqlRoute } from './routes/graphql-route.js';
import { mcpRoute } from './routes/mcp-route.js';
import { typedGraphqlRoutes } from './routes/typed-graphql-route.js';
import { syncRoutes } from './routes/sync-routes.js';
import { attachHttpPeers } from './http-peer.js';
import { graphRoutes } from './routes/graph-routes.js';
import { newId } from '../model/new-id.js';
import { attachTypedGraphql } from './typed-graphql-port.js';
import { requestTracing } from './request-tracing.js';

export { OPENAPI_PATH } from './routes/public-routes.js';
export { errorBody } from './http-context.js';

export interface AppOptions {
  service: BranchgraphService;
  logger: Logger;
  tokens: TokenTable;
  maxBodyBytes?: number;
  /** Bytes of request bodies all requests together may hold while they are read (default four bodies' worth). */
  bodyBudgetBytes?: number;
  /** The graphs hosted beside the default one, reached under `/graphs/<name>/`. */
  host?: GraphHost;
  /** The address the server listens on: bound to loopback, MCP answers loopback hosts only (loopback-guard.ts). */
  boundHost?: string;
  /** Origins browsers may call the API from (`*` for any); none: same origin only. */
  corsOrigins?: string[];
}

/** What one graph's routes are built with; hosted graphs share the server's budget. */
interface GraphAppOptions {
  service: BranchgraphService;
  logger: Logger;
  tokens: TokenTable;
  maxBodyBytes: number;
  bodyBudget: BodyBudget;
  /** Where the graph's routes are mounted: '' for the default graph, `/graphs/<name>` for a hosted one. */
  base: string;
  /** The graph's name, as a token's `graphs` scope names it (`default` for the store's root). */
  graph: string;
  boundHost: string;
  corsOrigins: string[];
}

/** Headers a browser on another origin may send, and the one it may read besides the simple ones. */
const CORS_REQUEST_HEADERS = ['authorization', 'content-type', 'idempotency-key', 'x-request-id', 'traceparent', 'tracestate'];
const CORS_EXPOSED_HEADERS = ['x-request-id'];

const HOSTED_PATH = /^\/graphs\/([^/]+)(\/.*)$/;

/** The server's app: the default graph's routes, and, with a host, the hosted graphs' under `/graphs/<name>/`. */
export function createApp(opts: AppOptions): Hono<Env> {
  const maxBodyBytes = opts.maxBodyBytes ?? LIMITS.maxBodyBytes;
  const shared = {
    logger: opts.logger,
    tokens: opts.tokens,
    maxBodyBytes,
    bodyBudget: new BodyBudget(opts.bodyBudgetBytes ?? 4 * maxBodyBytes),
    boundHost: opts.boundHost ?? '127.0.0.1',
    corsOrigins: opts.corsOrigins ?? [],
  };
  const app = graphApp({ ...shared, service: opts.service, base: '', graph: DEFAULT_GRAPH });
  if (opts.host !== undefined)
    graphRoutes(app, {
      host: opts.host,
      appFor: (service, name) => graphApp({ ...shared, service, base: `/graphs/${name}`, graph: name }),
    });
  return app;
}

function graphApp(opts: GraphAppOptions): Hono<Env> {
  const { service, logger, base } = opts;
  attachTypedGraphql(service);
  attachHttpPeers(service);
  const app = new Hono<Env>().basePath(base);
  // Compressed when the client asks (GraphiQL's script is megabytes, a diff page hundreds of KB);
  // event streams and NDJSON are not compressible types, so they still flow as written. Below
  // 16 KiB gzip costs more than it saves on a local network: a 100-row typed page took 3.0 ms
  // compressed and 2.0 ms as it is.
  app.use('*', compress({ threshold: 16 * 1024 }));
  // Runs inside compress: a JSON answer is sized first, so compress's threshold can see it.
  app.use('*', sizedJson);
  app.use('*', requestTracing);
  app.use('*', async (c, next) => {
    const requestId = c.req.header('x-request-id')?.slice(0, 64) ?? newId();
    const log = logger.child({ requestId });
    c.set('requestId', requestId);
    c.set('log', log);
    c.header('x-request-id', requestId);
    const started = performance.now();
    await next();
    if (c.get('dispatched')) return;
    const route = c.req.routePath;
    const ms = performance.now() - started;
    service.metrics.recordRequest({ method: c.req.method, route, status: c.res.status, seconds: ms / 1000 });
    const operation = c.get('graphqlOperation');
    const line = {
      method: c.req.method,
      path: c.req.path,
      route,
      status: c.res.status,
      ms: Math.round(ms),
      aborted: c.req.raw.signal.aborted,
    };
    log.info({ ...line, ...(operation !== undefined ? { graphqlOperation: operation } : {}) }, 'request');
  });
  // A preflight is answered before authentication: browsers send it without the token.
  if (opts.corsOrigins.length > 0)
    app.use(
      '*',
      cors({
        origin: opts.corsOrigins.includes('*') ? '*' : opts.corsOrigins,
        allowHeaders: CORS_REQUEST_HEADERS,
        exposeHeaders: CORS_EXPOSED_HEADERS,
        maxAge: 600,
      }),
    );
  // Authentication comes before any byte of a body is read: an anonymous caller cannot make the
  // server buffer anything. Roles are checked per route, scopes by the service (service/access.ts);
  // a token scoped to other graphs reaches nothing of this one.
  app.use('*', async (c, next) => {
    c.set('maxBodyBytes', opts.maxBodyBytes);
    c.set('bodyBudget', opts.bodyBudget);
    const hosted = HOSTED_PATH.exec(c.req.path);
    const path = hosted?.[2] ?? c.req.path;
    if (!isPublicRoute({ method: c.req.method, path, query: (name) => c.req.query(name) })) {
      const grant = await authenticate(c.req.header('authorization'), {
        bootstrap: opts.tokens,
        managed: service.tokens,
        signal: c.req.raw.signal,
      });
      c.set('role', grant.role);
      if (grant.identity !== undefined) c.set('identity', grant.identity);
      if ('scope' in grant && grant.scope !== undefined && Object.keys(grant.scope).length > 0) {
        // The default graph's app also routes `/graphs/...`, which graph-routes.ts judges by name.
        if (hosted === null) requireGraph(grant.scope, opts.graph);
        c.set('scope', grant.scope);
      }
    }
    await next();
  });
  app.onError((e, c) => {
    // A client that went away mid-body (or mid-request) aborted; that is not a server fault.
    const err =
      c.req.raw.signal.aborted && !(e instanceof BranchgraphError)
        ? new BranchgraphError('aborted', 'the client closed the request', { cause: e })
        : toBranchgraphError(e);
    if (isMasked(err)) c.get('log')?.error({ err: e, code: err.code }, 'unexpected error');
    const [body, status] = errorResponse(err, c.get('requestId'));
    return jsonReply(c, body, { status });
  });
  app.notFound((c) =>
    jsonReply(c, errorBody(new BranchgraphError('not_found', `no route ${c.req.method} ${c.req.path}`), c.get('requestId')), {
      status: 404,
    }),
  );
  publicRoutes(app, { service, base });
  eventStreamRoute(app, service);
  syncRoutes(app, service);
  operationRoutes(app, service);
  graphqlRoute(app, { service, logger, base });
  typedGraphqlRoutes(app, { service, logger, base });
  mcpRoute(app, { service, boundHost: opts.boundHost });
  return app;
}

/**
 * A JSON answer with its length, for the answers not sized where they are made: the routes' own
 * (`jsonReply`), the operations' and both GraphQL endpoints' are (sized-response.ts), a library's
 * (the MCP transport's) may not be. Without one, compress gzips every answer, a stream and a zlib
 * context for 100 bytes of JSON; reading an answer back here costs a stream and a rebuilt response.
 * Streamed types (event streams, NDJSON, exports) are left as they are.
 */
const sizedJson: MiddlewareHandler<Env> = async (c, next) => {
  await next();
  const res = c.res;
  // Only the headers are looked at first: reading `body` of a streamed answer would take it over.
  const type = res.headers.get('content-type') ?? '';
  if (!/^application\/(graphql-response\+)?json/.test(type) || res.headers.has('content-length') || res.body === null) return;
  const bytes = new Uint8Array(await res.arrayBuffer());
  // A plain init, not the answer itself: given a Response, the server's Response class reuses its
  // (now read) body.
  const headers = new Headers(res.headers);
  headers.set('content-length', String(bytes.length));
  c.res = new Response(bytes, { status: res.status, statusText: res.statusText, headers });
};
