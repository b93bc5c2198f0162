/**
 * The HTTP edge: REST routes (Hono) and GraphQL (Yoga, GraphiQL at
 * /graphql) over the one service. Routes validate input, check the caller's
 * role, call the service with the request's abort signal, and shape output.
 * Every error leaves through one envelope with a stable code, and every
 * request is logged once with its request id.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Hono, type Context } from 'hono';
import type { Logger } from 'pino';
import { ulid } from 'ulid';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { BranchgraphError, isMasked, publicError, toBranchgraphError } from '../model/errors.js';
import { HTTP_STATUS } from './error-status.js';
import type { GraphqlEndpoint } from './graphql-endpoint.js';
import { authenticate, requireRole, type Role, type TokenTable } from '../service/auth.js';
import { BodyBudget, readBodyText } from './request-body.js';
import {
  BranchPageInputZ,
  CatchUpInputZ,
  CompactInputZ,
  CreateBranchZ,
  CreateGraphZ,
  CreateTagZ,
  ApplyCommitZ,
  GcInputZ,
  LIMITS,
  MergeInputZ,
  parseInput,
  parseRef,
  ScanInputZ,
  SchemaApplyZ,
  WriteInputZ,
  DirectionZ,
  DiffInputZ,
} from '../service/inputs.js';
import { packageRoot } from '../service/package-root.js';
import { REVIEW_PAGE } from './review-page.js';
import { indexPage } from './index-page.js';
import { EXPORT_EXTENSIONS, EXPORT_MEDIA_TYPES, parseExportFormat } from '../service/api.js';
import type { BranchgraphService, RequestContext } from '../service/service.js';
import type { GraphHost } from '../service/graph-host.js';

export const OPENAPI_PATH = path.join(packageRoot(), 'openapi.yaml');

export interface AppOptions {
  service: BranchgraphService;
  logger: Logger;
  tokens: TokenTable;
  maxBodyBytes?: number;
  /** Bytes of request bodies all requests together may hold while they are read (default four bodies' worth). */
  bodyBudgetBytes?: number;
  /** The graphs hosted beside the default one, reached under `/graphs/<name>/`. */
  host?: GraphHost;
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
}

type Env = { Variables: { requestId: string; log: Logger; role: Role; identity?: string; maxBodyBytes: number; bodyBudget: BodyBudget; dispatched?: boolean; graphqlOperation?: string } };

/** Routes anyone may call: health, metrics, the contract, and the GraphiQL page. */
const PUBLIC_ROUTES = new Set(['GET /', 'GET /healthz', 'GET /metrics', 'GET /openapi.yaml', 'GET /graphql', 'GET /ui']);
const HOSTED_PATH = /^\/graphs\/([^/]+)(\/.*)$/;

/** A path relative to the graph it addresses. */
function graphPath(path: string): string {
  return HOSTED_PATH.exec(path)?.[2] ?? path;
}

export function errorBody(err: BranchgraphError, requestId: string): { error: ReturnType<typeof publicError>; requestId: string } {
  return { error: publicError(err, requestId), requestId };
}

/** The envelope and the status it travels with. */
function errorResponse(err: BranchgraphError, requestId: string): [ReturnType<typeof errorBody>, ContentfulStatusCode] {
  const body = errorBody(err, requestId);
  // 499 is outside Hono's list of statuses, though any status can be sent.
  return [body, HTTP_STATUS[body.error.code] as ContentfulStatusCode];
}

/** The request body as text, within the body limit and the shared in-flight budget (release it when done). */
function bodyText(c: Context<Env>): Promise<{ text: string; release: () => void }> {
  return readBodyText(c.req.raw, c.get('maxBodyBytes'), c.get('bodyBudget'));
}

async function jsonBody(c: Context<Env>): Promise<unknown> {
  const { text, release } = await bodyText(c);
  // Once parsed, the text is garbage: the budget bounds what is being buffered, not what was.
  release();
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BranchgraphError('invalid_input', 'the request body is not valid JSON', { issues: [{ path: 'body', message: 'invalid JSON' }] });
  }
}

function ctxOf(c: Context<Env>): RequestContext {
  const identity = c.get('identity');
  const operationId = c.req.header('operation-id');
  return {
    transport: 'http',
    signal: c.req.raw.signal,
    log: c.get('log'),
    requestId: c.get('requestId'),
    ...(identity !== undefined ? { actor: identity } : {}),
    ...(operationId !== undefined ? { operationId } : {}),
  };
}

function param(c: Context<Env>, name: string): string {
  return (c.req.param as (n: string) => string | undefined)(name) ?? '';
}

function intQuery(c: Context<Env>, name: string): number | undefined {
  const v = c.req.query(name);
  if (v === undefined) return undefined;
  if (!/^\d{1,9}$/.test(v)) throw new BranchgraphError('invalid_input', `${name} must be a whole number`, { issues: [{ path: `query.${name}`, message: 'whole number' }] });
  return Number(v);
}

/** The server's app: the default graph's routes, and, with a host, the hosted graphs' under `/graphs/<name>/`. */
export function createApp(opts: AppOptions): Hono<Env> {
  const maxBodyBytes = opts.maxBodyBytes ?? LIMITS.maxBodyBytes;
  const shared = { logger: opts.logger, tokens: opts.tokens, maxBodyBytes, bodyBudget: new BodyBudget(opts.bodyBudgetBytes ?? 4 * maxBodyBytes) };
  const app = graphApp({ ...shared, service: opts.service, base: '' });
  const { host } = opts;
  if (host === undefined) return app;
  const hostedApps = new WeakMap<BranchgraphService, Hono<Env>>();
  app.get('/graphs', role('read'), async (c) => c.json({ graphs: await host.list(c.req.raw.signal) }));
  app.post('/graphs', role('admin'), async (c) => c.json(await host.create(parseInput(CreateGraphZ, await jsonBody(c), 'body').name, c.req.raw.signal), 201));
  app.delete('/graphs/:name', role('admin'), async (c) => c.json(await host.delete(param(c, 'name'), c.req.raw.signal)));
  app.all('/graphs/:name/*', async (c) => {
    const service = await host.service(param(c, 'name'), c.req.raw.signal);
    let hosted = hostedApps.get(service);
    if (hosted === undefined) {
      hosted = graphApp({ ...shared, service, base: `/graphs/${param(c, 'name')}` });
      hostedApps.set(service, hosted);
    }
    // The hosted graph's app logs and counts the request itself.
    c.set('dispatched', true);
    const req = new Request(c.req.raw, { headers: withRequestId(c.req.raw.headers, c.get('requestId')) });
    return hosted.fetch(req, c.env);
  });
  return app;
}

function withRequestId(headers: Headers, id: string): Headers {
  const h = new Headers(headers);
  h.set('x-request-id', id);
  return h;
}

const role = (need: Role) => async (c: Context<Env>, next: () => Promise<void>) => {
  requireRole(c.get('role'), need);
  await next();
};

function graphApp(opts: GraphAppOptions): Hono<Env> {
  const { service, logger, tokens, maxBodyBytes, bodyBudget, base } = opts;
  const app = new Hono<Env>().basePath(base);
  const openapi = readFileSync(OPENAPI_PATH, 'utf8');

  app.use('*', async (c, next) => {
    const requestId = c.req.header('x-request-id')?.slice(0, 64) ?? ulid();
    const log = logger.child({ requestId });
    c.set('requestId', requestId);
    c.set('log', log);
    c.header('x-request-id', requestId);
    const started = performance.now();
    await next();
    if (c.get('dispatched')) return;
    const route = c.req.routePath;
    const ms = performance.now() - started;
    service.metrics.recordRequest(c.req.method, route, c.res.status, ms / 1000);
    const operation = c.get('graphqlOperation');
    log.info(
      {
        method: c.req.method,
        path: c.req.path,
        route,
        status: c.res.status,
        ms: Math.round(ms),
        aborted: c.req.raw.signal.aborted,
        ...(operation !== undefined ? { graphqlOperation: operation } : {}),
      },
      'request',
    );
  });
  // Authentication comes before any byte of a body is read: an anonymous caller cannot make the
  // server buffer anything. Roles are checked per route below.
  app.use('*', async (c, next) => {
    c.set('maxBodyBytes', maxBodyBytes);
    c.set('bodyBudget', bodyBudget);
    // GraphQL over GET runs a document: only the bare GraphiQL page is public.
    const path = graphPath(c.req.path);
    const isPublic = PUBLIC_ROUTES.has(`${c.req.method} ${path}`) && !(path === '/graphql' && c.req.query('query') !== undefined);
    if (!isPublic) {
      const grant = authenticate(c.req.header('authorization'), tokens);
      c.set('role', grant.role);
      if (grant.identity !== undefined) c.set('identity', grant.identity);
    }
    await next();
  });
  app.onError((e, c) => {
    // A client that went away mid-body (or mid-request) aborted; that is not a server fault.
    const err = c.req.raw.signal.aborted && !(e instanceof BranchgraphError) ? new BranchgraphError('aborted', 'the client closed the request', { cause: e }) : toBranchgraphError(e);
    if (isMasked(err)) c.get('log')?.error({ err: e, code: err.code }, 'unexpected error');
    const [body, status] = errorResponse(err, c.get('requestId'));
    return c.json(body, status);
  });
  app.notFound((c) => c.json(errorBody(new BranchgraphError('not_found', `no route ${c.req.method} ${c.req.path}`), c.get('requestId')), 404));

  app.get('/', (c) => c.html(indexPage(base), 200, { 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'" }));
  app.get('/healthz', (c) => c.json({ ok: true }));
  app.get('/metrics', async (c) => c.text(await service.metrics.render(), 200, { 'content-type': service.metrics.contentType }));
  app.get('/openapi.yaml', (c) => c.text(openapi, 200, { 'content-type': 'application/yaml' }));
  // The review page holds no data (it calls the API with the reader's token), and may load nothing from elsewhere.
  app.get('/ui', (c) =>
    c.html(REVIEW_PAGE, 200, {
      'content-security-policy': "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'; base-uri 'none'; form-action 'none'",
    }),
  );

  // ---- branches ----
  app.get('/branches', role('read'), async (c) => c.json(await service.listBranches(parseInput(BranchPageInputZ, { limit: intQuery(c, 'limit'), cursor: c.req.query('cursor') }, 'query'), ctxOf(c))));
  app.post('/branches', role('write'), async (c) => {
    const body = parseInput(CreateBranchZ, await jsonBody(c), 'body');
    return c.json(await service.createBranch(body.name, body.from as never, ctxOf(c)), 201);
  });
  app.get('/branches/:id', role('read'), async (c) => c.json(await service.getBranch(param(c, 'id'), ctxOf(c))));
  app.delete('/branches/:id', role('write'), async (c) => c.json(await service.deleteBranch(param(c, 'id'), ctxOf(c))));

  // ---- tags ----
  app.get('/tags', role('read'), async (c) => c.json({ tags: await service.listTags(ctxOf(c)) }));
  app.post('/tags', role('write'), async (c) => {
    const body = parseInput(CreateTagZ, await jsonBody(c), 'body');
    return c.json(await service.createTag(body.name, body.from as never, body.message, ctxOf(c)), 201);
  });
  app.get('/tags/:name', role('read'), async (c) => c.json(await service.getTag(param(c, 'name'), ctxOf(c))));
  app.delete('/tags/:name', role('admin'), async (c) => c.json(await service.deleteTag(param(c, 'name'), ctxOf(c))));

  // ---- long operations ----
  app.get('/operations', role('read'), (c) => c.json({ operations: service.listOperations(ctxOf(c)) }));
  app.get('/operations/:id', role('read'), (c) => c.json(service.getOperation(param(c, 'id'), ctxOf(c))));

  // ---- the merge ----
  app.post('/branches/:id/merge', role('write'), async (c) => {
    const body = (await jsonBody(c)) ?? {};
    const key = c.req.header('idempotency-key');
    // The header is the idempotency key over REST; validated with the body, so a bad one is a 400 naming it.
    const input = parseInput(MergeInputZ, key !== undefined && typeof body === 'object' && body !== null ? { ...body, idempotencyKey: key } : body, 'body');
    const r = await service.mergeBranch(param(c, 'id'), input, ctxOf(c));
    if (r.status === 'success' && r.replayed === true) c.header('idempotent-replayed', 'true');
    return c.json(r, r.status === 'success' ? 200 : 409);
  });

  // Cherry-pick and revert share the merge handler and its result shape.
  for (const [route, kind] of [
    ['/branches/:id/cherry-pick', 'cherry_pick'],
    ['/branches/:id/revert', 'revert'],
  ] as const) {
    app.post(route, role('write'), async (c) => {
      const input = parseInput(ApplyCommitZ, await jsonBody(c), 'body');
      const r = await service.applyCommit(kind, param(c, 'id'), input, ctxOf(c));
      return c.json(r, r.status === 'success' ? 200 : 409);
    });
  }

  // ---- writes ----
  app.post('/branches/:id/writes', role('write'), async (c) => {
    const input = parseInput(WriteInputZ, await jsonBody(c), 'body');
    return c.json(await service.write(param(c, 'id'), input, ctxOf(c)));
  });
  app.post('/branches/:id/load', role('write'), async (c) => {
    const { text, release } = await bodyText(c);
    try {
      return c.json(await service.load(param(c, 'id'), text, ctxOf(c)));
    } finally {
      release();
    }
  });
  // ---- WAL ingest and catch-up ----
  app.post('/branches/:id/ingest', role('write'), async (c) => {
    const body = c.req.raw.body;
    if (body === null) throw new BranchgraphError('invalid_input', 'ingest needs an NDJSON body', { issues: [{ path: 'body', message: 'empty' }] });
    return c.json(await service.ingestNdjson(param(c, 'id'), body as unknown as AsyncIterable<Uint8Array>, ctxOf(c)));
  });
  app.post('/branches/:id/catchup', role('write'), async (c) => c.json(await service.catchUp(param(c, 'id'), parseInput(CatchUpInputZ, await jsonBody(c), 'body'), ctxOf(c))));
  app.post('/branches/:id/compact', role('write'), async (c) => c.json(await service.compact(param(c, 'id'), parseInput(CompactInputZ, await jsonBody(c), 'body'), ctxOf(c))));
  app.get('/branches/:id/wal', role('read'), async (c) => c.json(await service.walStatus(param(c, 'id'), ctxOf(c))));
  app.post('/branches/:id/schema', role('admin'), async (c) => {
    const input = parseInput(SchemaApplyZ, await jsonBody(c), 'body');
    return c.json(await service.applySchema(param(c, 'id'), input, ctxOf(c)));
  });

  // ---- reads ----
  app.get('/tables/:table/rows', role('read'), async (c) => {
    let where: unknown;
    const w = c.req.query('where');
    if (w !== undefined) {
      try {
        where = JSON.parse(w);
      } catch {
        throw new BranchgraphError('invalid_input', 'where must be a JSON object', { issues: [{ path: 'query.where', message: 'invalid JSON' }] });
      }
    }
    const scan = parseInput(ScanInputZ, { where, limit: intQuery(c, 'limit'), cursor: c.req.query('cursor') }, 'query');
    return c.json(await service.scan(parseRef(c.req.query('at')), param(c, 'table'), scan as never, ctxOf(c)));
  });
  app.get('/tables/:table/export', role('read'), async (c) => {
    const table = param(c, 'table');
    const format = parseExportFormat(c.req.query('format'));
    const { commit, body } = await service.exportTable(parseRef(c.req.query('at')), table, format, ctxOf(c));
    return c.body(readableOf(body), 200, {
      'content-type': EXPORT_MEDIA_TYPES[format],
      'content-disposition': `attachment; filename="${table}.${EXPORT_EXTENSIONS[format]}"`,
      'x-branchgraph-commit': commit,
    });
  });
  app.get('/tables/:table/rows/:key', role('read'), async (c) =>
    c.json({ key: param(c, 'key'), row: await service.getRow(parseRef(c.req.query('at')), param(c, 'table'), param(c, 'key'), ctxOf(c)) }),
  );
  app.get('/tables/:table/rows/:key/edges', role('read'), async (c) => {
    const direction = parseInput(DirectionZ.optional(), c.req.query('direction'), 'query.direction');
    const edgeTable = c.req.query('edgeTable');
    const edges = await service.edges(parseRef(c.req.query('at')), param(c, 'table'), param(c, 'key'), { ...(direction ? { direction } : {}), ...(edgeTable ? { edgeTable } : {}) }, ctxOf(c));
    return c.json({ edges });
  });
  app.get('/commits', role('read'), async (c) => c.json({ commits: await service.log(parseRef(c.req.query('at')), intQuery(c, 'limit'), ctxOf(c)) }));
  app.get('/commits/:id', role('read'), async (c) => c.json(await service.commit(param(c, 'id'), ctxOf(c))));
  app.get('/diff', role('read'), async (c) => {
    const from = c.req.query('from');
    const to = c.req.query('to');
    if (from === undefined || to === undefined) throw new BranchgraphError('invalid_input', 'from and to are required', { issues: [{ path: 'query', message: 'from and to are required' }] });
    const opts = parseInput(DiffInputZ, { mode: c.req.query('mode'), limit: intQuery(c, 'limit'), cursor: c.req.query('cursor') }, 'query');
    return c.json(await service.diffPage(parseRef(from), parseRef(to), opts, ctxOf(c)));
  });
  app.get('/schema', role('read'), async (c) => c.json(await service.getSchema(parseRef(c.req.query('at')), ctxOf(c))));
  app.post('/gc', role('admin'), async (c) => c.json(await service.gc(parseInput(GcInputZ, await jsonBody(c), 'body'), ctxOf(c))));

  // ---- GraphQL ----
  // Built on the first GraphQL request: Yoga and the schema take about a quarter of a second to
  // load, which a process that only serves REST (or is about to) should not pay at boot.
  let yoga: Promise<GraphqlEndpoint> | undefined;
  const endpoint = (): Promise<GraphqlEndpoint> => {
    yoga ??= import('./graphql-endpoint.js').then((m) => m.graphqlEndpoint({ service, logger, base }));
    return yoga;
  };
  app.on(['GET', 'POST'], '/graphql', async (c) => {
    // Reads need a token too; the resolvers check the role each field needs.
    // Documents were authenticated by the middleware and every field checks the role it needs; the
    // bare GraphiQL page is public, has no role, and runs nothing.
    const role = c.get('role') as Role;
    if (c.req.method !== 'POST') return (await endpoint()).fetch(c.req.raw, { requestCtx: ctxOf(c), role });
    const { text, release } = await bodyText(c);
    const operation = operationName(text);
    if (operation !== undefined) c.set('graphqlOperation', operation);
    try {
      const req = new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, body: text, signal: c.req.raw.signal });
      return await (await endpoint()).fetch(req, { requestCtx: ctxOf(c), role });
    } finally {
      release();
    }
  });

  return app;
}

/** A GraphQL request's operation name for the log: the one it names, else its first operation's; never throws. */
function operationName(body: string): string | undefined {
  try {
    const req = JSON.parse(body) as { operationName?: unknown; query?: unknown };
    if (typeof req.operationName === 'string' && req.operationName !== '') return req.operationName.slice(0, 100);
    if (typeof req.query === 'string') return /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(req.query)?.[1];
  } catch {
    // Not JSON: GraphQL answers that itself.
  }
  return undefined;
}

/** An async iterable as a web stream, pulled as the client reads; a client that goes away stops the reading. */
function readableOf(body: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}
