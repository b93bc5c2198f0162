/**
 * How a command reaches the engine: a running server through the REST client, or the store in
 * this process. Both are loaded on first use, so `--version`, `--help` and a mistyped command
 * never pay for the engine's modules, and a command against a server never loads the engine.
 */
import type { BranchgraphApi } from '../service/api.js';
import type { BranchgraphService } from '../service/service.js';
import type { Globals } from './cli-context.js';

/** The server's base URL without a trailing slash. */
export const serverBase = (server: string): string => server.replace(/\/$/, '');

/** The REST client of the server named. */
export async function serverApi(server: string, token: string | undefined): Promise<BranchgraphApi> {
  const { RestClient } = await import('../http/rest-client.js');
  return new RestClient(serverBase(server), token);
}

/** The engine on the store the globals name, with typed GraphQL and the HTTP peers attached. */
export async function embeddedService(g: Globals): Promise<BranchgraphService> {
  const [{ loadConfig }, { openService }, { attachTypedGraphql }, { attachHttpPeers }] = await Promise.all([
    import('../service/config.js'),
    import('../service/open-service.js'),
    import('../http/typed-graphql-port.js'),
    import('../http/http-peer.js'),
  ]);
  const service = await openService(loadConfig(process.env, { store: g.store, actor: g.actor, shard: g.shard }));
  attachTypedGraphql(service);
  attachHttpPeers(service);
  return service;
}

/** The API a command calls: the server's when one is named, else the embedded engine's. */
export async function commandApi(g: Globals): Promise<BranchgraphApi> {
  if (g.server !== undefined) return serverApi(g.server, g.token);
  const [service, { embeddedApi }] = await Promise.all([embeddedService(g), import('../service/api.js')]);
  return embeddedApi(service, { transport: 'cli' });
}
