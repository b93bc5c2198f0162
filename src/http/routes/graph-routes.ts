/**
 * The hosted graphs: `GET /graphs` lists them, `POST /graphs` creates one,
 * `DELETE /graphs/<name>` removes one, and every other route of a hosted
 * graph is served under `/graphs/<name>/` by that graph's own app (built
 * once per service, sharing the server's body budget).
 */
import type { Hono } from 'hono';
import { requireRole } from '../../service/auth.js';
import { requireGraph } from '../../service/access.js';
import { mayReachGraph } from '../../model/token-scope.js';
import type { GraphHost } from '../../service/graph-host.js';
import { CreateGraphZ } from '../../service/inputs.js';
import { parseInput } from '../../service/parse-input.js';
import type { BranchgraphService } from '../../service/service.js';
import { jsonBody, jsonReply, param, type Env } from '../http-context.js';

export function graphRoutes(
  app: Hono<Env>,
  opts: { host: GraphHost; appFor: (service: BranchgraphService, name: string) => Hono<Env> },
): void {
  const { host } = opts;
  const hostedApps = new WeakMap<BranchgraphService, Hono<Env>>();
  app.get('/graphs', async (c) => {
    requireRole(c.get('role'), 'read');
    // A token scoped to some graphs lists those.
    const graphs = (await host.list(c.req.raw.signal)).filter((g) => mayReachGraph(c.get('scope'), g.name));
    return jsonReply(c, { graphs });
  });
  app.post('/graphs', async (c) => {
    requireRole(c.get('role'), 'admin');
    const name = parseInput(CreateGraphZ, await jsonBody(c), 'body').name;
    requireGraph(c.get('scope'), name);
    return jsonReply(c, await host.create(name, c.req.raw.signal), { status: 201 });
  });
  app.delete('/graphs/:name', async (c) => {
    requireRole(c.get('role'), 'admin');
    requireGraph(c.get('scope'), param(c, 'name'));
    return jsonReply(c, await host.delete(param(c, 'name'), c.req.raw.signal));
  });
  app.all('/graphs/:name/*', async (c) => {
    // Judged before the graph is looked up: a refusal never says whether the graph exists.
    requireGraph(c.get('scope'), param(c, 'name'));
    const service = await host.service(param(c, 'name'), c.req.raw.signal);
    let hosted = hostedApps.get(service);
    if (hosted === undefined) {
      hosted = opts.appFor(service, param(c, 'name'));
      hostedApps.set(service, hosted);
    }
    // The hosted graph's app logs and counts the request itself.
    c.set('dispatched', true);
    const headers = new Headers(c.req.raw.headers);
    headers.set('x-request-id', c.get('requestId'));
    return hosted.fetch(new Request(c.req.raw, { headers }), c.env);
  });
}
