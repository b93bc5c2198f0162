/**
 * GraphQL at /graphql (GraphiQL on a bare GET). Yoga and the schema are
 * built on the first GraphQL request: they take about a quarter of a second
 * to load, which a process that only serves REST (or is about to) should
 * not pay at boot. Documents were authenticated by the middleware and every
 * field checks the role it needs; the bare GraphiQL page is public, has no
 * role, and runs nothing.
 */
import type { Context, Hono } from 'hono';
import type { Logger } from 'pino';
import type { Role } from '../../service/auth.js';
import type { BranchgraphService } from '../../service/service.js';
import type { GraphqlEndpoint, ParsedBody } from '../graphql-endpoint.js';
import { bodyBytes, ctxOf, type Env } from '../http-context.js';
import { bodyJsonOf, bodyTextOf } from '../request-body.js';

type EndpointModule = typeof import('../graphql-endpoint.js');

export function graphqlRoute(app: Hono<Env>, opts: { service: BranchgraphService; logger: Logger; base: string }): void {
  let built: Promise<{ yoga: GraphqlEndpoint; answer: EndpointModule['answerGraphql'] }> | undefined;
  const endpoint = () => {
    built ??= import('../graphql-endpoint.js').then((m) => ({ yoga: m.graphqlEndpoint(opts), answer: m.answerGraphql }));
    return built;
  };
  app.on(['GET', 'POST'], '/graphql', async (c) => {
    const role = c.get('role') as Role;
    const count = (code: string) => opts.service.metrics.recordGraphqlError(code);
    return forwardGraphql(c, async (request, parsed) => {
      const { yoga, answer } = await endpoint();
      return answer({ yoga, request, serverContext: { requestCtx: ctxOf(c), role, ...parsed }, count });
    });
  });
}

/**
 * Hand a GraphQL request to Yoga: a GET as it came, a POST with its body read under the body
 * budget (and its operation name noted for the request log). A JSON body goes along parsed
 * (`ParsedBody`), so Yoga does not read it again; any other body is handed over as text, for
 * Yoga to parse or refuse.
 */
export async function forwardGraphql(c: Context<Env>, fetch: (req: Request, parsed?: ParsedBody) => Promise<Response>): Promise<Response> {
  if (c.req.method !== 'POST') return fetch(c.req.raw);
  const { bytes, release } = await bodyBytes(c);
  try {
    // Not JSON: Yoga answers that itself.
    const parsed = isJsonBody(c.req.header('content-type')) ? await bodyJsonOf(bytes).catch(() => undefined) : undefined;
    const operation = operationName(parsed);
    if (operation !== undefined) c.set('graphqlOperation', operation);
    if (typeof parsed === 'object' && parsed !== null) return await fetch(c.req.raw, { graphqlBody: parsed });
    const text = await bodyTextOf(bytes);
    return await fetch(new Request(c.req.raw.url, { method: 'POST', headers: c.req.raw.headers, body: text, signal: c.req.raw.signal }));
  } finally {
    release();
  }
}

/** Whether Yoga would read the body as JSON (its own test: the first content type, parameters aside). */
function isJsonBody(contentType: string | undefined): boolean {
  const first = contentType?.split(',')[0] ?? '';
  return ['application/json', 'application/graphql+json'].some((t) => first === t || first.startsWith(`${t};`));
}

/** A GraphQL request's operation name for the log: the one it names, else its first operation's. */
function operationName(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const req = body as { operationName?: unknown; query?: unknown };
  if (typeof req.operationName === 'string' && req.operationName !== '') return req.operationName.slice(0, 100);
  if (typeof req.query === 'string') return /^\s*(?:query|mutation|subscription)\s+([_A-Za-z][_0-9A-Za-z]*)/.exec(req.query)?.[1];
  return undefined;
}
