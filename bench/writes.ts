/**
 * Small writes beside PostgreSQL's INSERT: one-row and 100-row writes, each
 * its own durable commit, into a table with a primary key and a unique
 * email, in one long-lived process. Prints one JSON line.
 *
 *   branchgraph  `write` through the embedded API on a local directory, and
 *                with 17 ms injected per store call; per sample its store
 *                calls and dependent round trips (src/store/round-trips.ts);
 *   PostgreSQL   one `INSERT … VALUES` statement per write (autocommit, so
 *                one durable commit), prepared, over one long-lived
 *                connection, same primary key and unique index; Debian's
 *                PostgreSQL started by the bench, fsync and
 *                synchronous_commit on;
 *   floor        the durable objects the last local write put, put again
 *                into a directory of their own with no engine around them:
 *                the objects before the manifest side by side, then the
 *                manifest, as the write orders them. What the store
 *                protocol costs on this disk, the bound on a write that
 *                keeps it (the best-effort hints and marks that follow the
 *                answer are left out, as they are not waited for).
 *
 * The arms alternate write by write, after WARMUP writes each. Every write
 * is checked afterwards: the row count of each side.
 */
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';
import type { PutOptions } from '../src/store/object-store.js';
import { StoreWrapper, type CallContext } from '../src/store/store-wrapper.js';
import { startPostgres } from './postgres-peer.js';

const SCHEMA = 'node Item { id: string @key\n email: string @unique\n v: int }';
const WARMUP = 10;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;
const quantile = (xs: number[], q: number): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))] as number;

const add = (to: Record<string, number[]>, name: string, x: number): void => {
  to[name] = [...(to[name] ?? []), x];
};

interface Side {
  name: string;
  write(rows: number): Promise<{ ms: number; calls?: number; trips?: number }>;
  count(): Promise<number>;
  close(): Promise<void>;
}

let next = 0;
const item = () => {
  next++;
  return { id: `k${next}`, email: `k${next}@example.com`, v: next };
};

/** The durable puts of the last write through it: their keys and sizes, for the floor to put again. */
class DurablePuts extends StoreWrapper {
  puts: { key: string; bytes: number }[] = [];

  protected around<T>(_ctx: CallContext, call: () => Promise<T>): Promise<T> {
    return call();
  }

  override putIfAbsent(key: string, body: Uint8Array, opts: PutOptions = {}): Promise<void> {
    if (opts.durable !== false) this.puts.push({ key, bytes: body.length });
    return super.putIfAbsent(key, body, opts);
  }
}

async function ours(dir: string, latencyMs: number, log?: DurablePuts[]): Promise<Side> {
  const fs = new FsStore(dir);
  const recorded = latencyMs > 0 ? undefined : new DurablePuts(fs);
  if (recorded !== undefined) log?.push(recorded);
  const base = recorded ?? fs;
  const counting = new CountingStore(latencyMs > 0 ? new LatencyStore(base, latencyMs) : base);
  const service = await serviceOnStore(counting, { actor: 'bench', shard: 'bench' });
  const api: BranchgraphApi = embeddedApi(service, { transport: 'embedded' });
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  let written = 0;
  return {
    name: latencyMs > 0 ? `l${latencyMs}` : 'local',
    async write(rows) {
      const ops = Array.from({ length: rows }, () => ({ op: 'insert' as const, table: 'Item', values: item() }));
      counting.reset();
      if (recorded !== undefined) recorded.puts = [];
      const t0 = performance.now();
      await api.write({ branch: 'main', ops });
      const ms = performance.now() - t0;
      written += rows;
      return { ms, calls: counting.snapshot().total.calls, trips: counting.dependentRoundTrips() };
    },
    async count() {
      const n = (await api.listTables({ at: 'main' })).tables.find((t) => t.name === 'Item')?.storedRows;
      // Inserts only: every stored row version is a live row.
      if (n !== written) throw new Error(`branchgraph holds ${n} rows, wrote ${written}`);
      return written;
    },
    close: () => service.close(),
  };
}

/**
 * The last local write's durable puts made again under fresh names in the same folders (a folder's
 * sync is part of a put): the head read as a stat of the next version, the objects before the
 * manifest side by side, then the manifest.
 */
function floor(dir: string, of: DurablePuts): Side {
  const store = new FsStore(dir);
  let n = 0;
  let last: string | undefined;
  return {
    name: 'floor',
    async write() {
      const puts = of.puts;
      // Our local side writes first in the first round, so a write to put again is always there.
      if (puts.length === 0) throw new Error('the floor has no write to put again');
      n++;
      last = `${puts[puts.length - 1]?.key}.${n}`;
      const put = (p: { key: string; bytes: number }) => store.putIfAbsent(`${p.key}.${n}`, new Uint8Array(p.bytes).fill(n));
      const manifest = (p: { key: string }) => p.key.startsWith('manifests/');
      const t0 = performance.now();
      await store.head(`manifests/next.${n}`);
      await Promise.all(puts.filter((p) => !manifest(p)).map(put));
      await Promise.all(puts.filter(manifest).map(put));
      return { ms: performance.now() - t0 };
    },
    async count() {
      // It holds no rows: what it put is there.
      if (last === undefined || (await store.head(last)) === undefined) throw new Error(`the floor's last object ${last} is missing`);
      return n;
    },
    close: async () => undefined,
  };
}

async function postgres(client: pg.Client): Promise<Side> {
  await client.query('CREATE TABLE item (id text PRIMARY KEY, email text NOT NULL UNIQUE, v bigint NOT NULL)');
  let written = 0;
  return {
    name: 'postgres',
    async write(rows) {
      const batch = Array.from({ length: rows }, item);
      const values = batch.map((_, i) => `($${3 * i + 1}, $${3 * i + 2}, $${3 * i + 3})`).join(', ');
      const params = batch.flatMap((r) => [r.id, r.email, r.v]);
      const t0 = performance.now();
      await client.query({ name: `insert${rows}`, text: `INSERT INTO item VALUES ${values}`, values: params });
      const ms = performance.now() - t0;
      written += rows;
      return { ms };
    },
    async count() {
      const n = Number((await client.query('SELECT count(*) AS c FROM item')).rows[0].c);
      if (n !== written) throw new Error(`PostgreSQL holds ${n} rows, wrote ${written}`);
      return n;
    },
    close: async () => undefined,
  };
}

async function main(): Promise<void> {
  const samples = Number(process.argv[2] ?? 100);
  const root = await mkdtemp(path.join(tmpdir(), 'bg-writes-bench-'));
  // PostgreSQL runs as its own user: it must reach its directory through this one.
  await chmod(root, 0o755);
  await mkdir(path.join(root, 'pg'));
  const server = await startPostgres(path.join(root, 'pg'));
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  const figures: Record<string, number> = {};
  try {
    const log: DurablePuts[] = [];
    const sides = [await ours(path.join(root, 'local'), 0, log), await ours(path.join(root, 'l17'), 17), await postgres(client)];
    sides.push(floor(path.join(root, 'floor'), log[0] as DurablePuts));
    for (const rows of [1, 100]) {
      const ms: Record<string, number[]> = {};
      const calls: Record<string, number[]> = {};
      const trips: Record<string, number[]> = {};
      for (let i = 0; i < WARMUP + samples; i++) {
        // Each round starts at another side, so drift falls on every side alike.
        for (let k = 0; k < sides.length; k++) {
          const side = sides[(i + k) % sides.length] as Side;
          const r = await side.write(rows);
          if (i < WARMUP) continue;
          add(ms, side.name, r.ms);
          if (r.trips !== undefined) {
            add(calls, side.name, r.calls as number);
            add(trips, side.name, r.trips);
          }
        }
      }
      for (const side of sides) {
        const xs = ms[side.name] as number[];
        const p =
          side.name === 'postgres'
            ? `postgres_insert_${rows}`
            : side.name === 'floor'
              ? `floor_${rows}`
              : `write_${rows}${side.name === 'local' ? '' : `_${side.name}`}`;
        figures[`${p}_p50_ms`] = r3(quantile(xs, 0.5));
        figures[`${p}_p95_ms`] = r3(quantile(xs, 0.95));
        figures[`${p}_p95_over_p50`] = r3(quantile(xs, 0.95) / quantile(xs, 0.5));
        const [c, t] = [calls[side.name], trips[side.name]];
        if (c !== undefined && t !== undefined) {
          figures[`${p}_store_calls`] = quantile(c, 0.5);
          figures[`${p}_round_trips`] = quantile(t, 0.5);
        }
      }
      const p50 = (key: string) => figures[`${key}_p50_ms`] as number;
      figures[`write_${rows}_over_insert`] = r3(p50(`write_${rows}`) / p50(`postgres_insert_${rows}`));
      // The bound the store protocol sets on this disk, and what the engine adds to it.
      figures[`floor_${rows}_over_insert`] = r3(p50(`floor_${rows}`) / p50(`postgres_insert_${rows}`));
      figures[`write_${rows}_over_floor`] = r3(p50(`write_${rows}`) / p50(`floor_${rows}`));
    }
    for (const side of sides) await side.count();
    for (const side of sides) await side.close();
  } finally {
    await client.end();
    server.stop();
    await rm(root, { recursive: true, force: true });
  }
  process.stdout.write(`${JSON.stringify(figures)}\n`);
}

await main();
