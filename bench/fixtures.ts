/**
 * Benchmark fixtures, built once per parameter set in a directory store and
 * copied for every sample, so each timed merge starts from identical bytes
 * and a cold process.
 */
import { cp, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { Graph } from '../src/graph/graph.js';
import type { WriteOp } from '../src/graph/write-batch.js';
import { rowHash } from '../src/model/values.js';
import { findType, type TableType } from '../src/model/schema.js';
import { FsStore } from '../src/store/fs-store.js';
import type { ObjectStore } from '../src/store/object-store.js';
import { openStore } from '../src/store/open-store.js';
import { mapLimit } from '../src/model/map-limit.js';
import type { RunRow } from '../src/table/run.js';
import { WalWriter } from '../src/wal/wal-writer.js';

// Versioned so fixtures built by an older storage format are never reused.
export const FIXTURE_ROOT = path.resolve('.bench/fixtures/v8');

async function exists(p: string): Promise<boolean> {
  return stat(p).then(
    () => true,
    () => false,
  );
}

const pad = (n: number, w = 3) => String(n).padStart(w, '0');

async function mustWrite(g: Graph, branch: string, ops: WriteOp[]): Promise<void> {
  const r = await g.write(branch, ops);
  if (r.status === 'unchanged') throw new Error('fixture write changed nothing');
}

/**
 * 121 tables of 4 rows; on `touched` of them the feature branch and main
 * each make their own updates (`feature`, `main`, per table) after the fork.
 */
async function twoSidedFixture(a: {
  name: string;
  touched: number;
  feature: (t: string) => WriteOp[];
  main: (t: string) => WriteOp[];
}): Promise<string> {
  const { name, touched, feature, main } = a;
  const dir = path.join(FIXTURE_ROOT, name);
  if (await exists(path.join(dir, 'ready'))) return dir;
  await rm(dir, { recursive: true, force: true });
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  const tables = Array.from({ length: 121 }, (_, i) => `T${pad(i)}`);
  await g.applySchema('main', tables.map((t) => `node ${t} { id: string @key\n a: int\n b: int }`).join('\n'));
  await mustWrite(
    g,
    'main',
    tables.flatMap((t) => [1, 2, 3, 4].map((i) => ({ op: 'insert' as const, table: t, values: { id: `r${i}`, a: 0, b: 0 } }))),
  );
  await g.createBranch('feature', { branch: 'main' });
  await mustWrite(g, 'feature', tables.slice(0, touched).flatMap(feature));
  await mustWrite(g, 'main', tables.slice(0, touched).flatMap(main));
  await g.close();
  await mkdir(path.join(dir, 'ready'));
  return dir;
}

const upd = (u: { t: string; id: string; prop: 'a' | 'b'; v?: number | undefined }): WriteOp => ({
  op: 'update',
  table: u.t,
  values: { id: u.id, [u.prop]: u.v ?? 1 },
});

/** The merge matrix's fixture: disjoint changes on `touched` tables (two rows per side), so the merge lands. */
export function mergeFixture(touched: number): Promise<string> {
  return twoSidedFixture({
    name: `merge-t${touched}`,
    touched,
    feature: (t) => [upd({ t, id: 'r1', prop: 'a' }), upd({ t, id: 'r2', prop: 'a' })],
    main: (t) => [upd({ t, id: 'r3', prop: 'b' }), upd({ t, id: 'r4', prop: 'b' })],
  });
}

/**
 * The review matrix's fixture: on each touched table both sides set r1.a differently (one
 * DivergentUpdate each), besides disjoint changes; merged unresolved (a report) and resolved.
 */
export function conflictFixture(touched: number): Promise<string> {
  return twoSidedFixture({
    name: `conflict-t${touched}`,
    touched,
    feature: (t) => [upd({ t, id: 'r1', prop: 'a', v: 1 }), upd({ t, id: 'r2', prop: 'a', v: 1 })],
    main: (t) => [upd({ t, id: 'r1', prop: 'a', v: 2 }), upd({ t, id: 'r3', prop: 'b', v: 2 })],
  });
}

/** 4 touched tables of 4 rows, with `extra` commits of history on main before the branch. */
export async function historyFixture(extra: number): Promise<string> {
  const dir = path.join(FIXTURE_ROOT, `history-h${extra}`);
  if (await exists(path.join(dir, 'ready'))) return dir;
  await rm(dir, { recursive: true, force: true });
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  const tables = ['A', 'B', 'C', 'D'];
  await g.applySchema('main', tables.map((t) => `node ${t} { id: string @key\n a: int\n b: int\n h: int }`).join('\n'));
  await mustWrite(
    g,
    'main',
    tables.flatMap((t) => [1, 2, 3, 4].map((i) => ({ op: 'insert' as const, table: t, values: { id: `r${i}`, a: 0, b: 0, h: 0 } }))),
  );
  for (let i = 0; i < extra; i++) {
    // History that also passes through merges of other branches.
    if (i % 8 === 7) {
      await g.createBranch(`old${i}`, { branch: 'main' });
      await mustWrite(g, `old${i}`, [{ op: 'update', table: tables[i % 4] as string, values: { id: 'r1', h: i } }]);
      await mustWrite(g, 'main', [{ op: 'update', table: tables[(i + 1) % 4] as string, values: { id: 'r2', h: i } }]);
      const { mergeBranches, mergeSpec } = await import('../src/merge/merge.js');
      await mergeBranches(g.ports, mergeSpec({ source: `old${i}`, deleteBranch: true }));
    } else {
      await mustWrite(g, 'main', [{ op: 'update', table: tables[i % 4] as string, values: { id: 'r3', h: i + 1 } }]);
    }
  }
  await g.createBranch('feature', { branch: 'main' });
  await mustWrite(
    g,
    'feature',
    tables.flatMap((t) => [
      { op: 'update' as const, table: t, values: { id: 'r1', a: 1 } },
      { op: 'update' as const, table: t, values: { id: 'r2', a: 1 } },
    ]),
  );
  await mustWrite(
    g,
    'main',
    tables.flatMap((t) => [
      { op: 'update' as const, table: t, values: { id: 'r3', b: 1 } },
      { op: 'update' as const, table: t, values: { id: 'r4', b: 1 } },
    ]),
  );
  await g.close();
  await mkdir(path.join(dir, 'ready'));
  return dir;
}

/**
 * One table of `rows` rows, loaded as one run, then 1,000 updates per side:
 * 990 to different rows on each side and 10 rows changed on both sides in
 * different properties (so their base rows must be read).
 */
export async function scaleFixture(rows: number): Promise<string> {
  const dir = path.join(FIXTURE_ROOT, `scale-${rows}`);
  if (await exists(path.join(dir, 'ready'))) return dir;
  await rm(dir, { recursive: true, force: true });
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  await g.applySchema('main', 'node Item { id: string @key\n a: int\n b: int\n label: string }');
  const head = await g.branchHead('main');
  const type = findType(head.schema, 'Item') as TableType;
  // Bulk load straight into one run: per-row write checks are not what this measures.
  await g.ports.publication.commitChange('main', { message: 'bulk load' }, async () => {
    const out: RunRow[] = [];
    for (let i = 0; i < rows; i++) {
      const props = { id: `i${String(i).padStart(7, '0')}`, a: 0, b: 0, label: `item number ${i}` };
      out.push({ key: props.id, tomb: false, hash: rowHash(props), props });
    }
    const ref = await g.ports.runFiles.write(type, out);
    return { kind: 'write', tables: { Item: { runs: [ref] } }, scratch: [ref], result: null };
  });
  await g.createBranch('feature', { branch: 'main' });
  const key = (i: number) => `i${String(Math.floor((i * rows) / 2000)).padStart(7, '0')}`;
  const src: WriteOp[] = [];
  const dst: WriteOp[] = [];
  for (let i = 0; i < 2000; i += 2) {
    src.push({ op: 'update', table: 'Item', values: { id: key(i), a: 1 } });
    dst.push({ op: 'update', table: 'Item', values: { id: key(i + 1), b: 2 } });
  }
  for (let i = 0; i < 10; i++) dst[i] = { op: 'update', table: 'Item', values: { id: key(i * 2), b: 3 } };
  await mustWrite(g, 'feature', src);
  await mustWrite(g, 'main', dst);
  await g.close();
  await mkdir(path.join(dir, 'ready'));
  return dir;
}

/**
 * `dir`'s graph uploaded under a fresh prefix of the S3 server the environment names (S3_ENDPOINT
 * and its keys, as scripts/s3-start.sh writes them): the store, its URL for a server, and `done`
 * to delete what is left under the prefix.
 */
export async function uploadFixture(
  dir: string,
  name = path.basename(dir),
): Promise<{ store: ObjectStore; url: string; done: () => Promise<void> }> {
  const local = new FsStore(dir);
  const url = `s3://branchgraph-bench/${name}-${process.pid}-${Date.now()}`;
  const s3 = await openStore(url);
  const keys: string[] = [];
  for await (const o of local.list('')) keys.push(o.key);
  await mapLimit(keys, 16, async (k) => s3.putOverwrite(k, await local.get(k)));
  const done = async (): Promise<void> => {
    const left: string[] = [];
    for await (const o of s3.list('')) left.push(o.key);
    for (let i = 0; i < left.length; i += 1000) await s3.deleteMany(left.slice(i, i + 1000));
  };
  return { store: s3, url, done };
}

/** A private copy of a fixture for one sample. */
export async function copyFixture(dir: string): Promise<string> {
  const copy = path.join(path.resolve('.bench/samples'), `${path.basename(dir)}-${process.pid}-${Date.now()}`);
  await cp(dir, copy, { recursive: true });
  return copy;
}

export type CatchUpWorkload = 'unique' | 'updates';
export const CATCHUP_SHARDS = 4;
export const CATCHUP_GENERATIONS = 32;
export const CATCHUP_ROWS = 8;

/**
 * 4 shards × 32 sealed generations × 8 rows of about 8 KiB, ingested round
 * robin (so the overlay order interleaves shards) with a fixed clock.
 * `unique`: every row has its own key. `updates`: every generation rewrites
 * the same 8 keys, so newest-wins decides every final value. The expected
 * final rows are stored beside the fixture for verification.
 */
export async function catchUpFixture(workload: CatchUpWorkload): Promise<string> {
  const dir = path.join(FIXTURE_ROOT, `catchup-${workload}`);
  if (await exists(path.join(dir, 'ready'))) return dir;
  await rm(dir, { recursive: true, force: true });
  let t = Date.parse('2026-01-01T00:00:00Z');
  const g = await Graph.open(new FsStore(dir), { actor: 'bench' });
  await g.applySchema('main', 'node Doc { id: string @key\n shard: string\n gen: int\n payload: string }');
  const writers = Array.from(
    { length: CATCHUP_SHARDS },
    (_, s) => new WalWriter(g.ports, { shard: `s${s}`, maxGenerationRows: CATCHUP_ROWS, now: () => t }),
  );
  const expected: Record<string, { shard: string; gen: number }> = {};
  for (let gen = 0; gen < CATCHUP_GENERATIONS; gen++) {
    for (let s = 0; s < CATCHUP_SHARDS; s++) {
      t += 1;
      const ops: WriteOp[] = Array.from({ length: CATCHUP_ROWS }, (_, r) => {
        const id = workload === 'unique' ? `s${s}-g${pad(gen)}-r${r}` : `k${r}`;
        expected[id] = { shard: `s${s}`, gen };
        return { op: 'upsert', table: 'Doc', values: { id, shard: `s${s}`, gen, payload: `${id}:`.padEnd(8 * 1024, 'x') } };
      });
      await (writers[s] as WalWriter).ingest('main', ops);
    }
  }
  await writeFile(`${dir}.expected.json`, JSON.stringify(expected));
  await g.close();
  await mkdir(path.join(dir, 'ready'));
  return dir;
}
