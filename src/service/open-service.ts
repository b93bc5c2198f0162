/**
 * The one way to build a service from configuration: open the store (with
 * injected latency when asked), open the graph, apply the service settings.
 * The HTTP server and the embedded CLI both come through here, so they
 * cannot drift apart in how they read the same configuration.
 */
import type { Logger } from 'pino';
import { Graph, type GraphOptions } from '../graph/graph.js';
import { LatencyStore } from '../store/latency-store.js';
import { TracedStore } from './tracing.js';
import { ObservedStore } from '../store/observed-store.js';
import type { ObjectStore } from '../store/object-store.js';
import { openStore } from '../store/open-store.js';
import type { Config } from './config.js';
import { BranchgraphService, type ServiceOptions } from './service.js';
import { GraphHost } from './graph-host.js';
import { embedderOf } from './embedders.js';
import { ManagedTokens } from './managed-tokens.js';
import { observeStoreCall } from './metrics.js';

/** Service settings from configuration. */
export function serviceOptions(config: Config, log?: Logger): ServiceOptions {
  return {
    defaultWidth: config.mergeWidth,
    budgetBytes: config.budgetBytes,
    wal: { shard: config.shard, sealAfterMs: config.sealAfterMs, generationRows: config.generationRows },
    catchUp: config.catchUp,
    compaction: config.compaction,
    maxIngestBytes: config.maxIngestBytes,
    maxBodyBytes: config.maxBodyBytes,
    hooks: config.hooks,
    expiry: config.expiry,
    ...(log ? { log } : {}),
  };
}

/** A service over a store the caller already holds (embedded use, test harnesses, hosted graphs). */
export async function serviceOnStore(
  store: ObjectStore,
  opts: { actor: string; shard: string; graph?: Omit<GraphOptions, 'actor'> } & Omit<ServiceOptions, 'wal'>,
): Promise<BranchgraphService> {
  const { actor, shard, graph, ...rest } = opts;
  return new BranchgraphService(await Graph.open(store, { ...graph, actor }), { ...rest, wal: { shard } });
}

/** The configured store (or one the caller holds), with injected latency when asked, its calls timed for the metrics. */
async function configuredStore(config: Config, held?: ObjectStore): Promise<ObjectStore> {
  const store = held ?? (await openStore(config.store));
  const timed = config.storeLatencyMs > 0 ? new LatencyStore(store, config.storeLatencyMs) : store;
  return new ObservedStore(new TracedStore(timed), observeStoreCall);
}

function onStore(
  config: Config,
  at: { log?: Logger | undefined; tokens?: ManagedTokens; clock?: () => number },
): (store: ObjectStore) => Promise<BranchgraphService> {
  const opts = { ...serviceOptions(config, at.log), ...(at.tokens !== undefined ? { tokens: at.tokens } : {}) };
  return async (store) =>
    new BranchgraphService(
      await Graph.open(store, {
        actor: config.actor,
        partBytes: config.manifestPartBytes,
        hookRefreshMs: config.hookRefreshMs,
        embedder: embedderOf(config.embedder),
        ...(at.clock !== undefined ? { clock: at.clock } : {}),
        ...(config.compaction.inline ? {} : { inlineCompaction: false }),
      }),
      opts,
    );
}

/** A service over the configured store (with injected latency when configured), opening the graph and creating `main` in an empty store. */
export async function openService(config: Config, log?: Logger): Promise<BranchgraphService> {
  return onStore(config, { log })(await configuredStore(config));
}

/**
 * The default graph and the named graphs hosted beside it in the configured store, all honouring
 * the managed tokens kept at the store's root. `clock` replaces the wall clock (tests of expiry).
 */
export async function openGraphHost(
  config: Config,
  at: { log?: Logger | undefined; store?: ObjectStore | undefined; clock?: (() => number) | undefined } = {},
): Promise<GraphHost> {
  const store = await configuredStore(config, at.store);
  const tokens = new ManagedTokens(store, at.clock);
  const open = onStore(config, { log: at.log, tokens, ...(at.clock !== undefined ? { clock: at.clock } : {}) });
  return new GraphHost({ root: await open(store), store, open, ...(at.clock !== undefined ? { clock: at.clock } : {}) });
}
