/**
 * Many mergers into one target, in fresh processes: CLIENTS clients each
 * merge their own branches (distinct rows) into `main`, one after another,
 * at LATENCY ms per store call, all in one process or split across PROCS
 * processes over one local directory. Prints one JSON line: merges per
 * second, the errors callers saw by code, and whether every merge's result
 * was exact (each branch's rows on main, one two-parent merge commit per
 * request naming the branch head as its second parent, main's first-parent
 * chain holding every merge commit).
 *
 *   tsx bench/merges.ts CLIENTS MERGES_PER_CLIENT LATENCY PROCS [embedded|servers]
 *
 * `servers`: PROCS server processes of the built command line on the store
 * (bundled first, as `npm start` runs it), each advertising itself, so they
 * forward merges into a branch to the one that publishes it
 * (service/merge-forwarding.ts); the clients merge through them over REST.
 * `embedded` (the default): through the embedded API, in PROCS processes.
 *
 * The fixture: main holds 1,000 rows in four tables; every branch is forked
 * from main and writes ROWS_PER_BRANCH new rows into one table (branches of
 * one client rotate over the tables); after all forks main writes once more,
 * so every merge is three-way.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { isBranchgraphError } from '../src/model/errors.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { RestClient } from '../src/http/rest-client.js';
import { bundledCli } from './bundled-cli.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { FsStore } from '../src/store/fs-store.js';
import { LatencyStore } from '../src/store/latency-store.js';
import { CountingStore } from '../src/store/counting-store.js';

const TABLES = ['A', 'B', 'C', 'D'];
const SCHEMA = TABLES.map((t) => `node ${t} { id: string @key\n v: int }`).join('\n');
const ROWS_PER_BRANCH = 10;
const CTX = { transport: 'embedded' as const };
const branchName = (client: number, i: number): string => `c${client}-m${i}`;
const tableOf = (client: number, i: number): string => TABLES[(client + i) % TABLES.length] as string;
const rowId = (branch: string, j: number): string => `${branch}-r${j}`;

interface ClientResult {
  merges: { branch: string; head: string; commit: string | null; outcome: string; attempts: number }[];
  errors: Record<string, number>;
}

async function build(dir: string, clients: number, perClient: number): Promise<void> {
  const service = await serviceOnStore(new FsStore(dir), { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, CTX);
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  for (const t of TABLES)
    await api.write({
      branch: 'main',
      ops: Array.from({ length: 250 }, (_, k) => ({ op: 'insert' as const, table: t, values: { id: `main-${k}`, v: 0 } })),
    });
  for (let c = 0; c < clients; c++)
    for (let i = 0; i < perClient; i++) {
      const name = branchName(c, i);
      await api.createBranch({ name, from: { branch: 'main' } });
      const table = tableOf(c, i);
      await api.write({
        branch: name,
        ops: Array.from({ length: ROWS_PER_BRANCH }, (_, j) => ({ op: 'insert' as const, table, values: { id: rowId(name, j), v: j } })),
      });
    }
  await api.write({ branch: 'main', ops: [{ op: 'update', table: 'A', values: { id: 'main-0', v: 1 } }] });
  await service.close();
}

/** Each client merges its branches in order through `api`; errors are counted by code, never retried. */
async function runClients(api: Pick<BranchgraphApi, 'mergeBranch'>, clients: number[], perClient: number): Promise<ClientResult[]> {
  return Promise.all(
    clients.map(async (c): Promise<ClientResult> => {
      const out: ClientResult = { merges: [], errors: {} };
      for (let i = 0; i < perClient; i++) {
        const branch = branchName(c, i);
        try {
          const r = await api.mergeBranch({ source: branch, into: 'main' });
          if (r.status !== 'success') throw new Error(`${branch}: ${r.status}`);
          out.merges.push({ branch, head: r.sourceHead, commit: r.commit?.id ?? null, outcome: r.outcome, attempts: r.metrics.attempts });
        } catch (e) {
          const code = isBranchgraphError(e) ? e.code : 'other';
          out.errors[code] = (out.errors[code] ?? 0) + 1;
        }
      }
      return out;
    }),
  );
}

/** One process's clients through the embedded API, from `startAt`. */
async function mergeClients(a: { dir: string; clients: number[]; perClient: number; latency: number; startAt: number }): Promise<{
  results: ClientResult[];
  startedAt: number;
  endedAt: number;
  storeCalls: number;
}> {
  const counting = new CountingStore(new LatencyStore(new FsStore(a.dir), a.latency));
  const service = await serviceOnStore(counting, { actor: `bench-${process.pid}`, shard: `bench-${process.pid}` });
  const api = embeddedApi(service, CTX);
  // Warm the process as a long-running server is: main's head and the code paths are loaded.
  await api.getBranch({ name: 'main' });
  await new Promise((r) => setTimeout(r, Math.max(0, a.startAt - Date.now())));
  const before = counting.snapshot().total.calls;
  const startedAt = Date.now();
  const results = await runClients(api, a.clients, a.perClient);
  const endedAt = Date.now();
  const storeCalls = counting.snapshot().total.calls - before;
  await service.close();
  return { results, startedAt, endedAt, storeCalls };
}

/**
 * The clients through `procs` servers on the store, each a process of the built command line as
 * `npm start` runs it, advertising itself so that they forward merges into a branch to the one that
 * publishes it; client c merges through server c mod procs. A server's store calls are its own:
 * not counted.
 */
async function serverClients(a: { dir: string; clients: number[]; perClient: number; latency: number; procs: number }) {
  const cli = bundledCli();
  const servers = await Promise.all(
    Array.from({ length: a.procs }, (_, p) => startServerProcess(cli, { dir: a.dir, latency: a.latency, shard: `bench-s${p}` })),
  );
  try {
    const apis = servers.map((s) => new RestClient(s.url));
    for (const api of apis) await api.getBranch({ name: 'main' });
    const startedAt = Date.now();
    const parts = await Promise.all(
      apis.map((api, p) =>
        runClients(
          api,
          a.clients.filter((c) => c % a.procs === p),
          a.perClient,
        ),
      ),
    );
    return { results: parts.flat(), startedAt, endedAt: Date.now(), storeCalls: 0 };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
  }
}

/** `branchgraph serve` from the bundle on `dir`, once it listens: its URL, and how to stop it. */
function startServerProcess(
  cli: { command: string; args: string[] },
  a: { dir: string; latency: number; shard: string },
): Promise<{ url: string; stop: () => Promise<void> }> {
  const { shard } = a;
  const args = [...cli.args, 'serve', '--store', `file://${a.dir}`, '--port', '0', '--store-latency-ms', String(a.latency)];
  args.push('--shard', shard, '--log-level', 'warn', '--advertise-url', 'http://127.0.0.1:{port}');
  const p = spawn(cli.command, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, BRANCHGRAPH_ACTOR: shard } });
  const exited = new Promise<void>((resolve) => p.on('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    let err = '';
    p.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const url = /listening on (http:\/\/\S+)/.exec(err)?.[1];
      if (url !== undefined)
        resolve({
          url,
          stop: async () => {
            p.kill('SIGTERM');
            await exited;
          },
        });
    });
    p.on('exit', (code) => reject(new Error(`server ${shard} exited (${code}): ${err}`)));
  });
}

/** Every merge exact: its rows on main, its commit on main's first-parent chain with the branch head as second parent. */
async function verify(dir: string, results: ClientResult[]): Promise<{ exact: boolean; problems: string[] }> {
  const service = await serviceOnStore(new FsStore(dir), { actor: 'check', shard: 'check' });
  const api = embeddedApi(service, CTX);
  const problems: string[] = [];
  const chain = new Map<string, string[]>();
  for (let cursor: string | undefined, first = true; first || cursor !== undefined; first = false) {
    const page = await api.log({ at: 'main', firstParent: true, limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    for (const c of page.commits) chain.set(c.id, c.parents);
    cursor = page.nextCursor ?? undefined;
  }
  for (const r of results)
    for (const m of r.merges) {
      if (m.outcome !== 'merged' || m.commit === null) problems.push(`${m.branch}: ${m.outcome}`);
      else {
        const parents = chain.get(m.commit);
        if (parents === undefined) problems.push(`${m.branch}: commit ${m.commit} is not on main's first-parent chain`);
        else if (parents.length !== 2 || parents[1] !== m.head) problems.push(`${m.branch}: parents ${parents.join(',')}`);
      }
      const [c, i] = m.branch.slice(1).split('-m').map(Number) as [number, number];
      const got = await api.lookupRows({
        at: 'main',
        table: tableOf(c, i),
        keys: Array.from({ length: ROWS_PER_BRANCH }, (_, j) => rowId(m.branch, j)),
      });
      const found = got.items.filter((x) => x !== null).length;
      if (found !== ROWS_PER_BRANCH) problems.push(`${m.branch}: ${found} of ${ROWS_PER_BRANCH} rows on main`);
    }
  await service.close();
  return { exact: problems.length === 0, problems: problems.slice(0, 10) };
}

async function worker(argv: string[]): Promise<void> {
  const [dir, clientList, perClient, latency, startAt] = argv;
  const clients = (clientList as string).split(',').map(Number);
  const out = await mergeClients({
    dir: dir as string,
    clients,
    perClient: Number(perClient),
    latency: Number(latency),
    startAt: Number(startAt),
  });
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function child(args: string[]): Promise<Awaited<ReturnType<typeof mergeClients>>> {
  return new Promise((resolve, reject) => {
    const p = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'worker', ...args], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    p.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop() as string)) : reject(new Error(`worker ${code}`)),
    );
  });
}

async function main(): Promise<void> {
  const clients = Number(process.argv[2] ?? 8);
  const perClient = Number(process.argv[3] ?? 6);
  const latency = Number(process.argv[4] ?? 17);
  const procs = Number(process.argv[5] ?? 1);
  // `servers`: each process runs an HTTP server and its clients merge through it (merge forwarding).
  const mode = process.argv[6] ?? 'embedded';
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-merges-'));
  await build(dir, clients, perClient);
  const ids = Array.from({ length: clients }, (_, c) => c);
  const startAt = Date.now() + 3000;
  const parts =
    mode === 'servers'
      ? [await serverClients({ dir, clients: ids, perClient, latency, procs })]
      : procs === 1
        ? [await mergeClients({ dir, clients: ids, perClient, latency, startAt })]
        : await Promise.all(
            Array.from({ length: procs }, (_, p) =>
              child([dir, ids.filter((c) => c % procs === p).join(','), String(perClient), String(latency), String(startAt)]),
            ),
          );
  const results = parts.flatMap((p) => p.results);
  const seconds = (Math.max(...parts.map((p) => p.endedAt)) - Math.min(...parts.map((p) => p.startedAt))) / 1000;
  const merged = results.reduce((n, r) => n + r.merges.length, 0);
  const errors: Record<string, number> = {};
  for (const r of results) for (const [k, v] of Object.entries(r.errors)) errors[k] = (errors[k] ?? 0) + v;
  const check = await verify(dir, results);
  await rm(dir, { recursive: true, force: true });
  if (!check.exact) process.stderr.write(`merges: not exact: ${check.problems.join('; ')}\n`);
  for (const [code, n] of Object.entries(errors)) process.stderr.write(`merges: ${n} × ${code}\n`);
  const attempts = results.flatMap((r) => r.merges.map((m) => m.attempts));
  process.stdout.write(
    `${JSON.stringify({
      clients,
      procs,
      mode,
      latencyMs: latency,
      merges: merged,
      seconds: Math.round(seconds * 1000) / 1000,
      merges_per_second: Math.round((merged / seconds) * 100) / 100,
      errors: Object.values(errors).reduce((a, b) => a + b, 0),
      contention_errors: (errors.publish_contention ?? 0) + (errors.head_moved ?? 0),
      store_calls_per_merge: Math.round((parts.reduce((n, p) => n + p.storeCalls, 0) / Math.max(1, merged)) * 10) / 10,
      attempts_max: Math.max(0, ...attempts),
      attempts_mean: Math.round((attempts.reduce((a, b) => a + b, 0) / Math.max(1, merged)) * 100) / 100,
      exact: check.exact ? 1 : 0,
    })}\n`,
  );
}

if (process.argv[2] === 'worker') await worker(process.argv.slice(3));
else await main();
