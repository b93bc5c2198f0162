/**
 * Running the HTTP server: open the store and graph, serve the app, and on
 * SIGTERM stop accepting work and drain in-flight requests before exiting.
 */
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import pino, { type Logger } from 'pino';
import { Graph } from '../graph/graph.js';
import type { Config } from '../service/config.js';
import { BranchgraphService, type ServiceOptions } from '../service/service.js';
import { LatencyStore } from '../store/latency-store.js';
import { openStore } from '../store/open-store.js';
import { createApp } from './app.js';

export interface RunningServer {
  url: string;
  graph: Graph;
  logger: Logger;
  close(): Promise<void>;
}

/** Service settings from configuration: one place for the server and the embedded CLI. */
export function serviceOptions(config: Config, log?: Logger): ServiceOptions {
  return {
    defaultWidth: config.mergeWidth,
    budgetBytes: config.budgetBytes,
    wal: { shard: config.shard, sealAfterMs: config.sealAfterMs, generationRows: config.generationRows },
    catchUp: config.catchUp,
    ...(log ? { log } : {}),
  };
}

export async function startServer(config: Config, logger: Logger = pino({ level: config.logLevel })): Promise<RunningServer> {
  let store = await openStore(config.store);
  if (config.storeLatencyMs > 0) store = new LatencyStore(store, config.storeLatencyMs);
  const graph = await Graph.open(store, { actor: config.actor });
  const service = new BranchgraphService(graph, serviceOptions(config, logger));
  service.start();
  const app = createApp({ service, logger, tokens: config.tokens, maxBodyBytes: config.maxBodyBytes });
  const server = await new Promise<Server>((resolve) => {
    const s = serve({ fetch: app.fetch, port: config.port, hostname: config.host }, () => resolve(s as Server));
  });
  const addr = server.address() as AddressInfo;
  const url = `http://${addr.address.includes(':') ? `[${addr.address}]` : addr.address}:${addr.port}`;
  let closing: Promise<void> | undefined;
  return {
    url,
    graph,
    logger,
    close() {
      closing ??= new Promise<void>((resolve) => {
        // Stop accepting; in-flight requests finish; idle keep-alive sockets go now.
        server.close(() => resolve());
        server.closeIdleConnections();
      })
        .then(() => service.stop())
        .then(() => graph.close());
      return closing;
    },
  };
}
