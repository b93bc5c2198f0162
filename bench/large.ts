/**
 * A big graph, a small change: 18 tables (12 node tables, six with an
 * `@unique` property, and 6 edge tables) holding ROWS rows in all, loaded
 * through the public write path in batches of 100,000 and checked after
 * loading; then HISTORY small commits with background compaction as a
 * server runs it; then a branch, and 100 updates on it and 100 on main,
 * each across 6 tables (3 tables changed on both sides). The same graph at
 * a hundredth of the size is built beside it.
 *
 * Each sample runs in a fresh process on the local directory (or, with
 * BENCH_STORE=s3, on a copy uploaded to the S3 server the environment
 * names, with its real round trips): open the
 * graph and resolve main (`cold_open_ms`), merge the branch into main
 * (time, store calls, bytes read, peak RSS), then, untimed, reset main to
 * where it was so the next sample merges the same change. Samples
 * alternate between the big and the small graph. Prints one JSON line.
 *
 *   tsx bench/large.ts ROWS SAMPLES [HISTORY]
 *   tsx bench/large.ts sample DIR [URL]    (one sample, used by the above)
 */
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { Graph } from '../src/graph/graph.js';
import type { WriteOp } from '../src/graph/write-batch.js';
import { verifyMergedRows } from './verify-merge.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { FIXTURE_ROOT, uploadFixture } from './fixtures.js';
import { openStore } from '../src/store/open-store.js';

const run = promisify(execFile);
const CTX = { transport: 'embedded' as const };
export const NODES = Array.from({ length: 12 }, (_, i) => `N${String(i).padStart(2, '0')}`);
const EDGES = Array.from({ length: 6 }, (_, i) => ({
  name: `E${String(i).padStart(2, '0')}`,
  from: NODES[i] as string,
  to: NODES[i + 1] as string,
}));
const UNIQUE = new Set(NODES.slice(0, 6));
const SCHEMA = [
  ...NODES.map(
    (n) => `node ${n} { id: string @key\n name: string\n email: string?${UNIQUE.has(n) ? ' @unique' : ''}\n score: int\n city: string }`,
  ),
  ...EDGES.map((e) => `edge ${e.name}: ${e.from} -> ${e.to} { w: int }`),
].join('\n');
const BATCH = 100_000;
const CITIES = ['Oslo', 'Lima', 'Kyiv', 'Pune', 'Graz', 'Nuuk', 'Baku', 'Cork'];

const nodeId = (table: string, i: number): string => `${table.toLowerCase()}-${String(i).padStart(8, '0')}`;
const nodeRow = (table: string, i: number) => ({
  id: nodeId(table, i),
  name: `name ${i}`,
  email: `${table.toLowerCase()}.${i}@example.org`,
  score: i % 1000,
  city: CITIES[i % CITIES.length] as string,
});
/** Where edge `i` of a table points, among `n` nodes per table: distinct pairs for up to n × (n - 1) edges. */
const edgeEnds = (i: number, n: number): { from: number; to: number } => ({ from: i % n, to: ((i % n) + 1 + Math.floor(i / n)) % n });

interface Layout {
  rows: number;
  perNode: number;
  perEdge: number;
}

export function layout(rows: number): Layout {
  const perNode = Math.floor((rows * 0.6) / NODES.length);
  return { rows, perNode, perEdge: Math.floor((rows - perNode * NODES.length) / EDGES.length) };
}

/** Every row of the graph, in batches of ops. */
function* loadBatches(l: Layout): Generator<WriteOp[]> {
  let batch: WriteOp[] = [];
  const flush = function* (): Generator<WriteOp[]> {
    if (batch.length >= BATCH) {
      yield batch;
      batch = [];
    }
  };
  for (const t of NODES)
    for (let i = 0; i < l.perNode; i++) {
      batch.push({ op: 'insert', table: t, values: nodeRow(t, i) });
      yield* flush();
    }
  for (const e of EDGES)
    for (let i = 0; i < l.perEdge; i++) {
      const { from, to } = edgeEnds(i, l.perNode);
      batch.push({ op: 'insert', table: e.name, values: { from: nodeId(e.from, from), to: nodeId(e.to, to), w: i % 100 } });
      yield* flush();
    }
  if (batch.length > 0) yield batch;
}

/** A side's 100 updates across 6 node tables, rows no other side touches. */
export function sideUpdates(l: Layout, tables: string[], side: number): WriteOp[] {
  return tables.flatMap((t, k) =>
    Array.from({ length: k < 4 ? 17 : 16 }, (_, j) => {
      // Spread over the table; the two sides take alternate rows, so they never meet.
      const i = (Math.max(1, Math.floor(l.perNode / 40)) * (2 * j + side) + 3) % l.perNode;
      return { op: 'update' as const, table: t, values: { id: nodeId(t, i), score: 5000 + side } };
    }),
  );
}

interface Built {
  dir: string;
  rows: number;
  loadMs: number;
  changedBytes: number;
  mainHead: string;
}

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

/** Build (or reuse) the graph of `rows` rows with `history` small commits (bench/remotes.ts clones it too). */
export async function buildLarge(rows: number, history: number): Promise<Built> {
  const dir = path.join(FIXTURE_ROOT, `large-${rows}-${history}`);
  const done = path.join(dir, 'built.json');
  if (await exists(done)) return JSON.parse(await readFile(done, 'utf8')) as Built;
  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true });
  const l = layout(rows);
  const service = await serviceOnStore(new FsStore(dir), { actor: 'bench', shard: 'bench', compaction: { background: true, delayMs: 50 } });
  service.start();
  const api = embeddedApi(service, CTX);
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  const t0 = performance.now();
  let loaded = 0;
  for (const ops of loadBatches(l)) {
    await api.write({ branch: 'main', ops });
    loaded += ops.length;
  }
  const loadMs = performance.now() - t0;
  await verifyLoad(api, service.graph, l);
  // History: small commits, compacted in the background as a server does.
  for (let c = 0; c < history; c++) {
    const t = NODES[c % NODES.length] as string;
    await api.write({
      branch: 'main',
      ops: [0, 1, 2].map((j) => ({ op: 'upsert' as const, table: t, values: { ...nodeRow(t, (c * 31 + j * 7) % l.perNode), score: c } })),
    });
  }
  await (service as { compactor?: { settled?: () => Promise<void> } }).compactor?.settled?.();
  const fork = (await service.graph.branchHead('main')).manifest;
  await api.createBranch({ name: 'feature', from: { branch: 'main' } });
  await api.write({ branch: 'feature', ops: sideUpdates(l, NODES.slice(0, 6), 0), message: 'feature: 100 updates' });
  await api.write({ branch: 'main', ops: sideUpdates(l, NODES.slice(3, 9), 1), message: 'main: 100 updates' });
  await service.close();
  // What changed since the fork, in stored bytes: the runs either side added.
  const g = await Graph.open(new FsStore(dir));
  let changedBytes = 0;
  for (const b of ['feature', 'main']) {
    const head = (await g.branchHead(b)).manifest;
    for (const [t, entry] of Object.entries(head.tables)) {
      const before = new Set((fork.tables[t]?.runs ?? []).map((r) => r.key));
      for (const r of entry.runs) if (!before.has(r.key)) changedBytes += r.bytes;
    }
  }
  const built: Built = { dir, rows: loaded, loadMs, changedBytes, mainHead: (await g.branchHead('main')).manifest.commit.id };
  await writeFile(done, JSON.stringify(built));
  return built;
}

/** Every table holds the rows loaded, and sampled rows read back as written. */
async function verifyLoad(api: ReturnType<typeof embeddedApi>, g: Graph, l: Layout): Promise<void> {
  const head = (await g.branchHead('main')).manifest;
  for (const t of NODES) {
    const picks = Array.from({ length: 50 }, (_, k) => Math.floor((k * l.perNode) / 50));
    const { items } = await api.lookupRows({ at: 'main', table: t, keys: picks.map((i) => nodeId(t, i)) });
    items.forEach((item, k) => {
      const want = nodeRow(t, picks[k] as number);
      if (item === null || item.row.email !== want.email || item.row.score !== want.score)
        throw new Error(`${t} ${want.id} did not load as written`);
    });
  }
  for (const t of [...NODES, ...EDGES.map((e) => e.name)]) {
    const total = head.tables[t]?.runs.reduce((n, r) => n + r.rows - r.tombstones, 0);
    const want = t.startsWith('N') ? l.perNode : l.perEdge;
    if (total !== want) throw new Error(`${t} holds ${total} rows, ${want} were loaded`);
  }
}

/** One sample in this process (cold): open, resolve main, merge, then put main back. */
async function sample(dir: string, url?: string): Promise<void> {
  const built = JSON.parse(await readFile(path.join(dir, 'built.json'), 'utf8')) as Built;
  const counting = new CountingStore(url === undefined ? new FsStore(dir) : await openStore(url));
  const t0 = performance.now();
  const g = await Graph.open(counting, { actor: 'bench' });
  await g.branchHead('main');
  const coldOpenMs = performance.now() - t0;
  const before = counting.snapshot().total;
  const t1 = performance.now();
  const r = await mergeBranches(g.ports, mergeSpec({ source: 'feature' }));
  const mergeMs = performance.now() - t1;
  if (r.status !== 'success' || r.outcome !== 'merged') throw new Error(`unexpected merge: ${JSON.stringify(r).slice(0, 300)}`);
  const after = counting.snapshot().total;
  const peakRssMiB = Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10;
  // Untimed: the merged rows against the reference (verify-merge.ts), then main back where it was, so
  // the next sample merges the same change.
  await verifyMergedRows(g, {
    base: r.base as string,
    source: r.sourceHead,
    target: r.targetHead,
    merged: (r.commit as { id: string }).id,
  });
  await g.resetBranch('main', { commit: built.mainHead }, { expectedHead: (r.commit as { id: string }).id });
  await g.close();
  process.stdout.write(
    `${JSON.stringify({
      coldOpenMs,
      mergeMs,
      storeCalls: after.calls - before.calls,
      bytesRead: after.bytesRead - before.bytesRead,
      peakRssMiB,
      phasesMs: r.metrics.phasesMs,
    })}\n`,
  );
}

async function sampleIn(
  dir: string,
  url: string | undefined,
): Promise<{ coldOpenMs: number; mergeMs: number; storeCalls: number; bytesRead: number; peakRssMiB: number }> {
  const args = [...process.execArgv, fileURLToPath(import.meta.url), 'sample', dir, ...(url !== undefined ? [url] : [])];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop() as string);
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))] as number;
};
const r2 = (x: number): number => Math.round(x * 100) / 100;

async function main(): Promise<void> {
  const rows = Number(process.argv[2] ?? 1_000_000);
  const samples = Number(process.argv[3] ?? 5);
  const history = Number(process.argv[4] ?? 300);
  const big = await buildLarge(rows, history);
  const small = await buildLarge(Math.round(rows / 100), history);
  const onS3 = process.env.BENCH_STORE === 's3';
  const copies = onS3 ? { big: await uploadFixture(big.dir), small: await uploadFixture(small.dir) } : undefined;
  const got: Record<'big' | 'small', Awaited<ReturnType<typeof sampleIn>>[]> = { big: [], small: [] };
  try {
    for (let s = 0; s < samples; s++)
      for (const which of s % 2 === 0 ? (['big', 'small'] as const) : (['small', 'big'] as const))
        got[which].push(await sampleIn((which === 'big' ? big : small).dir, copies?.[which].url));
  } finally {
    await copies?.big.done();
    await copies?.small.done();
  }
  const p50 = (w: 'big' | 'small', k: 'mergeMs' | 'coldOpenMs' | 'storeCalls' | 'bytesRead') =>
    pct(
      got[w].map((x) => x[k]),
      0.5,
    );
  process.stdout.write(
    `${JSON.stringify({
      rows: big.rows,
      tables: NODES.length + EDGES.length,
      history,
      samples,
      large_over_small: r2(p50('big', 'mergeMs') / p50('small', 'mergeMs')),
      merge_p50_ms: r2(p50('big', 'mergeMs')),
      merge_p95_ms: r2(
        pct(
          got.big.map((x) => x.mergeMs),
          0.95,
        ),
      ),
      small_merge_p50_ms: r2(p50('small', 'mergeMs')),
      bytes_read_over_changed_bytes: r2(p50('big', 'bytesRead') / big.changedBytes),
      bytes_read: p50('big', 'bytesRead'),
      changed_bytes: big.changedBytes,
      store_calls: p50('big', 'storeCalls'),
      small_store_calls: p50('small', 'storeCalls'),
      peak_rss_mib: Math.max(...got.big.map((x) => x.peakRssMiB)),
      cold_open_ms: r2(p50('big', 'coldOpenMs')),
      small_cold_open_ms: r2(p50('small', 'coldOpenMs')),
      load_rows_per_second: Math.round(big.rows / (big.loadMs / 1000)),
    })}\n`,
  );
}

// Run as a script only: bench/remotes.ts imports the fixture from here.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv[2] === 'sample') await sample(process.argv[3] as string, process.argv[4]);
  else await main();
}
