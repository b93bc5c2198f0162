/**
 * The load peer experiment: the same N rows (`id` primary key, a unique
 * `email`, a name and a number) loaded into branchgraph and into PostgreSQL,
 * both durable, alternating, ROUNDS times. Prints one JSON line.
 *
 *   branchgraph  `load` of the CSV file and of the NDJSON file, streamed
 *                from the file, each in a fresh process (`one FORMAT FILE
 *                DIR`) on a fresh local directory, timed from opening the
 *                file to the commit, so its peak RSS is the load's (with
 *                the process's own before it, reported beside). The
 *                process runs this file bundled as the package's command
 *                line is (esbuild, packages left to node_modules), under
 *                plain Node as `branchgraph load` runs (the server's young
 *                generation flag is the server's alone), not under the
 *                TypeScript loader the bench itself runs under, which held
 *                some 60 MiB that no user's process carries;
 *   PostgreSQL   `COPY … FROM` the same CSV file (server-side, one
 *                statement), and 1,000-row `INSERT … VALUES` statements,
 *                each its own durable commit, over one long-lived
 *                connection, with the rows parsed before the clock starts;
 *                each into a fresh table with the same primary key and
 *                unique index. Debian's PostgreSQL started by the bench in a
 *                temporary directory, fsync and synchronous_commit on.
 *
 * Every load is checked: its row count, and a sampled row read back.
 * `copy_over_branchgraph` is COPY's rows per second over ours (CSV), so
 * 1.5 means COPY loads 1.5 times as fast; `insert_over_branchgraph` the same
 * for the INSERT batches.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import pg from 'pg';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { FsStore } from '../src/store/fs-store.js';
import { startPostgres } from './postgres-peer.js';

const SCHEMA = 'node Item { id: string @key\n email: string @unique\n name: string\n v: int }';
const id = (i: number): string => `k${String(i).padStart(8, '0')}`;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** The data in both formats, written once. */
async function writeData(dir: string, n: number): Promise<{ csv: string; ndjson: string }> {
  const csv: string[] = ['id,email,name,v'];
  const ndjson: string[] = [];
  for (let i = 0; i < n; i++) {
    // Shuffled keys: a load meets them in no particular order, as a real export's would be.
    const k = id((i * 7919) % n);
    const values = { id: k, email: `${k}@example.com`, name: `Item number ${i}`, v: i };
    csv.push(`${values.id},${values.email},${values.name},${values.v}`);
    ndjson.push(JSON.stringify({ op: 'insert', table: 'Item', values }));
  }
  const files = { csv: path.join(dir, 'items.csv'), ndjson: path.join(dir, 'items.ndjson') };
  await writeFile(files.csv, `${csv.join('\n')}\n`);
  await writeFile(files.ndjson, `${ndjson.join('\n')}\n`);
  return files;
}

/** Disk usage of a directory, in bytes. */
function bytesOnDisk(dir: string): number {
  const r = spawnSync('du', ['-sb', dir], { encoding: 'utf8' });
  return Number(r.stdout.split('\t')[0]);
}

/** One branchgraph load in this (fresh) process, through the embedded API as a user calls it; prints its figures. */
async function one(format: 'csv' | 'ndjson', a: { file: string; dir: string; n: number }): Promise<void> {
  const { file, dir, n } = a;
  const service = await serviceOnStore(new FsStore(dir), { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, { transport: 'embedded' });
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  const rssBeforeMiB = Math.round(process.memoryUsage().rss / 2 ** 20);
  const t0 = performance.now();
  // The file streams into the load, as the command line gives it: a CSV load into an empty table never holds it whole.
  const body = createReadStream(file);
  const r = await api.load(
    format === 'csv' ? { branch: 'main', csv: body, table: 'Item', op: 'insert' } : { branch: 'main', ndjson: body },
  );
  const ms = performance.now() - t0;
  if (r.inserted !== n) throw new Error(`load ${format}: ${JSON.stringify(r)}`);
  const k = id(n >> 1);
  const { row } = await api.getRow({ table: 'Item', key: k, at: 'main' });
  if (row?.email !== `${k}@example.com`) throw new Error(`load ${format}: row ${k} reads back as ${JSON.stringify(row)}`);
  const peakRssMiB = Math.round(process.resourceUsage().maxRSS / 1024);
  await service.close();
  process.stdout.write(`${JSON.stringify({ ms, peakRssMiB, rssBeforeMiB, bytes: bytesOnDisk(dir) })}\n`);
}

async function ours(
  format: 'csv' | 'ndjson',
  file: string,
  a: { root: string; n: number; bundle: string },
): Promise<{ ms: number; peakRssMiB: number; rssBeforeMiB: number; bytes: number }> {
  const dir = await mkdtemp(path.join(a.root, `bg-${format}-`));
  const r = spawnSync(process.execPath, [a.bundle, 'one', format, file, dir, String(a.n)], {
    encoding: 'utf8',
    maxBuffer: 1 << 20,
  });
  await rm(dir, { recursive: true, force: true });
  if (r.status !== 0) throw new Error(`branchgraph ${format} load failed: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop() as string) as { ms: number; peakRssMiB: number; rssBeforeMiB: number; bytes: number };
}

async function postgresArms(client: pg.Client, files: { csv: string }, n: number) {
  const rows = (await readFile(files.csv, 'utf8'))
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(','));
  let table = 0;
  const fresh = async (): Promise<string> => {
    const t = `item_${table++}`;
    await client.query(`CREATE TABLE ${t} (id text PRIMARY KEY, email text NOT NULL UNIQUE, name text NOT NULL, v bigint NOT NULL)`);
    return t;
  };
  const check = async (t: string): Promise<{ bytes: number }> => {
    const count = Number((await client.query(`SELECT count(*) AS c FROM ${t}`)).rows[0].c);
    const k = id(n >> 1);
    const row = (await client.query(`SELECT email FROM ${t} WHERE id = $1`, [k])).rows[0];
    if (count !== n || row?.email !== `${k}@example.com`) throw new Error(`PostgreSQL ${t}: ${count} rows, ${JSON.stringify(row)}`);
    const bytes = Number((await client.query(`SELECT pg_total_relation_size('${t}') AS b`)).rows[0].b);
    await client.query(`DROP TABLE ${t}`);
    await client.query('CHECKPOINT');
    return { bytes };
  };
  return {
    async copy(): Promise<{ ms: number; bytes: number }> {
      const t = await fresh();
      const t0 = performance.now();
      await client.query(`COPY ${t} FROM '${files.csv}' WITH (FORMAT csv, HEADER true)`);
      const ms = performance.now() - t0;
      return { ms, ...(await check(t)) };
    },
    async insert(): Promise<{ ms: number; bytes: number }> {
      const t = await fresh();
      const t0 = performance.now();
      for (let at = 0; at < rows.length; at += 1000) {
        const batch = rows.slice(at, at + 1000);
        const params = batch.flat();
        const values = batch.map((_, i) => `($${4 * i + 1}, $${4 * i + 2}, $${4 * i + 3}, $${4 * i + 4})`).join(', ');
        await client.query(`INSERT INTO ${t} VALUES ${values}`, params);
      }
      const ms = performance.now() - t0;
      return { ms, ...(await check(t)) };
    },
  };
}

async function main(): Promise<void> {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'one') return one(args[0] as 'csv' | 'ndjson', { file: args[1] as string, dir: args[2] as string, n: Number(args[3]) });
  const n = Number(mode ?? 200_000);
  const rounds = Number(args[0] ?? 2);
  const root = await mkdtemp(path.join(tmpdir(), 'bg-load-bench-'));
  // PostgreSQL's server reads the CSV file itself (its best shape): the directory must be open to it.
  await chmod(root, 0o755);
  await mkdir(path.join(root, 'data'), { mode: 0o755 });
  const files = await writeData(path.join(root, 'data'), n);
  // Inside the checkout, so that the packages it leaves out resolve from node_modules.
  const bundle = path.resolve('.bench', 'load-bench.mjs');
  await build({
    entryPoints: [fileURLToPath(import.meta.url)],
    bundle: true,
    platform: 'node',
    format: 'esm',
    packages: 'external',
    outfile: bundle,
    logLevel: 'error',
  });
  await mkdir(path.join(root, 'pg'));
  const server = await startPostgres(path.join(root, 'pg'));
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const samples: Record<string, { ms: number; bytes: number; peakRssMiB?: number; rssBeforeMiB?: number }[]> = {
    csv: [],
    ndjson: [],
    copy: [],
    insert: [],
  };
  try {
    const peer = await postgresArms(client, files, n);
    const arms: [string, () => Promise<{ ms: number; bytes: number; peakRssMiB?: number; rssBeforeMiB?: number }>][] = [
      ['csv', () => ours('csv', files.csv, { root, n, bundle })],
      ['copy', () => peer.copy()],
      ['ndjson', () => ours('ndjson', files.ndjson, { root, n, bundle })],
      ['insert', () => peer.insert()],
    ];
    for (let round = 0; round < rounds; round++) {
      // Each round starts at another arm, so drift over the run falls on every arm alike.
      for (let k = 0; k < arms.length; k++) {
        const [name, arm] = arms[(k + round) % arms.length] as (typeof arms)[number];
        process.stderr.write(`[load] round ${round + 1}/${rounds}: ${name} ...\n`);
        (samples[name] as { ms: number }[]).push(await arm());
      }
    }
  } finally {
    await client.end();
    server.stop();
    await rm(root, { recursive: true, force: true });
  }
  const ms = (arm: string) => median((samples[arm] ?? []).map((s) => s.ms));
  const rate = (arm: string) => Math.round(n / (ms(arm) / 1000));
  const peak = (arm: string) => Math.max(...(samples[arm] ?? []).map((s) => s.peakRssMiB ?? 0));
  const bytes = (arm: string) => median((samples[arm] ?? []).map((s) => s.bytes));
  process.stdout.write(
    `${JSON.stringify({
      rows: n,
      rounds,
      csv_ms: r3(ms('csv')),
      ndjson_ms: r3(ms('ndjson')),
      copy_ms: r3(ms('copy')),
      insert_ms: r3(ms('insert')),
      rows_per_second: rate('csv'),
      ndjson_rows_per_second: rate('ndjson'),
      copy_rows_per_second: rate('copy'),
      insert_rows_per_second: rate('insert'),
      copy_over_branchgraph: r3(ms('csv') / ms('copy')),
      insert_over_branchgraph: r3(ms('csv') / ms('insert')),
      copy_over_branchgraph_ndjson: r3(ms('ndjson') / ms('copy')),
      peak_rss_mib: peak('csv'),
      // The process before the load: the runtime and the engine's modules, opened on an empty store.
      rss_before_load_mib: Math.max(...(samples.csv ?? []).map((x) => x.rssBeforeMiB ?? 0)),
      ndjson_peak_rss_mib: peak('ndjson'),
      bytes_on_disk: bytes('csv'),
      postgres_bytes_on_disk: bytes('copy'),
    })}\n`,
  );
}

await main();
