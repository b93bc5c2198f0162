/**
 * One timed sample in a fresh process: open a copy of a fixture (cold
 * caches), run the merge (or the catch-up), check its rows outside the
 * timing, print one JSON line with time, store calls, phases and peak
 * memory.
 */
import { rm } from 'node:fs/promises';
import pino from 'pino';
import { Graph } from '../src/graph/graph.js';
import { startServer } from '../src/http/server.js';
import { RestClient } from '../src/http/rest-client.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import { loadConfig } from '../src/service/config.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';
import type { ObjectStore } from '../src/store/object-store.js';
import { copyFixture, uploadFixture } from './fixtures.js';
import { readFile } from 'node:fs/promises';
import { catchUp } from '../src/wal/catch-up.js';
import { allRows } from '../src/graph/reads.js';
import { verifyMergedRows } from './verify-merge.js';

/**
 * Where a sample's graph lives: its local copy, with `latency` ms injected per call, or under
 * BENCH_STORE=s3 that copy uploaded under a fresh prefix of the S3 server the environment names
 * (S3_ENDPOINT and its keys), read with its real round trips. `url` opens the same store in a server.
 */
async function sampleStore(
  dir: string,
  latency: number,
): Promise<{ store: ObjectStore; url: string; latency: number; done: () => Promise<void> }> {
  const local = new FsStore(dir);
  if (process.env.BENCH_STORE !== 's3')
    return { store: latency > 0 ? new LatencyStore(local, latency) : local, url: `file://${dir}`, latency, done: async () => {} };
  return { ...(await uploadFixture(dir)), latency: 0 };
}

/** `catchup-<serial|pipeline>-<cap>`: fold every pending generation, then verify every row. */
async function catchUpSample(a: { variant: string; dir: string; latency: number; fixtureDir: string }): Promise<void> {
  const { variant, dir, latency, fixtureDir } = a;
  const [, mode, cap] = variant.split('-');
  const at = await sampleStore(dir, latency);
  const g = await Graph.open(at.store, { actor: 'bench' });
  const t0 = performance.now();
  const r = await catchUp(g.ports, 'main', { pipeline: mode === 'pipeline', maxGenerations: Number(cap) });
  const ms = performance.now() - t0;
  // Verification is outside the timing: zero pending, and every row exactly as the fixture wrote it last.
  const expected = JSON.parse(await readFile(`${fixtureDir}.expected.json`, 'utf8')) as Record<string, { shard: string; gen: number }>;
  const head = await g.branchHead('main');
  if (head.pending.generations.length !== 0 || r.pendingAfter !== 0)
    throw new Error(`${head.pending.generations.length} generations still pending`);
  const rows = await allRows({ tables: g.ports.tables, snap: head, table: 'Doc' });
  if (rows.length !== Object.keys(expected).length) throw new Error(`expected ${Object.keys(expected).length} rows, found ${rows.length}`);
  for (const row of rows) {
    const want = expected[row.key];
    if (want === undefined || row.row.shard !== want.shard || row.row.gen !== want.gen)
      throw new Error(`row ${row.key} is ${JSON.stringify([row.row.shard, row.row.gen])}, expected ${JSON.stringify(want)}`);
  }
  process.stdout.write(
    `${JSON.stringify({
      ms,
      phasesMs: {
        ...r.phasesMs,
        batches: r.batches,
        overlapped: r.overlapped,
        generationsPerSecond: Math.round((r.generations / ms) * 1000 * 10) / 10,
      },
      storeCalls: Object.fromEntries(Object.entries(r.storeCalls).map(([op, c]) => [op, c.calls])),
      bytesRead: r.storeCalls.total.bytesRead,
      maxWidth: r.maxAlive,
      peakRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    })}\n`,
  );
  await g.close();
  await at.done();
}

/** Check a landed merge's rows (bench/verify-merge.ts), then close the graph; a conflict report has none to check. */
async function verified(
  g: Graph,
  result: { status: string; commit?: { id: string } | null; base?: string | null; sourceHead: string; targetHead: string },
): Promise<void> {
  try {
    if (result.status === 'success' && result.commit != null && result.base != null)
      await verifyMergedRows(g, { base: result.base, source: result.sourceHead, target: result.targetHead, merged: result.commit.id });
  } finally {
    await g.close();
  }
}

const [fixture, variant, latencyArg] = process.argv.slice(2);
const latency = Number(latencyArg ?? 0);
const dir = await copyFixture(fixture as string);
try {
  if (variant?.startsWith('catchup-')) {
    await catchUpSample({ variant, dir, latency, fixtureDir: fixture as string });
    process.exit(0);
  }
  let result;
  let ms: number;
  if (variant === 'http') {
    const at = await sampleStore(dir, latency);
    const server = await startServer(
      loadConfig(process.env, { store: at.url, port: '0', 'store-latency-ms': String(at.latency) }),
      pino({ level: 'silent' }),
    );
    // Warm the HTTP client and the request path (routing, body parsing, input validation, error
    // envelope) once, as in any long-running server: a merge request refused for its input never
    // reaches the engine or the store, so caches stay as cold as in the embedded arm.
    await fetch(`${server.url}/healthz`);
    const refused = await fetch(`${server.url}/branches/feature/merge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ width: 3 }),
    });
    if (refused.status !== 400) throw new Error(`warm-up request was not refused: ${refused.status}`);
    const t0 = performance.now();
    result = await new RestClient(server.url).mergeBranch({ source: 'feature' });
    ms = performance.now() - t0;
    await server.close();
    await verified(await Graph.open(at.store, { actor: 'check' }), result);
    await at.done();
  } else {
    const width = variant === 'width4' ? 4 : variant === 'width2' ? 2 : 1;
    const at = await sampleStore(dir, latency);
    const g = await Graph.open(at.store, { actor: 'bench' });
    let source = 'feature';
    if (variant === 'warm') {
      // A warm process: the fixture's merge once, untimed; then both sides change again (a new
      // branch from the merged main, and main itself, on the same table), and that second merge
      // is timed, finding what it reads of main in this process's caches, as a server would.
      const first = await mergeBranches(g.ports, mergeSpec({ source }));
      if (first.status !== 'success' || first.commit === null) throw new Error('the warm-up merge did not land');
      const table = (await g.branchHead('main')).schema.types[0]?.name as string;
      source = 'feature-2';
      await g.createBranch(source, { branch: 'main' });
      await g.write(source, [{ op: 'update', table, values: { id: 'r1', a: 2 } }]);
      await g.write('main', [{ op: 'update', table, values: { id: 'r3', b: 2 } }]);
    }
    const t0 = performance.now();
    // `unresolved` expects the conflict report; `resolved` lands the same merge with a strategy.
    result = await mergeBranches(
      g.ports,
      mergeSpec({
        source,
        width,
        ...(variant === 'resolved' ? { resolutions: { strategy: 'source-wins' as const } } : {}),
      }),
    );
    ms = performance.now() - t0;
    // Outside the timing: the merged rows against the reference, and best-effort writes the merge
    // started (its branch hint) finish before the copy goes.
    await verified(g, result);
    await at.done();
  }
  const expected = variant === 'unresolved' ? 'conflicts' : 'merged';
  if ((result.status === 'success' ? result.outcome : 'conflicts') !== expected)
    throw new Error(`unexpected merge result ${JSON.stringify(result).slice(0, 300)}`);
  const m = result.metrics;
  process.stdout.write(
    `${JSON.stringify({
      ms,
      phasesMs: m.phasesMs,
      storeCalls: Object.fromEntries(Object.entries(m.storeCalls).map(([op, c]) => [op, c.calls])),
      bytesRead: m.storeCalls.total.bytesRead,
      roundTrips: m.dependentRoundTrips,
      maxWidth: m.maxWidth,
      peakRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10,
    })}\n`,
  );
} finally {
  await rm(dir, { recursive: true, force: true });
}
