/**
 * Remotes, measured (in a fresh process; prints one JSON line):
 *
 * - Clone throughput: the `large` fixture (ROWS rows in 18 tables, with
 *   its history) uploaded to the S3 server the environment names, then
 *   cloned from the bucket into a directory, side by side with Debian's
 *   `rclone copy` of the same prefix, each with 16 transfers at once, in
 *   alternating order. Throughput is bytes written per second; each clone
 *   is checked (every branch's head is the source's).
 * - A fetch after 100 rows changed on one branch of the bucket: the bytes it
 *   sent over the bytes of the objects the change created.
 * - The same fetch on a graph with no history before it and on one with 64
 *   commits more: its store calls (both ends), which must not grow.
 * - A push of a 100-row change to a server whose store answers each call in
 *   17 ms: the HTTP round trips it takes, and its time; the server's branch
 *   is checked to be the pushed commit, and a pushed row read back.
 *
 *   tsx bench/remotes.ts ROWS SAMPLES
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pino from 'pino';
import { Graph } from '../src/graph/graph.js';
import { fetchFrom, graphPeer, pushTo } from '../src/graph/sync.js';
import { startServer } from '../src/http/server.js';
import { httpPeer } from '../src/http/http-peer.js';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedApi } from '../src/service/api.js';
import { cloneStores } from '../src/service/clone-stores.js';
import { loadConfig } from '../src/service/config.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll, type ObjectStore } from '../src/store/object-store.js';
import { uploadFixture } from './fixtures.js';
import { buildLarge, layout, NODES, sideUpdates } from './large.js';

const run = promisify(execFile);
const ROWS = Number(process.argv[2] ?? 1_000_000);
const SAMPLES = Number(process.argv[3] ?? 3);
const HISTORY = 300;
const WIDTH = 16;
const CTX = { transport: 'embedded' as const };
const CONTENT = /^(manifests|parts|runs|commits|schemas)\//;
const r2 = (x: number): number => Math.round(x * 100) / 100;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function bytesUnder(dir: string): Promise<number> {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) n += (await stat(path.join(e.parentPath, e.name))).size;
  return n;
}

/** Every branch's head in a store, by name. */
async function heads(store: ObjectStore): Promise<Record<string, string>> {
  const g = Graph.attach(store, { actor: 'bench' });
  const out: Record<string, string> = {};
  for (const b of (await g.listBranches({})).branches) out[b.record.name] = b.commit.id;
  return out;
}

/** rclone's remote for the S3 server the environment names, as environment settings (no config file). */
function rcloneEnv(): NodeJS.ProcessEnv {
  // The S3 server speaks plain HTTP: a CA bundle from the environment only makes rclone refuse to start.
  const { AWS_CA_BUNDLE: _bundle, ...env } = process.env;
  return {
    ...env,
    RCLONE_CONFIG_BENCH_TYPE: 's3',
    RCLONE_CONFIG_BENCH_PROVIDER: 'Ceph',
    RCLONE_CONFIG_BENCH_ENV_AUTH: 'false',
    RCLONE_CONFIG_BENCH_ACCESS_KEY_ID: env.S3_ACCESS_KEY,
    RCLONE_CONFIG_BENCH_SECRET_ACCESS_KEY: env.S3_SECRET_KEY,
    RCLONE_CONFIG_BENCH_ENDPOINT: env.S3_ENDPOINT,
    RCLONE_CONFIG_BENCH_REGION: env.S3_REGION ?? 'us-east-1',
  };
}

async function cloneThroughput(url: string, expected: Record<string, string>) {
  const ours: { ms: number; bytes: number }[] = [];
  const theirs: { ms: number; bytes: number }[] = [];
  let lastClone = '';
  for (let s = 0; s < SAMPLES; s++)
    for (const side of s % 2 === 0 ? (['ours', 'rclone'] as const) : (['rclone', 'ours'] as const)) {
      const dst = await mkdtemp(path.join(tmpdir(), `bench-remotes-${side}-`));
      const t0 = performance.now();
      if (side === 'ours') {
        const r = await cloneStores({ source: url, destination: dst, actor: 'bench', width: WIDTH });
        const ms = performance.now() - t0;
        const got = await heads(new FsStore(dst));
        if (JSON.stringify(got) !== JSON.stringify(expected)) throw new Error(`the clone's heads differ: ${JSON.stringify(got)}`);
        ours.push({ ms, bytes: r.transfer.bytes });
        if (lastClone !== '') await rm(lastClone, { recursive: true, force: true });
        lastClone = dst;
      } else {
        const u = new URL(url);
        await run(
          'rclone',
          ['copy', '--transfers', String(WIDTH), '--checkers', String(WIDTH), '--fast-list', `bench:${u.hostname}${u.pathname}`, dst],
          {
            maxBuffer: 1 << 24,
            env: rcloneEnv(),
          },
        );
        const ms = performance.now() - t0;
        theirs.push({ ms, bytes: await bytesUnder(dst) });
        await rm(dst, { recursive: true, force: true });
      }
      process.stderr.write(`[remotes] clone sample ${s + 1}/${SAMPLES} ${side}\n`);
    }
  const rate = (xs: { ms: number; bytes: number }[]) => median(xs.map((x) => x.bytes / (x.ms / 1000)));
  return { ours, theirs, rate: { ours: rate(ours), theirs: rate(theirs) }, lastClone };
}

/** The bytes of the content objects a store holds that it did not hold in `before`. */
async function newContentBytes(store: ObjectStore, before: Set<string>): Promise<number> {
  return (await listAll(store, '')).filter((o) => CONTENT.test(o.key) && !before.has(o.key)).reduce((n, o) => n + o.size, 0);
}

/** 100 rows changed on main of the graph in `store`. */
async function changeHundred(store: ObjectStore, side: number): Promise<string> {
  const service = await serviceOnStore(store, { actor: 'bench', shard: `bench${side}` });
  const r = await embeddedApi(service, CTX).write({ branch: 'main', ops: sideUpdates(layout(ROWS), NODES.slice(0, 6), side) });
  await service.close();
  return r.commit?.id ?? '';
}

/** A fetch's store calls on both ends after the same 100-row change, on a graph with `history` commits before it. */
async function fetchCalls(history: number): Promise<number> {
  const source = new MemoryStore();
  const service = await serviceOnStore(source, { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, CTX);
  await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int }' });
  await api.write({
    branch: 'main',
    ops: Array.from({ length: 1000 }, (_, i) => ({ op: 'insert' as const, table: 'P', values: { id: `p${i}`, v: i } })),
  });
  for (let h = 0; h < history; h++)
    await api.write({ branch: 'main', ops: [{ op: 'update', table: 'P', values: { id: `p${h}`, v: -h } }] });
  await service.close();
  const local = new MemoryStore();
  const peer = () => graphPeer(Graph.attach(source, { actor: 'them' }));
  const here = Graph.attach(local, { actor: 'me' });
  await here.remotes.set({ name: 'origin', url: 'memory:', actor: 'me' });
  await fetchFrom(here, { remote: 'origin', peer: peer() });
  const again = await serviceOnStore(source, { actor: 'bench', shard: 'bench' });
  await embeddedApi(again, CTX).write({
    branch: 'main',
    ops: Array.from({ length: 100 }, (_, i) => ({ op: 'update' as const, table: 'P', values: { id: `p${500 + i}`, v: 1 } })),
  });
  await again.close();
  const [s, l] = [new CountingStore(source), new CountingStore(local)];
  const r = await fetchFrom(Graph.attach(l, { actor: 'me' }), { remote: 'origin', peer: graphPeer(Graph.attach(s, { actor: 'them' })) });
  if (r.updated.length !== 1) throw new Error(`the fetch moved ${r.updated.length} refs`);
  return s.snapshot().total.calls + l.snapshot().total.calls;
}

async function pushToServer(clone: string) {
  // The server's graph is a clone of this one (a byte copy would share its lineages, which a push refuses).
  const serverDir = await mkdtemp(path.join(tmpdir(), 'bench-remotes-server-'));
  await cloneStores({ source: clone, destination: serverDir, actor: 'server' });
  const config = loadConfig({ COMPACTION_BACKGROUND: 'false' }, { store: `file://${serverDir}`, port: '0', 'store-latency-ms': '17' });
  const server = await startServer(config, pino({ level: 'silent' }));
  try {
    const local = Graph.attach(new FsStore(clone), { actor: 'bench' });
    await local.remotes.set({ name: 'hub', url: server.url, actor: 'bench' });
    const fetched = await fetchFrom(local, { remote: 'hub', peer: httpPeer({ url: server.url }) });
    if (fetched.updated.length === 0) throw new Error('the server showed no branches');
    const pushedCommit = await changeHundred(new FsStore(clone), 2);
    let trips = 0;
    const real = globalThis.fetch;
    globalThis.fetch = ((...args: Parameters<typeof fetch>) => {
      trips++;
      return real(...args);
    }) as typeof fetch;
    const t0 = performance.now();
    const r = await pushTo(Graph.attach(new FsStore(clone), { actor: 'bench' }), {
      remote: 'hub',
      peer: httpPeer({ url: server.url }),
      branch: 'main',
      actor: 'bench',
    }).finally(() => {
      globalThis.fetch = real;
    });
    const ms = performance.now() - t0;
    const head = (await new RestClient(server.url).getBranch({ name: 'main' })).head.id;
    if (r.outcome !== 'fast_forward' || head !== pushedCommit)
      throw new Error(`the push landed ${head} as ${r.outcome}, not ${pushedCommit}`);
    const row = await new RestClient(server.url).getRow({
      table: NODES[0] as string,
      key: sideUpdates(layout(ROWS), NODES.slice(0, 6), 2)[0]?.values.id as string,
    });
    if (row.row.score !== 5002) throw new Error(`a pushed row reads ${JSON.stringify(row.row)}`);
    return { trips, ms, objects: r.transfer.objects, bytes: r.transfer.bytes };
  } finally {
    await server.close();
    await rm(serverDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const big = await buildLarge(ROWS, HISTORY);
  const bucket = await uploadFixture(big.dir, 'remotes');
  try {
    const expected = await heads(new FsStore(big.dir));
    const clone = await cloneThroughput(bucket.url, expected);
    // A fetch of one change on the bucket into the last clone.
    const before = new Set((await listAll(bucket.store, '')).map((o) => o.key));
    await changeHundred(bucket.store, 0);
    const created = await newContentBytes(bucket.store, before);
    const local = Graph.attach(new FsStore(clone.lastClone), { actor: 'bench' });
    const fetched = await fetchFrom(local, { remote: 'origin', peer: graphPeer(Graph.attach(bucket.store, { actor: 'bucket' })) });
    const [h0, h64] = [await fetchCalls(0), await fetchCalls(64)];
    const push = await pushToServer(clone.lastClone);
    await rm(clone.lastClone, { recursive: true, force: true });
    process.stdout.write(
      `${JSON.stringify({
        rows: big.rows,
        samples: SAMPLES,
        clone_ms: r2(median(clone.ours.map((x) => x.ms))),
        rclone_ms: r2(median(clone.theirs.map((x) => x.ms))),
        clone_bytes: clone.ours[0]?.bytes,
        rclone_bytes: clone.theirs[0]?.bytes,
        clone_mib_per_s: r2(clone.rate.ours / 2 ** 20),
        rclone_mib_per_s: r2(clone.rate.theirs / 2 ** 20),
        clone_over_rclone_throughput: r2(clone.rate.ours / clone.rate.theirs),
        fetch_bytes: fetched.transfer.bytes,
        new_object_bytes: created,
        fetch_bytes_over_new_object_bytes: r2(fetched.transfer.bytes / created),
        fetch_store_calls_h0: h0,
        fetch_store_calls_h64: h64,
        fetch_store_calls_h64_over_h0: r2(h64 / h0),
        push_round_trips: push.trips,
        push_ms: r2(push.ms),
        push_objects: push.objects,
        push_bytes: push.bytes,
      })}\n`,
    );
  } finally {
    await bucket.done();
  }
}

await main();
