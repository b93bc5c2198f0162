/**
 * MCP at `/mcp` (and `/graphs/<name>/mcp` for a hosted graph): Streamable
 * HTTP, stateless. Every POST is one JSON-RPC message answered with one
 * JSON response; no session is kept, so any replica answers any call. The
 * caller was authenticated by the bearer token like any route, and the
 * server is built for its role. A loopback-bound server refuses a request
 * whose Host or Origin is not loopback (loopback-guard.ts). GET and DELETE
 * (a stream, a session's end) have nothing to serve here: 405.
 */
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Hono } from 'hono';
import { BranchgraphError } from '../../model/errors.js';
import { mcpServer } from '../../mcp/mcp-server.js';
import { embeddedApi } from '../../service/api.js';
import type { Role } from '../../service/auth.js';
import type { BranchgraphService } from '../../service/service.js';
import { bodyBytes, ctxOf, jsonReply, type Env } from '../http-context.js';
import { bodyJsonOf } from '../request-body.js';
import { foreignHost } from '../loopback-guard.js';
import { embeddedTypedGraphql, embeddedTypedSdl } from '../typed-graphql-endpoint.js';

export function mcpRoute(app: Hono<Env>, opts: { service: BranchgraphService; boundHost: string }): void {
  // The typed GraphQL endpoint for `query`, built on the first call that needs it and shared by every caller after.
  let typed: ReturnType<typeof embeddedTypedGraphql> | undefined;
  let sdl: ReturnType<typeof embeddedTypedSdl> | undefined;
  // Not routes of their own (the document lists what is served): a stream or a session's end is refused before routing.
  app.use('/mcp', async (c, next) => {
    if (c.req.method === 'POST') return next();
    return jsonReply(c, rpcError(-32000, 'this server is stateless: POST each message'), { status: 405, headers: { allow: 'POST' } });
  });
  app.post('/mcp', async (c) => {
    const refused = foreignHost({ bound: opts.boundHost, host: c.req.header('host'), origin: c.req.header('origin') });
    if (refused !== undefined) throw new BranchgraphError('forbidden', refused);
    const { bytes, release } = await bodyBytes(c);
    let message: unknown;
    try {
      message = await bodyJsonOf(bytes);
    } catch {
      return jsonReply(c, rpcError(-32700, 'the body is not JSON'), { status: 400 });
    } finally {
      release();
    }
    const ctx = ctxOf(c);
    const role = c.get('role') as Role;
    typed ??= embeddedTypedGraphql(opts.service, { transport: 'http' });
    sdl ??= embeddedTypedSdl(opts.service);
    const run = typed;
    const sdlOf = sdl;
    const ports = {
      api: embeddedApi(opts.service, ctx),
      typedQuery: (q: { branch: string; document: string; variables?: Record<string, unknown> }) =>
        run(q.branch, q.document, { variables: q.variables, role, ctx }),
      branchSdl: (branch: string) => sdlOf(branch, ctx),
      // `/mcp?branch=agent/x`: that branch's stored queries are the tools (main's by default).
      ...(c.req.query('branch') !== undefined ? { branch: c.req.query('branch') as string } : {}),
    };
    const server = mcpServer({ ports, role });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return withStableCode(await transport.handleRequest(c.req.raw, { parsedBody: message }));
    } finally {
      await server.close();
    }
  });
}

/**
 * A JSON-RPC error as this server answers it: its `data.code` is the stable code every transport
 * uses (the transport refused the message itself: not JSON-RPC, or not what a client may send).
 */
function rpcError(code: number, message: string) {
  return { jsonrpc: '2.0', id: null, error: { code, message, data: { code: 'invalid_input' } } };
}

/** The SDK's refusals of a message (a wrong Accept header, a batch it cannot take) with the stable code added. */
async function withStableCode(res: Response): Promise<Response> {
  if (res.status < 400) return res;
  const body = (await res.json()) as { error?: { code: number; message: string } };
  const fixed = rpcError(body.error?.code ?? -32600, body.error?.message ?? 'the message was refused');
  return new Response(JSON.stringify(fixed), { status: res.status, headers: { 'content-type': 'application/json' } });
}
