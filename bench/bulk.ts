/**
 * One arm of the bulk matrix in a fresh process: work that should cost what
 * changed, measured on big tables. Prints one JSON line.
 *
 *   unique N 1|0      a one-row insert into an N-row table with (1) or without (0)
 *                     an @unique property; the median of five inserts
 * Every arm builds its fixture in a child process (`fixture*` arms), so the
 * peak RSS an arm reports is what its operation needs.
 *   cascade N         deleting a node with 2 edges among N edges, and inserting a node;
 *                     the median of five of each
 *   merge N KIND      a merge into an N-row table (local directory), the fixture built
 *                     by a child process (`fixture N KIND`), so peak RSS is the merge's:
 *                     small    1,000 source changes against 1,000 target changes
 *                     skewed   N - 10 source changes against 10 target changes
 *                     both     N / 2 disjoint changes on each side
 *                     conflict every row changed differently on both sides (time to
 *                              the first page of conflicts)
 *   git N KIND        the same skewed or both-big merge by Git (`git merge-tree`)
 */
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Graph } from '../src/graph/graph.js';
import type { WriteOp } from '../src/graph/write-batch.js';
import { verifyMergedRows } from './verify-merge.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import { FsStore } from '../src/store/fs-store.js';
import { entityPath, GitPeer } from './git-peer.js';

const BATCH = 100_000;
const id = (i: number): string => `k${String(i).padStart(7, '0')}`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const round = (x: number): number => Math.round(x * 10) / 10;
const rss = (): number => round(process.resourceUsage().maxRSS / 1024);

async function graphIn(schema: string): Promise<{ g: Graph; dir: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-bulk-'));
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  await g.applySchema('main', schema);
  return { g, dir };
}

/** Write `n` operations from `op(i)` on `branch`, in batches of at most BATCH (one commit each). */
async function load(a: { g: Graph; branch: string; n: number; op: (i: number) => WriteOp }): Promise<void> {
  const { g, branch, n, op } = a;
  for (let start = 0; start < n; start += BATCH) {
    await g.write(
      branch,
      Array.from({ length: Math.min(BATCH, n - start) }, (_, j) => op(start + j)),
    );
  }
}

/** The unique arm's table, built in a child process. */
async function uniqueFixture(n: number, withUnique: boolean): Promise<Record<string, number | string>> {
  const { g, dir } = await graphIn(`node Item { id: string @key\n email: string${withUnique ? ' @unique' : ''}\n v: int }`);
  await load({
    g,
    branch: 'main',
    n,
    op: (i) => ({ op: 'insert', table: 'Item', values: { id: id(i), email: `${id(i)}@example.com`, v: i } }),
  });
  await g.close();
  return { dir };
}

async function unique(n: number, withUnique: boolean): Promise<Record<string, number>> {
  const { dir } = fixture('fixture-unique', n, withUnique ? '1' : '0');
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  const ms: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    await g.write('main', [{ op: 'insert', table: 'Item', values: { id: `new${k}`, email: `new${k}@example.com`, v: -1 } }]);
    ms.push(performance.now() - t0);
  }
  await g.close();
  await rm(dir, { recursive: true, force: true });
  return { rows: n, unique: withUnique ? 1 : 0, insert_ms: round(median(ms)), peakRssMiB: rss() };
}

const VICTIMS = Array.from({ length: 5 }, (_, k) => `victim${k}`);

/** The cascade arm's graph, built in a child process: n edges, and five victims with two edges into each. */
async function cascadeFixture(n: number): Promise<Record<string, number | string>> {
  const { g, dir } = await graphIn('node P { id: string @key }\nedge E: P -> P');
  const nodes = Math.ceil(n / 2) + 2;
  await load({ g, branch: 'main', n: nodes, op: (i) => ({ op: 'insert', table: 'P', values: { id: id(i) } }) });
  // Two edges out of each of the first n / 2 nodes: n edges in all.
  await load({
    g,
    branch: 'main',
    n,
    op: (i) => ({ op: 'insert', table: 'E', values: { from: id(i >> 1), to: id((i >> 1) + 1 + (i & 1)) } }),
  });
  await g.write(
    'main',
    VICTIMS.map((v) => ({ op: 'insert', table: 'P', values: { id: v } })),
  );
  await g.write(
    'main',
    VICTIMS.flatMap((v, k) => [
      { op: 'insert' as const, table: 'E', values: { from: id(2 * k), to: v } },
      { op: 'insert' as const, table: 'E', values: { from: id(2 * k + 1), to: v } },
    ]),
  );
  await g.close();
  return { dir };
}

async function cascade(n: number): Promise<Record<string, number>> {
  const { dir } = fixture('fixture-cascade', n, '');
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  const inserts: number[] = [];
  const deletes: number[] = [];
  for (const [k, v] of VICTIMS.entries()) {
    let t0 = performance.now();
    await g.write('main', [{ op: 'insert', table: 'P', values: { id: `fresh${k}` } }]);
    inserts.push(performance.now() - t0);
    t0 = performance.now();
    const r = await g.write('main', [{ op: 'delete', table: 'P', values: { id: v } }]);
    deletes.push(performance.now() - t0);
    if (r.status !== 'published' || r.result.cascaded !== 2)
      throw new Error(`expected a cascade of 2 edges, got ${JSON.stringify(r).slice(0, 200)}`);
  }
  await g.close();
  await rm(dir, { recursive: true, force: true });
  return { edges: n, insert_ms: round(median(inserts)), delete_ms: round(median(deletes)), peakRssMiB: rss() };
}

/** Run a fixture arm of this script in a child process, so the measuring process holds only what it measures. */
function fixture(arm: string, n: number, kind: string): { dir: string; changed?: number } {
  const built = spawnSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), arm, String(n), kind], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  if (built.status !== 0) throw new Error(`the fixture failed: ${built.stderr}`);
  return JSON.parse(built.stdout.trim().split('\n').at(-1) as string) as { dir: string; changed?: number };
}

/** Build a merge fixture in a directory; run in its own process, so the merge's process holds only the merge. */
async function mergeFixture(n: number, kind: string): Promise<Record<string, number | string>> {
  const { g, dir } = await graphIn('node Item { id: string @key\n v: int }');
  await load({ g, branch: 'main', n, op: (i) => ({ op: 'insert', table: 'Item', values: { id: id(i), v: 0 } }) });
  await g.createBranch('f', { branch: 'main' });
  const upd = (i: number, v: number): WriteOp => ({ op: 'update', table: 'Item', values: { id: id(i), v } });
  const [sourceKeys, targetKeys] = mergeKeys(n, kind);
  await load({ g, branch: 'f', n: sourceKeys.length, op: (j) => upd(sourceKeys[j] as number, 1) });
  await load({ g, branch: 'main', n: targetKeys.length, op: (j) => upd(targetKeys[j] as number, 2) });
  await g.close();
  return { dir, changed: sourceKeys.length + targetKeys.length };
}

/** The keys each side changes, by fixture kind. */
function mergeKeys(n: number, kind: string): [number[], number[]] {
  const range = (len: number, f: (i: number) => number): number[] => Array.from({ length: len }, (_, i) => f(i));
  if (kind === 'small') return [range(1000, (i) => i), range(1000, (i) => n - 1 - i)];
  if (kind === 'skewed') return [range(n - 10, (i) => i), range(10, (i) => n - 1 - i)];
  if (kind === 'both') return [range(n / 2, (i) => 2 * i), range(n / 2, (i) => 2 * i + 1)];
  return [range(n, (i) => i), range(n, (i) => i)];
}

async function merge(n: number, kind: string): Promise<Record<string, number>> {
  const { dir, changed = 0 } = fixture('fixture', n, kind);
  // A cold process's view of the merge: a fresh graph on the directory the fixture left.
  const cold = await Graph.open(new FsStore(dir), { actor: 'bench' });
  const t0 = performance.now();
  const r = await mergeBranches(cold.ports, mergeSpec({ source: 'f', into: 'main', conflictLimit: 100 }));
  const ms = performance.now() - t0;
  const expected = kind === 'conflict' ? 'conflicts' : 'merged';
  if ((r.status === 'success' ? r.outcome : 'conflicts') !== expected)
    throw new Error(`unexpected merge result ${JSON.stringify(r).slice(0, 200)}`);
  // Untimed: a landed merge's rows against the reference (verify-merge.ts).
  if (r.status === 'success' && r.commit !== null && r.base !== null)
    await verifyMergedRows(cold, { base: r.base, source: r.sourceHead, target: r.targetHead, merged: r.commit.id });
  await cold.close();
  await rm(dir, { recursive: true, force: true });
  return {
    rows: n,
    changed,
    merge_ms: round(ms),
    prepare_ms: round(r.metrics.phasesMs.prepare),
    validate_ms: round(r.metrics.phasesMs.validate),
    conflicts: r.status === 'conflicts' ? r.report.total : 0,
    peakRssMiB: rss(),
  };
}

/** The same merge by Git, one file per entity (bench/git-peer.ts): what users would otherwise script. */
async function gitMerge(n: number, kind: string): Promise<Record<string, number>> {
  const peer = await GitPeer.create();
  const file = (i: number, v: number): [string, string] => [entityPath(id(i)), `${JSON.stringify({ id: id(i), v })}\n`];
  await peer.importCommit(
    'main',
    (function* () {
      for (let i = 0; i < n; i++) yield file(i, 0);
    })(),
  );
  const base = await peer.git(['rev-parse', 'main']);
  const [sourceKeys, targetKeys] = mergeKeys(n, kind);
  await peer.importCommit(
    'f',
    sourceKeys.map((i) => file(i, 1)),
    base,
  );
  await peer.importCommit(
    'main',
    targetKeys.map((i) => file(i, 2)),
    base,
  );
  const m = await peer.merge('main', 'f');
  await peer.close();
  if (!m.clean) throw new Error('git merge conflicted');
  return {
    rows: n,
    changed: sourceKeys.length + targetKeys.length,
    git_merge_ms: round(m.ms),
    git_merge_ms_less_spawns: round(m.lessSpawnsMs),
    git_spawn_ms: round(peer.spawnMs),
    peakRssMiB: rss(),
  };
}

const [arm, a, b] = process.argv.slice(2);
const n = Number(a);
const arms: Record<string, () => Promise<Record<string, number | string>>> = {
  unique: () => unique(n, b === '1'),
  cascade: () => cascade(n),
  merge: () => merge(n, b as string),
  fixture: () => mergeFixture(n, b as string),
  'fixture-unique': () => uniqueFixture(n, b === '1'),
  'fixture-cascade': () => cascadeFixture(n),
  git: () => gitMerge(n, b as string),
};
const out = await arms[arm as string]?.();
if (out === undefined)
  throw new Error(`unknown arm ${arm}: unique N 1|0, cascade N, merge N small|skewed|both|conflict, git N skewed|both`);
process.stdout.write(`${JSON.stringify(out)}\n`);
