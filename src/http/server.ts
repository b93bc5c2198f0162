/**
 * Running the HTTP server: open the store and graph, serve the app, and on
 * SIGTERM stop accepting work and drain in-flight requests before exiting.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import pino, { type Logger } from 'pino';
import type { Config } from '../service/config.js';
import type { GraphHost } from '../service/graph-host.js';
import { openGraphHost } from '../service/open-service.js';
import type { BranchgraphService } from '../service/service.js';
import { createApp } from './app.js';
import { httpMergeForwarder } from './merge-forwarder.js';
import { trackConnections } from './connection-drain.js';

/** A server started by `startServer`. */
export interface RunningServer {
  url: string;
  /** The default graph's service. */
  service: BranchgraphService;
  host: GraphHost;
  graph: BranchgraphService['graph'];
  /** The store the server was opened on (every graph's objects). */
  store: GraphHost['store'];
  logger: Logger;
  close(): Promise<void>;
}

/**
 * Open the configured store and serve REST and GraphQL on it; `close()` drains in-flight requests first.
 * `opts.store` serves a store the caller already holds instead (a memory store kept across restarts in tests);
 * `opts.clock` replaces the wall clock (tests that watch branches expire).
 */
export async function startServer(
  config: Config,
  logger: Logger = pino({ level: config.logLevel }),
  opts: { store?: GraphHost['store']; clock?: () => number } = {},
): Promise<RunningServer> {
  const host = await openGraphHost(config, { log: logger, store: opts.store, clock: opts.clock });
  const service = host.root;
  const graph = service.graph;
  await service.start();
  const app = createApp({
    service,
    host,
    logger,
    tokens: config.tokens,
    maxBodyBytes: config.maxBodyBytes,
    boundHost: config.host,
    corsOrigins: config.corsOrigins,
  });
  // The GraphQL endpoints are built on their first request, but their modules are loaded now:
  // loading them held the event loop about 190 ms, which belongs to the start, not to a request.
  await Promise.all([import('./graphql-endpoint.js'), import('./typed-graphql-endpoint.js')]);
  // A port that cannot be taken fails the start (with the graph closed again), not the process.
  const server = await new Promise<Server>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s as Server)) as Server;
    s.once('error', reject);
  }).catch(async (e: unknown) => {
    await host.close();
    await service.stop();
    await graph.close();
    throw e;
  });
  const connections = trackConnections(server);
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.address.includes(':') ? `[${addr.address}]` : addr.address}:${addr.port}`;
  if (config.advertiseUrl !== undefined)
    service.forwardMerges({ url: config.advertiseUrl.replace('{port}', String(addr.port)), forwarder: httpMergeForwarder });
  let closing: Promise<void> | undefined;
  return {
    url,
    service,
    host,
    graph,
    store: host.store,
    logger,
    close() {
      closing ??= new Promise<void>((resolve) => {
        // Stop accepting; in-flight requests finish; connections with nothing in flight close now, and
        // the others as their responses end (connection-drain.ts). A request still
        // running at the deadline (a client trickling its body) has its connection closed, which
        // aborts its handler: the drain is bounded, and nothing half-done is published.
        const deadline = setTimeout(() => {
          logger.warn({ drainTimeoutMs: config.drainTimeoutMs }, 'drain deadline passed: closing the connections still open');
          server.closeAllConnections();
        }, config.drainTimeoutMs);
        server.close(() => {
          clearTimeout(deadline);
          resolve();
        });
        connections.drain();
      })
        .then(() => host.close())
        .then(() => service.stop())
        .then(() => graph.close());
      return closing;
    },
  };
}
