/**
 * Each branch's typed GraphQL API: `POST /branches/{id}/graphql` (and GET,
 * as GraphQL over HTTP allows for queries; GraphiQL on a browser's GET) and
 * its SDL at `GET /branches/{id}/schema.graphql`. The branch name is one
 * URL-encoded path segment, as in the REST routes. Yoga is built on the
 * first typed request, as `/graphql`'s is.
 */
import type { Hono } from 'hono';
import type { Logger } from 'pino';
import type { Role } from '../../service/auth.js';
import { requireRole } from '../../service/auth.js';
import type { BranchgraphService } from '../../service/service.js';
import type { TypedEndpoint } from '../typed-graphql-endpoint.js';
import { ctxOf, type Env } from '../http-context.js';
import { forwardGraphql } from './graphql-route.js';

type EndpointModule = typeof import('../typed-graphql-endpoint.js');

export function typedGraphqlRoutes(app: Hono<Env>, opts: { service: BranchgraphService; logger: Logger; base: string }): void {
  let built: Promise<{ m: EndpointModule; endpoint: TypedEndpoint; schemas: InstanceType<EndpointModule['TypedSchemaCache']> }> | undefined;
  const typed = () => {
    built ??= import('../typed-graphql-endpoint.js').then((m) => ({
      m,
      endpoint: m.typedGraphqlEndpoint(opts),
      schemas: new m.TypedSchemaCache(),
    }));
    return built;
  };
  app.on(['GET', 'POST'], '/branches/:id/graphql', async (c) => {
    const role = c.get('role') as Role;
    const { m, endpoint, schemas } = await typed();
    const r = { endpoint, schemas, service: opts.service, branch: c.req.param('id'), role, ctx: ctxOf(c) };
    return forwardGraphql(c, (req, parsed) => m.runTypedGraphql(r, req, parsed));
  });
  app.get('/branches/:id/schema.graphql', async (c) => {
    requireRole(c.get('role') as Role, 'read');
    const { m, schemas } = await typed();
    const branch = c.req.param('id');
    const { served } = await m.servedFor({ schemas, service: opts.service, branch, ctx: ctxOf(c) });
    const file = `${branch.replace(/[^A-Za-z0-9._-]/g, '_')}.graphql`;
    return c.body(await served.sdl(), 200, {
      'content-type': 'text/plain; charset=utf-8',
      'content-disposition': `inline; filename="${file}"`,
      etag: `"${served.hash}"`,
    });
  });
}
