/**
 * One arm of the growth matrix in a fresh process: run a workload that
 * repeats an ordinary operation many times and measure how its cost moves
 * from the first repetitions to the last. Prints one JSON line.
 *
 *   writes N [no-compaction]
 *                    N single-row upserts on one table through a started
 *                    service (bytes written per write, storage per row, a
 *                    1,000-row scan and a cold point read afterwards, against
 *                    a freshly loaded table); background compaction on
 *                    unless `no-compaction`
 *   branches R       R rounds of branch → write → merge → delete (merge time
 *                    and head manifest size, first rounds against last)
 *   tables T         a one-row write in a graph of T tables (metadata bytes)
 *   writers W L      W concurrent writers on one branch with L ms per store
 *                    call (commits per second, contention errors)
 *   compacted-merge N
 *                    a 1,000-change merge (500 per side) into an N-row table
 *                    after both sides were fully compacted: bytes the merge
 *                    reads over the table's bytes, and its time
 *   git-scale N      the same merge by Git (bench/git-peer.ts)
 *   git-branches R   the branches arm's rounds by Git
 */
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Graph } from '../src/graph/graph.js';
import { getRow, scanRows } from '../src/graph/reads.js';
import type { Snapshot } from '../src/graph/snapshot.js';
import { isBranchgraphError } from '../src/model/errors.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';
import type { ObjectStore } from '../src/store/object-store.js';
import { entityPath, GitPeer } from './git-peer.js';
import { storedText } from '../src/model/compress-stored.js';
import { embeddedApi } from '../src/service/api.js';

const SCHEMA = 'node Item { id: string @key\n v: int\n note: string? }';
const id = (i: number): string => `item${String(i).padStart(7, '0')}`;
const sum = (xs: number[]): number => xs.reduce((a, b) => a + b, 0);
const round = (x: number, d = 3): number => Math.round(x * 10 ** d) / 10 ** d;

/** Bytes the store holds; a file that vanishes while it is listed (a temporary file being renamed into place) counts nothing. */
async function dirBytes(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += (await stat(path.join(e.parentPath, e.name)).catch(() => undefined))?.size ?? 0;
  return n;
}

async function freshDir(): Promise<string> {
  return mkdtemp(path.join(tmpdir(), 'bg-growth-'));
}

/** Store calls and time of `fn` on a cold graph over `store`. */
async function cold<T>(store: ObjectStore, fn: (g: Graph) => Promise<T>): Promise<{ ms: number; calls: number; value: T }> {
  const counting = new CountingStore(store);
  const g = await Graph.open(counting, { actor: 'bench' });
  const before = counting.snapshot().total.calls;
  const t0 = performance.now();
  const value = await fn(g);
  return { ms: performance.now() - t0, calls: counting.snapshot().total.calls - before, value };
}

/**
 * The scan-after-writes figure. A cold 1,000-row scan takes 3-5 ms, so one
 * pause doubles a single sample: each state's figure is the median of
 * SCAN_PAIRS alternating pairs. The states are the table as compaction left
 * it at each quarter of the writes (not waited for) and once it settled, so
 * the worst state says how far a read depends on where compaction stands.
 */
const SCAN_PAIRS = 9;
const SCAN_STATES = 4;
type ScanAt = (g: Graph) => Promise<Snapshot>;
const atHead: ScanAt = (g) => g.branchHead('main');

/** A cold scan's time, the snapshot resolved untimed (a commit id and a branch name resolve in different calls). */
async function coldScan(dir: string, at: ScanAt, latencyMs = 0): Promise<number> {
  const g = await Graph.open(latencyMs > 0 ? new LatencyStore(new FsStore(dir), latencyMs) : new FsStore(dir), { actor: 'bench' });
  const snap = await at(g);
  const t0 = performance.now();
  await scanRows({ tables: g.ports.tables, snap, table: 'Item', limit: 1000 });
  return performance.now() - t0;
}

/**
 * At 17 ms per store call a scan's time is its round trips, which noise on the local directory
 * hides: the same states, three alternating pairs each.
 */
const L17_PAIRS = 3;

/** Per state: median cold scans after the writes and of the fresh table, alternating which goes first. */
async function scanStates(dirs: { dir: string; freshDirPath: string }, states: readonly string[], latencyMs = 0) {
  const { dir, freshDirPath } = dirs;
  // One untimed scan of each first: the first scan in a process also compiles the read path.
  await coldScan(dir, atHead);
  await coldScan(freshDirPath, atHead);
  const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
  const out: { after: number[]; fresh: number[]; ratio: number }[] = [];
  for (const commit of states) {
    const at: ScanAt = (g) => g.commitSnapshot(commit);
    const after: number[] = [];
    const fresh: number[] = [];
    for (let p = 0; p < (latencyMs > 0 ? L17_PAIRS : SCAN_PAIRS); p++) {
      if (p % 2 === 0) {
        after.push(await coldScan(dir, at, latencyMs));
        fresh.push(await coldScan(freshDirPath, atHead, latencyMs));
      } else {
        fresh.push(await coldScan(freshDirPath, atHead, latencyMs));
        after.push(await coldScan(dir, at, latencyMs));
      }
    }
    out.push({ after, fresh, ratio: medianOf(after) / medianOf(fresh) });
  }
  return out;
}

/** Writes go through a started service, as a server runs them: background compaction included unless `compaction` is off. */
async function writes(n: number, compaction: boolean): Promise<Record<string, number | string>> {
  const dir = await freshDir();
  const counting = new BytesByKind(new FsStore(dir));
  const service = await serviceOnStore(counting, { actor: 'bench', shard: 'bench', compaction: { background: compaction, delayMs: 50 } });
  service.start();
  const ctx = { transport: 'embedded' as const };
  const g = service.graph;
  await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: SCHEMA });
  const written: number[] = [];
  const writtenMeta: number[] = [];
  const ms: number[] = [];
  let pointCallsAfter10 = 0;
  const states: string[] = [];
  for (let i = 0; i < n; i++) {
    const before = counting.snapshot().total.bytesWritten;
    const runBytesBefore = counting.runFileBytes;
    const t0 = performance.now();
    await embeddedApi(service, ctx).write({ branch: 'main', ops: [{ op: 'upsert', table: 'Item', values: { id: id(i), v: i } }] });
    ms.push(performance.now() - t0);
    // Bytes the write itself and any compaction it caused have written since the last write.
    written.push(counting.snapshot().total.bytesWritten - before);
    writtenMeta.push((written.at(-1) as number) - (counting.runFileBytes - runBytesBefore));
    // The table as compaction has left it so far, not waited for.
    if ((i + 1) % Math.ceil(n / SCAN_STATES) === 0 && i + 1 < n) states.push((await g.branchHead('main')).manifest.commit.id);
    if (i === 9)
      pointCallsAfter10 = (
        await cold(new FsStore(dir), (c) =>
          c.branchHead('main').then((h) => getRow({ tables: c.ports.tables, snap: h, table: 'Item', key: id(5) })),
        )
      ).calls;
  }
  // Older heads have no background compaction to wait for.
  await (service as { compactor?: { settled?: () => Promise<void> } }).compactor?.settled?.();
  const head = await g.branchHead('main');
  const storage = await dirBytes(dir);
  const point = await cold(new FsStore(dir), (c) =>
    c.branchHead('main').then((h) => getRow({ tables: c.ports.tables, snap: h, table: 'Item', key: id(5) })),
  );
  // The same rows loaded in one write.
  const freshDirPath = await freshDir();
  const fresh = await Graph.open(new FsStore(freshDirPath), { actor: 'bench' });
  await fresh.applySchema('main', SCHEMA);
  await fresh.write(
    'main',
    Array.from({ length: n }, (_, i) => ({ op: 'upsert' as const, table: 'Item', values: { id: id(i), v: i } })),
  );
  states.push(head.manifest.commit.id);
  const scans = await scanStates({ dir, freshDirPath }, states);
  const scans17 = await scanStates({ dir, freshDirPath }, states, 17);
  const ratios = scans.map((x) => x.ratio);
  const medianOf = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
  const manifest = (await counting.get(`manifests/${head.manifest.lineage}/${String(head.manifest.version).padStart(12, '0')}.json`))
    .length;
  await service.close();
  await fresh.close();
  await rm(dir, { recursive: true, force: true });
  await rm(freshDirPath, { recursive: true, force: true });
  return {
    writes: n,
    compaction: compaction ? 1 : 0,
    write_bytes_first100: sum(written.slice(0, 100)),
    write_bytes_last100: sum(written.slice(-100)),
    write_bytes_last_over_first: round(sum(written.slice(-100)) / sum(written.slice(0, 100))),
    // Everything but run files: what would grow if history leaked into each commit. Run files
    // grow as the log of the rows by design (each row is rewritten once per compaction tier).
    write_meta_bytes_first100: sum(writtenMeta.slice(0, 100)),
    write_meta_bytes_last100: sum(writtenMeta.slice(-100)),
    write_meta_bytes_last_over_first: round(sum(writtenMeta.slice(-100)) / sum(writtenMeta.slice(0, 100))),
    write_ms_first100: round(sum(ms.slice(0, 100)) / 100, 2),
    write_ms_last100: round(sum(ms.slice(-100)) / 100, 2),
    storage_bytes: storage,
    storage_bytes_per_row: Math.round(storage / n),
    runs_after: head.tables.Item?.runs.length ?? 0,
    head_manifest_bytes: manifest,
    scan_ms_after_writes: round(medianOf(scans.flatMap((x) => x.after)), 2),
    scan_ms_fresh: round(medianOf(scans.flatMap((x) => x.fresh)), 2),
    // Worst and median over the states; every sample is below, per state.
    scan_after_writes_over_fresh: round(Math.max(...ratios)),
    scan_after_writes_over_fresh_median: round(medianOf(ratios)),
    ...Object.fromEntries(
      scans.flatMap((x, i) => [
        [`scan_state${i + 1}_over_fresh`, round(x.ratio)],
        [`scan_state${i + 1}_ms_after`, x.after.map((v) => round(v, 2)).join(' ')],
        [`scan_state${i + 1}_ms_fresh`, x.fresh.map((v) => round(v, 2)).join(' ')],
      ]),
    ),
    // The same at 17 ms per store call: round trips, the worst state and each.
    scan_after_writes_over_fresh_l17: round(Math.max(...scans17.map((x) => x.ratio))),
    ...Object.fromEntries(
      scans17.flatMap((x, i) => [
        [`scan_state${i + 1}_l17_over_fresh`, round(x.ratio)],
        [`scan_state${i + 1}_l17_ms_after`, x.after.map((v) => round(v, 1)).join(' ')],
        [`scan_state${i + 1}_l17_ms_fresh`, x.fresh.map((v) => round(v, 1)).join(' ')],
      ]),
    ),
    point_read_calls_after_writes: point.calls,
    point_read_calls_after_10_writes: pointCallsAfter10,
  };
}

/** Counts the bytes of create-only writes by the first segment of their keys (runs, manifests, parts, ...). */
class BytesByKind extends CountingStore {
  readonly byKind = new Map<string, number>();
  /** Bytes of run files (Arrow runs, their segments and indexes, compact runs); not lists of replaced runs. */
  runFileBytes = 0;
  override async putIfAbsent(key: string, body: Uint8Array, opts?: Parameters<ObjectStore['putIfAbsent']>[2]): Promise<void> {
    const kind = key.split('/')[0] as string;
    this.byKind.set(kind, (this.byKind.get(kind) ?? 0) + body.length);
    if (kind === 'runs' && !key.endsWith('.replaced.json')) this.runFileBytes += body.length;
    this.noteMeta(key, body);
    return super.putIfAbsent(key, body, opts);
  }
  /** Bytes of merge publications: each merge manifest with the parts written since the manifest before it. */
  mergeManifestBytes = 0;
  private partsSinceManifest = 0;
  protected noteMeta(key: string, body: Uint8Array): void {
    if (key.startsWith('parts/')) this.partsSinceManifest += body.length;
    if (!key.startsWith('manifests/')) return;
    // A publication writes its parts, then its manifest; a background compaction's never count as a merge's.
    const commit = (JSON.parse(storedText(body)) as { commit?: { kind?: string } }).commit;
    if (commit?.kind === 'merge') this.mergeManifestBytes += this.partsSinceManifest + body.length;
    this.partsSinceManifest = 0;
  }
}

async function branches(rounds: number): Promise<Record<string, number>> {
  const dir = await freshDir();
  const store = new BytesByKind(new FsStore(dir));
  // Through a started service, as a server runs them: background compaction included.
  const service = await serviceOnStore(store, { actor: 'bench', shard: 'bench', compaction: { background: true, delayMs: 50 } });
  service.start();
  const ctx = { transport: 'embedded' as const };
  const g = service.graph;
  const upsert = (i: number, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'Item', values: { id: id(i), v } }] });
  await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: SCHEMA });
  await embeddedApi(service, ctx).write({ branch: 'main', ...upsert(0, 0) });
  const mergeMs: number[] = [];
  const manifestBytes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const b = `b${r}`;
    await embeddedApi(service, ctx).createBranch({ name: b, from: { branch: 'main' } });
    await embeddedApi(service, ctx).write({ branch: b, ...upsert(r + 1, r) });
    // Main moves too, so every merge is a real three-way merge.
    await embeddedApi(service, ctx).write({ branch: 'main', ...upsert(0, r + 1) });
    const t0 = performance.now();
    const metaBefore = store.mergeManifestBytes;
    const m = await embeddedApi(service, ctx).mergeBranch({ source: b, deleteBranch: true });
    mergeMs.push(performance.now() - t0);
    if (m.status !== 'success' || m.outcome !== 'merged') throw new Error(`round ${r}: ${JSON.stringify(m).slice(0, 200)}`);
    // Untimed: both sides' rows on main (the branch's new row, main's own update).
    const got = await embeddedApi(service, ctx).lookupRows({ table: 'Item', keys: [id(r + 1), id(0)] });
    if (JSON.stringify(got.items.map((x) => x?.row.v ?? null)) !== JSON.stringify([r, r + 1]))
      throw new Error(`round ${r}: merged rows ${JSON.stringify(got.items)}`);
    // What the merge published: its manifest and the part tree nodes it wrote. A background compaction
    // publishing during the merge is not counted: it landed in some rounds' windows and not others'.
    manifestBytes.push(store.mergeManifestBytes - metaBefore);
  }
  const head = (await g.branchHead('main')).manifest;
  await service.close();
  await rm(dir, { recursive: true, force: true });
  const k = Math.min(100, Math.floor(rounds / 10));
  return {
    rounds,
    merge_ms_first: round(sum(mergeMs.slice(0, k)) / k, 2),
    merge_ms_last: round(sum(mergeMs.slice(-k)) / k, 2),
    merge_last_over_first_branches: round(sum(mergeMs.slice(-k)) / sum(mergeMs.slice(0, k))),
    manifest_bytes_first: Math.round(sum(manifestBytes.slice(0, k)) / k),
    manifest_bytes_last: Math.round(sum(manifestBytes.slice(-k)) / k),
    manifest_bytes_last_over_first: round(sum(manifestBytes.slice(-k)) / sum(manifestBytes.slice(0, k))),
    // Older heads keep the ancestry as a plain map.
    ancestry_entries: typeof head.ancestry.size === 'number' ? head.ancestry.size : Object.keys(head.ancestry).length,
    runs_after: head.tables.Item?.runs.length ?? 0,
  };
}

async function tables(t: number): Promise<Record<string, number>> {
  const dir = await freshDir();
  const counting = new CountingStore(new FsStore(dir));
  const g = await Graph.open(counting, { actor: 'bench' });
  await g.applySchema(
    'main',
    Array.from({ length: t }, (_, i) => `node T${String(i).padStart(4, '0')} { id: string @key\n v: int }`).join('\n'),
  );
  // Every table holds rows, as in a real graph: each has a run the manifest lists.
  await g.write(
    'main',
    Array.from({ length: t }, (_, i) => ({ op: 'upsert' as const, table: `T${String(i).padStart(4, '0')}`, values: { id: 'seed', v: 0 } })),
  );
  // What one write costs, by kind of object: runs hold the row, everything else is metadata.
  const split = new BytesByKind(new FsStore(dir));
  const g2 = await Graph.open(split, { actor: 'bench' });
  await g2.write('main', [{ op: 'upsert', table: 'T0001', values: { id: 'a', v: 1 } }]);
  // Closing waits for what the write left in flight (its event's confirmation, its head hint), which it wrote too.
  await g2.close();
  await g.close();
  await rm(dir, { recursive: true, force: true });
  const byKind = split.byKind;
  const total = sum([...byKind.values()]);
  return {
    tables: t,
    write_bytes_total: total,
    write_run_bytes: byKind.get('runs') ?? 0,
    write_meta_bytes_1000_tables: total - (byKind.get('runs') ?? 0),
  };
}

async function writers(w: number, latencyMs: number): Promise<Record<string, number>> {
  const dir = await freshDir();
  const service = await serviceOnStore(new LatencyStore(new FsStore(dir), latencyMs), { actor: 'bench', shard: 'bench' });
  const ctx = { transport: 'embedded' as const };
  await embeddedApi(service, ctx).applySchema({ branch: 'main', schema: SCHEMA });
  const perWriter = Math.max(4, Math.round(48 / w));
  let commits = 0;
  let contention = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: w }, async (_, k) => {
      for (let i = 0; i < perWriter; i++) {
        try {
          await embeddedApi(service, ctx).write({
            branch: 'main',
            ops: [{ op: 'upsert', table: 'Item', values: { id: `w${k}-${i}`, v: i } }],
          });
          commits++;
        } catch (e) {
          if (isBranchgraphError(e, 'publish_contention')) contention++;
          else throw e;
        }
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  await service.close();
  await rm(dir, { recursive: true, force: true });
  return {
    writers: w,
    latencyMs,
    writes: w * perWriter,
    commits,
    commits_per_second: round(commits / seconds, 2),
    contention_errors: contention,
  };
}

const row = (i: number, v: number) => ({ id: id(i), v, note: null });
/** The keys each side of the scale merges changes: disjoint, spread over the table. */
const sideKeys = (n: number, side: 0 | 1): number[] =>
  Array.from({ length: 500 }, (_, j) => (Math.floor((n / 1000) * (2 * j + side)) + 1) % n);

async function compactedMerge(n: number): Promise<Record<string, number>> {
  const dir = await freshDir();
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  await g.applySchema('main', SCHEMA);
  for (let at = 0; at < n; at += 100_000) {
    await g.write(
      'main',
      Array.from({ length: Math.min(100_000, n - at) }, (_, j) => ({ op: 'upsert' as const, table: 'Item', values: row(at + j, 0) })),
    );
  }
  await g.compact('main', { mode: 'full' });
  await g.createBranch('f', { branch: 'main' });
  for (const [branch, side] of [['f', 0] as const, ['main', 1] as const]) {
    const keys = sideKeys(n, side);
    for (let k = 0; k < 5; k++)
      await g.write(
        branch,
        keys.slice(k * 100, (k + 1) * 100).map((i) => ({ op: 'upsert' as const, table: 'Item', values: row(i, side + 1) })),
      );
    await g.compact(branch, { mode: 'full' });
  }
  const tableBytes = sum(((await g.branchHead('main')).manifest.tables.Item?.runs ?? []).map((r) => r.bytes));
  const runsAfterCompaction = (await g.branchHead('main')).manifest.tables.Item?.runs.length ?? 0;
  const counting = new CountingStore(new FsStore(dir));
  const cold = await Graph.open(counting, { actor: 'bench' });
  const before = counting.snapshot().total.bytesRead;
  const t0 = performance.now();
  const r = await mergeBranches(cold.ports, mergeSpec({ source: 'f' }));
  const ms = performance.now() - t0;
  if (r.status !== 'success') throw new Error('the compacted merge conflicted');
  const read = counting.snapshot().total.bytesRead - before;
  await cold.close();
  await g.close();
  await rm(dir, { recursive: true, force: true });
  return {
    rows: n,
    table_bytes: tableBytes,
    runs_after_compaction: runsAfterCompaction,
    merge_bytes_read: read,
    merge_after_compaction_read_fraction: round(read / tableBytes, 4),
    merge_ms: round(ms, 1),
  };
}

async function gitScale(n: number): Promise<Record<string, number>> {
  const peer = await GitPeer.create();
  const file = (i: number, v: number): [string, string] => [entityPath(id(i)), `${JSON.stringify(row(i, v))}\n`];
  await peer.importCommit(
    'main',
    (function* () {
      for (let i = 0; i < n; i++) yield file(i, 0);
    })(),
  );
  const base = await peer.git(['rev-parse', 'main']);
  await peer.importCommit(
    'f',
    sideKeys(n, 0).map((i) => file(i, 1)),
    base,
  );
  await peer.importCommit(
    'main',
    sideKeys(n, 1).map((i) => file(i, 2)),
    base,
  );
  const m = await peer.merge('main', 'f');
  await peer.close();
  if (!m.clean) throw new Error('git merge conflicted');
  return {
    rows: n,
    git_merge_ms: round(m.ms, 1),
    git_merge_ms_less_spawns: round(m.lessSpawnsMs, 1),
    git_spawn_ms: round(peer.spawnMs, 2),
  };
}

async function gitBranches(rounds: number): Promise<Record<string, number>> {
  const peer = await GitPeer.create();
  const file = (i: number, v: number): [string, string] => [entityPath(id(i)), `${JSON.stringify(row(i, v))}\n`];
  await peer.importCommit('main', [file(0, 0)]);
  const mergeMs: number[] = [];
  const lessSpawns: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const head = await peer.git(['rev-parse', 'main']);
    await peer.importCommit(`b${r}`, [file(r + 1, r)], head);
    await peer.importCommit('main', [file(0, r + 1)], head);
    const m = await peer.merge('main', `b${r}`);
    if (!m.clean) throw new Error(`git round ${r} conflicted`);
    mergeMs.push(m.ms);
    lessSpawns.push(m.lessSpawnsMs);
    await peer.git(['update-ref', '-d', `refs/heads/b${r}`]);
  }
  await peer.close();
  const k = Math.min(100, Math.floor(rounds / 10));
  return {
    rounds,
    git_merge_ms_first: round(sum(mergeMs.slice(0, k)) / k, 2),
    git_merge_ms_last: round(sum(mergeMs.slice(-k)) / k, 2),
    git_merge_ms_last_less_spawns: round(sum(lessSpawns.slice(-k)) / k, 2),
    git_spawn_ms: round(peer.spawnMs, 2),
  };
}

const [arm, a, b] = process.argv.slice(2);
const out =
  arm === 'writes'
    ? await writes(Number(a), b !== 'no-compaction')
    : arm === 'branches'
      ? await branches(Number(a))
      : arm === 'tables'
        ? await tables(Number(a))
        : arm === 'writers'
          ? await writers(Number(a), Number(b))
          : arm === 'compacted-merge'
            ? await compactedMerge(Number(a))
            : arm === 'git-scale'
              ? await gitScale(Number(a))
              : arm === 'git-branches'
                ? await gitBranches(Number(a))
                : undefined;
if (out === undefined) throw new Error(`unknown growth arm ${arm}`);
process.stdout.write(`${JSON.stringify({ ...out, peakRssMiB: Math.round((process.resourceUsage().maxRSS / 1024) * 10) / 10 })}\n`);
