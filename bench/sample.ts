/**
 * One timed sample in a fresh process: open a copy of a fixture (cold
 * caches), run the merge, print one JSON line with time, store calls,
 * phases and peak memory.
 */
import { rm } from 'node:fs/promises';
import pino from 'pino';
import { Graph } from '../src/graph/graph.js';
import { startServer } from '../src/http/server.js';
import { RestClient } from '../src/http/rest-client.js';
import { mergeBranches } from '../src/merge/merge.js';
import { loadConfig } from '../src/service/config.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';
import { copyFixture } from './fixtures.js';

const [fixture, variant, latencyArg] = process.argv.slice(2);
const latency = Number(latencyArg ?? 0);
const dir = await copyFixture(fixture as string);
try {
  let result;
  let ms: number;
  if (variant === 'http') {
    const server = await startServer(loadConfig({}, { store: `file://${dir}`, port: '0', 'store-latency-ms': String(latency) }), pino({ level: 'silent' }));
    // Warm the HTTP client and server once, as any long-running client would be.
    await fetch(`${server.url}/healthz`);
    const t0 = performance.now();
    result = await new RestClient(server.url).merge('feature', {});
    ms = performance.now() - t0;
    await server.close();
  } else {
    const width = variant === 'width4' ? 4 : variant === 'width2' ? 2 : 1;
    const store = latency > 0 ? new LatencyStore(new FsStore(dir), latency) : new FsStore(dir);
    const g = await Graph.open(store, { actor: 'bench' });
    const t0 = performance.now();
    result = await mergeBranches(g, { source: 'feature', width });
    ms = performance.now() - t0;
  }
  if (result.status !== 'success' || result.outcome !== 'merged') throw new Error(`unexpected merge result ${JSON.stringify(result).slice(0, 300)}`);
  const m = result.metrics;
  process.stdout.write(
    JSON.stringify({
      ms,
      phasesMs: m.phasesMs,
      storeCalls: Object.fromEntries(Object.entries(m.storeCalls).map(([op, c]) => [op, c.calls])),
      bytesRead: m.storeCalls.total.bytesRead,
      maxWidth: m.maxWidth,
      peakRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    }) + '\n',
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
