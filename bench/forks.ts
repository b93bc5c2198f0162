/**
 * Deep forks, in a fresh process: does reading a branch get slower the
 * deeper it was forked, and does creating a branch get slower with the
 * number of branches?
 *
 * Main holds ROWS rows, compacted. A chain of DEPTH branches follows, each
 * forked from the one before, each with one write (three new rows and one
 * update of a main row), with the size-tiered compaction a server runs in
 * the background after each. On a cold service over LATENCY ms per store
 * call, a whole-table scan and a point read of a row main wrote run on the
 * deepest branch and on main, ROUNDS times each, alternating, medians of
 * store calls and ms. Then branch creation: the median of 20 creations
 * when the graph holds 10 branches, and again when it holds BRANCHES.
 * Prints one JSON line.
 *
 *   tsx bench/forks.ts DEPTH ROWS BRANCHES LATENCY ROUNDS
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { allRows, getRow } from '../src/graph/reads.js';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';

const DEPTH = Number(process.argv[2] ?? 64);
const ROWS = Number(process.argv[3] ?? 100_000);
const BRANCHES = Number(process.argv[4] ?? 10_000);
const LATENCY = Number(process.argv[5] ?? 17);
const ROUNDS = Number(process.argv[6] ?? 5);
const SCHEMA = 'node Item { id: string @key\n v: int }';
const CTX = { transport: 'embedded' as const };
const id = (i: number): string => `item${String(i).padStart(7, '0')}`;
const POINT = id(Math.floor(ROWS / 2) + 1);

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const r1 = (x: number): number => Math.round(x * 10) / 10;

async function build(dir: string): Promise<string> {
  const service = await serviceOnStore(new FsStore(dir), { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, CTX);
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  for (let s = 0; s < ROWS; s += 50_000)
    await api.write({
      branch: 'main',
      ops: Array.from({ length: Math.min(50_000, ROWS - s) }, (_, k) => ({
        op: 'insert' as const,
        table: 'Item',
        values: { id: id(s + k), v: 0 },
      })),
    });
  await api.compact({ branch: 'main', mode: 'full' });
  let from = 'main';
  for (let level = 1; level <= DEPTH; level++) {
    const name = `d${level}`;
    await api.createBranch({ name, from: { branch: from } });
    await api.write({
      branch: name,
      ops: [
        ...[0, 1, 2].map((j) => ({
          op: 'insert' as const,
          table: 'Item',
          values: { id: `lvl${String(level).padStart(3, '0')}-${j}`, v: level },
        })),
        { op: 'update' as const, table: 'Item', values: { id: id(level * 7), v: level } },
      ],
    });
    await api.compact({ branch: name, mode: 'tiered' });
    from = name;
  }
  await service.close();
  return from;
}

/** One cold read on `branch`: a fresh service, its store calls and time. */
async function coldRead(dir: string, branch: string, kind: 'scan' | 'point'): Promise<{ calls: number; ms: number; rows: number }> {
  const store = new CountingStore(new LatencyStore(new FsStore(dir), LATENCY));
  const service = await serviceOnStore(store, { actor: 'reader', shard: 'reader' });
  store.reset();
  const t0 = performance.now();
  const snap = await service.graph.branchHead(branch);
  const read = { tables: service.graph.ports.tables, snap, table: 'Item' };
  const rows = kind === 'scan' ? (await allRows(read)).length : (await getRow({ ...read, key: POINT })) === null ? 0 : 1;
  const ms = performance.now() - t0;
  const calls = store.snapshot().total.calls;
  await service.close();
  return { calls, ms, rows };
}

/**
 * The median of 20 branch creations (each deleted again) in a graph that already holds `count`
 * branches, on a warm service over LATENCY ms per store call. The graph is filled without latency.
 */
async function branchCreation(count: number): Promise<{ ms: number; calls: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-forks-branches-'));
  const filler = await serviceOnStore(new FsStore(dir), { actor: 'filler', shard: 'filler' });
  const fill = embeddedApi(filler, CTX);
  await fill.applySchema({ branch: 'main', schema: SCHEMA });
  await fill.write({ branch: 'main', ops: [{ op: 'insert', table: 'Item', values: { id: id(0), v: 0 } }] });
  for (let i = 1; i < count; i++) await fill.createBranch({ name: `b${String(i).padStart(6, '0')}` });
  await filler.close();
  const store = new CountingStore(new LatencyStore(new FsStore(dir), LATENCY));
  const service = await serviceOnStore(store, { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, CTX);
  const ms: number[] = [];
  const calls: number[] = [];
  for (let i = 0; i < 20; i++) {
    store.reset();
    const t = performance.now();
    await api.createBranch({ name: `probe${i}` });
    ms.push(performance.now() - t);
    calls.push(store.snapshot().total.calls);
    await api.deleteBranch({ name: `probe${i}` });
  }
  await service.close();
  await rm(dir, { recursive: true, force: true });
  return { ms: median(ms), calls: median(calls) };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-forks-'));
  const t0 = performance.now();
  const deepest = await build(dir);
  const buildMs = performance.now() - t0;
  const figures: Record<string, number> = {};
  for (const kind of ['scan', 'point'] as const) {
    const arms: Record<'main' | 'deep', { calls: number; ms: number; rows: number }[]> = { main: [], deep: [] };
    for (let r = 0; r < ROUNDS; r++)
      for (const arm of r % 2 === 0 ? (['main', 'deep'] as const) : (['deep', 'main'] as const))
        arms[arm].push(await coldRead(dir, arm === 'main' ? 'main' : deepest, kind));
    const expected = kind === 'scan' ? { main: ROWS, deep: ROWS + 3 * DEPTH } : { main: 1, deep: 1 };
    for (const arm of ['main', 'deep'] as const)
      if (arms[arm].some((x) => x.rows !== expected[arm]))
        throw new Error(`${kind} on ${arm} read ${arms[arm][0]?.rows} rows, not ${expected[arm]}`);
    const ms = (arm: 'main' | 'deep') => median(arms[arm].map((x) => x.ms));
    const calls = (arm: 'main' | 'deep') => median(arms[arm].map((x) => x.calls));
    figures[`${kind}_main_ms`] = r1(ms('main'));
    figures[`${kind}_deep_ms`] = r1(ms('deep'));
    figures[`${kind}_main_calls`] = calls('main');
    figures[`${kind}_deep_calls`] = calls('deep');
    figures[`read_deep_over_main_${kind}`] = Math.round((ms('deep') / ms('main')) * 100) / 100;
  }

  await rm(dir, { recursive: true, force: true });
  const small = await branchCreation(10);
  const large = await branchCreation(BRANCHES);
  process.stdout.write(
    `${JSON.stringify({
      depth: DEPTH,
      rows: ROWS,
      latencyMs: LATENCY,
      rounds: ROUNDS,
      build_ms: Math.round(buildMs),
      ...figures,
      branch_create_ms_at_10: r1(small.ms),
      branch_create_calls_at_10: small.calls,
      [`branch_create_ms_at_${BRANCHES}`]: r1(large.ms),
      [`branch_create_calls_at_${BRANCHES}`]: large.calls,
      [`branch_create_at_${BRANCHES}_over_at_10`]: Math.round((large.ms / small.ms) * 100) / 100,
      peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
    })}\n`,
  );
}

await main();
