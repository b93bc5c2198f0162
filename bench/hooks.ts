/**
 * What webhooks cost the change that causes them, and how fast they are
 * delivered, in a fresh process: a service on a local directory with
 * LATENCY ms per store call, and a local HTTP receiver answering 204.
 *
 * Arms with 0, 1 and 4 event hooks (each subscribed to `commit`) take turns
 * in blocks of BLOCK one-row writes to main, the order rotating each round,
 * ROUNDS rounds. Per arm: the writes' p50/p95 milliseconds and median store
 * calls (the change never waits for a delivery, so they should match the
 * arm without hooks). Per delivery: the time from the write's
 * acknowledgement to the receiver's arrival, p50/p95. Then a burst of
 * BURST writes with 4 hooks by 16 writers at once, each on its own branch
 * (so each write is its own commit and event): deliveries per second from
 * the first write to the last arrival, and how long delivery trailed the
 * last write. Prints one JSON line.
 *
 *   tsx bench/hooks.ts ROUNDS BLOCK LATENCY BURST
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Graph } from '../src/graph/graph.js';
import { embeddedApi } from '../src/service/api.js';
import { DEFAULT_HOOK_SETTINGS } from '../src/service/hook-dispatcher.js';
import { BranchgraphService } from '../src/service/service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';

const ROUNDS = Number(process.argv[2] ?? 6);
const BLOCK = Number(process.argv[3] ?? 10);
const LATENCY = Number(process.argv[4] ?? 17);
const BURST = Number(process.argv[5] ?? 200);
const ARMS = [0, 1, 4] as const;

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};
const r1 = (x: number): number => Math.round(x * 10) / 10;

/** A receiver that notes when each commit's delivery arrived, per hook. */
async function receiver(): Promise<{ url: string; arrived: Map<string, number[]>; count: () => number; close: () => Promise<void> }> {
  const arrived = new Map<string, number[]>();
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = performance.now();
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { event: { commit?: string } };
      const commit = body.event.commit ?? '';
      arrived.set(commit, [...(arrived.get(commit) ?? []), at]);
      n++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrived,
    count: () => n,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-hooks-'));
  const store = new CountingStore(new LatencyStore(new FsStore(dir), LATENCY));
  const hooks = { ...DEFAULT_HOOK_SETTINGS, allowlist: ['127.0.0.1'] };
  const service = new BranchgraphService(await Graph.open(store, { actor: 'bench' }), { hooks, wal: { shard: 'bench' } });
  const api = embeddedApi(service, { transport: 'embedded', actor: 'bench' });
  const rx = await receiver();
  await api.applySchema({ branch: 'main', schema: 'node Person { id: string @key\n n: int }' });

  const registered: string[] = [];
  const useHooks = async (n: number): Promise<void> => {
    while (registered.length > n) await api.deleteHook({ id: registered.pop() as string });
    while (registered.length < n) registered.push((await api.createHook({ url: rx.url, events: ['commit'] })).id);
  };
  const settle = async (expected: number): Promise<void> => {
    while (rx.count() < expected) await new Promise((r) => setTimeout(r, 5));
  };
  const acked = new Map<string, number>();
  const writes: Record<number, { ms: number; calls: number }[]> = { 0: [], 1: [], 4: [] };
  let expected = 0;
  let i = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const order = ARMS.map((_, k) => ARMS[(k + round) % ARMS.length] as number);
    for (const arm of order) {
      await useHooks(arm);
      for (let b = 0; b < BLOCK; b++) {
        store.reset();
        const t0 = performance.now();
        const r = await api.write({ branch: 'main', ops: [{ op: 'upsert', table: 'Person', values: { id: `p${i % 50}`, n: i } }] });
        const t1 = performance.now();
        i++;
        if (r.commit !== null) acked.set(r.commit.id, t1);
        writes[arm]?.push({ ms: t1 - t0, calls: store.snapshot().total.calls });
        expected += arm;
      }
    }
  }
  await settle(expected);
  const deliveryMs: number[] = [];
  for (const [commit, times] of rx.arrived) {
    const at = acked.get(commit);
    if (at !== undefined) for (const t of times) deliveryMs.push(t - at);
  }

  // The burst: sixteen writers on their own branches with four hooks, until every delivery arrived.
  const WRITERS = 16;
  for (let w = 0; w < WRITERS; w++) await api.createBranch({ name: `w${w}` });
  await useHooks(4);
  const before = rx.count();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      for (let b = w; b < BURST; b += WRITERS)
        await api.write({ branch: `w${w}`, ops: [{ op: 'upsert', table: 'Person', values: { id: `q${b % 50}`, n: b } }] });
    }),
  );
  const written = performance.now();
  await settle(before + 4 * BURST);
  const burstMs = performance.now() - t0;

  await service.close();
  await rx.close();
  await rm(dir, { recursive: true, force: true });
  const p = (arm: number, q: number) =>
    r1(
      quantile(
        (writes[arm] ?? []).map((w) => w.ms),
        q,
      ),
    );
  const calls = (arm: number) =>
    quantile(
      (writes[arm] ?? []).map((w) => w.calls),
      0.5,
    );
  process.stdout.write(
    `${JSON.stringify({
      rounds: ROUNDS,
      block: BLOCK,
      latencyMs: LATENCY,
      write_p50_ms_0_hooks: p(0, 0.5),
      write_p95_ms_0_hooks: p(0, 0.95),
      write_p50_ms_1_hook: p(1, 0.5),
      write_p95_ms_1_hook: p(1, 0.95),
      write_p50_ms_4_hooks: p(4, 0.5),
      write_p95_ms_4_hooks: p(4, 0.95),
      write_calls_0_hooks: calls(0),
      write_calls_1_hook: calls(1),
      write_calls_4_hooks: calls(4),
      write_p50_4_hooks_over_0: Math.round((p(4, 0.5) / p(0, 0.5)) * 100) / 100,
      deliveries: deliveryMs.length,
      delivery_p50_ms: r1(quantile(deliveryMs, 0.5)),
      delivery_p95_ms: r1(quantile(deliveryMs, 0.95)),
      burst_writes: BURST,
      burst_writes_per_second: r1(BURST / ((written - t0) / 1000)),
      burst_deliveries_per_second: r1((4 * BURST) / (burstMs / 1000)),
      burst_drain_after_last_write_ms: r1(burstMs - (written - t0)),
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    })}\n`,
  );
}

await main();
