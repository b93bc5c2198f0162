/**
 * What anyone may read without a token: the index page, health, metrics,
 * the contract, GraphiQL's bundle, and the pages under /ui (which hold no data: they call the API
 * with the reader's token, and may load nothing from elsewhere).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Hono } from 'hono';
import { packageRoot } from '../../service/package-root.js';
import type { BranchgraphService } from '../../service/service.js';
import { errorBody, jsonReply, type Env } from '../http-context.js';
import { BranchgraphError } from '../../model/errors.js';
import { GRAPHIQL_ASSETS, graphiqlAssetRoute } from '../graphiql-page.js';
import { indexPage } from '../index-page.js';
import { isUiPath, uiRoutes } from '../ui-pages.js';

export const OPENAPI_PATH = path.join(packageRoot(), 'openapi.yaml');

/** Routes anyone may call, as `METHOD /path` relative to the graph. */
const PUBLIC_ROUTES = new Set(['GET /', 'GET /healthz', 'GET /readyz', 'GET /metrics', 'GET /openapi.yaml', 'GET /graphql']);

/**
 * Whether anyone may call `method path` (relative to the graph). GraphQL over GET runs a document:
 * only the bare GraphiQL page is public. GraphiQL's bundle is public as the page is.
 */
export function isPublicRoute(req: { method: string; path: string; query: (name: string) => string | undefined }): boolean {
  if (req.method === 'GET' && (req.path.startsWith(`${GRAPHIQL_ASSETS}/`) || isUiPath(req.path))) return true;
  return PUBLIC_ROUTES.has(`${req.method} ${req.path}`) && !(req.path === '/graphql' && req.query('query') !== undefined);
}

/** How long the store may take to answer a readiness probe before the server is called not ready. */
const READY_TIMEOUT_MS = 5000;

/**
 * Readiness, for load balancers: the store answers one call (a `head`, the cheapest there is)
 * within READY_TIMEOUT_MS. Liveness (`/healthz`) asks nothing of the store, so a store outage
 * takes the server out of rotation without getting it restarted.
 */
async function readiness(
  store: Pick<BranchgraphService['graph']['store'], 'kind' | 'head'>,
  requestId: string,
): Promise<[object, 200 | 503]> {
  const started = performance.now();
  try {
    await store.head('readyz', { signal: AbortSignal.timeout(READY_TIMEOUT_MS) });
    return [{ ready: true, store: store.kind, ms: Math.round(performance.now() - started) }, 200];
  } catch (e) {
    const why = e instanceof Error ? e.message : String(e);
    return [errorBody(new BranchgraphError('store_unavailable', `the store does not answer: ${why}`), requestId), 503];
  }
}

let openapi: string | undefined;

/** The contract, read once per process when first asked for: every hosted graph's app serves the same text. */
function openapiText(): string {
  openapi ??= readFileSync(OPENAPI_PATH, 'utf8');
  return openapi;
}

export function publicRoutes(app: Hono<Env>, opts: { service: BranchgraphService; base: string }): void {
  const { service, base } = opts;
  app.get('/', (c) =>
    c.html(indexPage(base), 200, { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'" }),
  );
  app.get('/healthz', (c) => jsonReply(c, { ok: true }));
  app.get('/readyz', async (c) => {
    const [body, status] = await readiness(service.graph.store, c.get('requestId'));
    return jsonReply(c, body, { status });
  });
  app.get('/metrics', async (c) => c.text(await service.metrics.render(), 200, { 'content-type': service.metrics.contentType }));
  app.get('/openapi.yaml', (c) => c.text(openapiText(), 200, { 'content-type': 'application/yaml' }));
  uiRoutes(app, base);
  graphiqlAssetRoute(app);
}
