/**
 * The one way to build a service from configuration: open the store (with
 * injected latency when asked), open the graph, apply the service settings.
 * The HTTP server and the embedded CLI both come through here, so they
 * cannot drift apart in how they read the same configuration.
 */
import type { Logger } from 'pino';
import { Graph } from '../graph/graph.js';
import { LatencyStore } from '../store/latency-store.js';
import type { ObjectStore } from '../store/object-store.js';
import { openStore } from '../store/open-store.js';
import type { Config } from './config.js';
import { BranchgraphService, type ServiceOptions } from './service.js';

/** Service settings from configuration. */
export function serviceOptions(config: Config, log?: Logger): ServiceOptions {
  return {
    defaultWidth: config.mergeWidth,
    budgetBytes: config.budgetBytes,
    wal: { shard: config.shard, sealAfterMs: config.sealAfterMs, generationRows: config.generationRows },
    catchUp: config.catchUp,
    ...(log ? { log } : {}),
  };
}

/** A service over a store the caller already holds (embedded use, test harnesses). */
export async function serviceOnStore(store: ObjectStore, opts: { actor: string; shard: string } & Omit<ServiceOptions, 'wal'>): Promise<BranchgraphService> {
  const { actor, shard, ...rest } = opts;
  return new BranchgraphService(await Graph.open(store, { actor }), { ...rest, wal: { shard } });
}

export async function openService(config: Config, log?: Logger): Promise<BranchgraphService> {
  let store = await openStore(config.store);
  if (config.storeLatencyMs > 0) store = new LatencyStore(store, config.storeLatencyMs);
  const graph = await Graph.open(store, { actor: config.actor });
  return new BranchgraphService(graph, serviceOptions(config, log));
}
