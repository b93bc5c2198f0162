/**
 * BranchBench's operations, in a fresh process, side by side with
 * PostgreSQL: what an agent does to a branchable database.
 *
 * A CH-benCHmark `item` table of ROWS rows on main, then a spine of four
 * branches, each forked from the one before with one update. Every
 * operation runs on a fresh child of the spine's tip, on three sides:
 * branchgraph embedded, branchgraph over HTTP (a server on the same
 * store, through the REST client), and Debian's PostgreSQL, where a branch
 * is `CREATE DATABASE … TEMPLATE` (as BranchBench's Postgres backend
 * makes one) and the client is one long-lived connection per database
 * with prepared statements. Both sides are durable: branchgraph's store
 * fsyncs every object, PostgreSQL runs with fsync and synchronous commit.
 *
 * The operations, each a median per call:
 * - create: a child of the tip (ten of them);
 * - connect: the first typed request on a new branch (its typed GraphQL;
 *   PostgreSQL: a new connection and its first query);
 * - first query: create, connect and one point read, end to end;
 * - 1,000 point reads; 200 range reads of 100 consecutive keys;
 * - 1,000 inserts and 1,000 updates, each its own durable commit;
 * - 200 range updates of 100 consecutive keys, each one commit.
 * Every read checks what it read, and the last state of each written
 * branch is checked row by row against what was written.
 *
 * On the HTTP server, what an MCP tool call costs over the REST call it
 * wraps: point reads and one-row writes, time and store calls.
 *
 * Then read latency against branch depth: one chain of 1,024 branches,
 * each forked from the one before with one update (compacted as a server
 * does in the background), and 1,000 point reads on the branch at depth 1,
 * 16, 256 and 1,024.
 *
 * Prints one JSON line.
 *
 *   tsx bench/branchbench.ts ROWS
 */
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import pg from 'pg';
import pino from 'pino';
import { startServer } from '../src/http/server.js';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedTypedGraphql } from '../src/http/typed-graphql-endpoint.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { loadConfig } from '../src/service/config.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { startPostgres } from './postgres-peer.js';

const ROWS = Number(process.argv[2] ?? 100_000);
const SPINE = 4;
const DEPTHS = [1, 16, 256, 1024];
const CTX = { transport: 'embedded' as const };
const SCHEMA = 'node Item { i_id: int @key\n i_im_id: int\n i_name: string\n i_price: float\n i_data: string }';

interface Item {
  i_id: number;
  i_im_id: number;
  i_name: string;
  i_price: number;
  i_data: string;
}
const item = (i: number): Item => ({
  i_id: i,
  i_im_id: 1 + ((i * 7919) % 10_000),
  i_name: `item-${String(i).padStart(8, '0')}`,
  i_price: Math.round((1 + ((i * 31) % 9900) / 100) * 100) / 100,
  i_data: `data ${i} ${'x'.repeat(14 + (i % 24))}`,
});

/** A deterministic sequence of keys in 1..ROWS. */
function keys(n: number, seed: number): number[] {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return 1 + (x % ROWS);
  });
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number;
const r3 = (x: number): number => Math.round(x * 1000) / 1000;

/** One side's operations on a branch, named as it names branches. */
interface Side {
  name: string;
  create(child: string, from: string): Promise<void>;
  connect(branch: string): Promise<void>;
  pointRead(branch: string, id: number): Promise<Item | null>;
  rangeRead(branch: string, lo: number): Promise<number>;
  insert(branch: string, row: Item): Promise<void>;
  update(branch: string, id: number, price: number): Promise<void>;
  rangeUpdate(branch: string, lo: number, price: number): Promise<void>;
  /** Store calls since the last reset, where the side counts them. */
  calls?: { reset(): void; count(): number };
}

/** Time each call of `run` over `inputs`; its median in ms, and its median store calls where counted. */
async function timed<T>(side: Side, inputs: T[], run: (x: T) => Promise<void>): Promise<{ ms: number; calls: number | undefined }> {
  const ms: number[] = [];
  const calls: number[] = [];
  for (const x of inputs) {
    side.calls?.reset();
    const t = performance.now();
    await run(x);
    ms.push(performance.now() - t);
    if (side.calls !== undefined) calls.push(side.calls.count());
  }
  return { ms: median(ms), calls: calls.length > 0 ? median(calls) : undefined };
}

/** Every operation on one side, each on a fresh child of `tip`; the figures under the side's name. */
async function operations(side: Side, tip: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const put = (op: string, r: { ms: number; calls: number | undefined }) => {
    out[`${side.name}_${op}_ms`] = r3(r.ms);
    if (r.calls !== undefined) out[`${side.name}_${op}_calls`] = r.calls;
  };
  let n = 0;
  const child = async (): Promise<string> => {
    const name = `bb-${side.name}-${++n}`;
    await side.create(name, tip);
    return name;
  };
  put(
    'create',
    await timed(
      side,
      Array.from({ length: 10 }, (_, i) => `bb-${side.name}-c${i}`),
      (name) => side.create(name, tip),
    ),
  );
  const fresh = await Promise.all(Array.from({ length: 5 }, () => child()));
  put('connect', await timed(side, fresh, (b) => side.connect(b)));
  put(
    'first_query',
    await timed(side, [1, 2, 3, 4, 5], async (i) => {
      const b = `bb-${side.name}-f${i}`;
      await side.create(b, tip);
      await side.connect(b);
      if ((await side.pointRead(b, i))?.i_id !== i) throw new Error(`${side.name}: first query read the wrong row`);
    }),
  );
  const reads = await child();
  put(
    'point_read',
    await timed(side, keys(1000, 7), async (id) => {
      const row = await side.pointRead(reads, id);
      if (row?.i_id !== id || row.i_name !== item(id).i_name)
        throw new Error(`${side.name}: point read of ${id} got ${JSON.stringify(row)}`);
    }),
  );
  put(
    'range_read',
    await timed(
      side,
      keys(200, 11).map((k) => Math.min(k, ROWS - 99)),
      async (lo) => {
        const got = await side.rangeRead(reads, lo);
        if (got !== 100) throw new Error(`${side.name}: range read from ${lo} got ${got} rows`);
      },
    ),
  );
  const writes = await child();
  const inserted = Array.from({ length: 1000 }, (_, i) => item(ROWS + 1 + i));
  put('insert', await timed(side, inserted, (row) => side.insert(writes, row)));
  // Every update sets a price no earlier call set, so each one changes the row and commits.
  const updated = keys(1000, 13).map((id, i): [number, number] => [id, 100 + i / 100]);
  put('update', await timed(side, updated, ([id, price]) => side.update(writes, id, price)));
  const ranges = keys(200, 17).map((k, i): [number, number] => [Math.min(k, ROWS - 99), 200 + i / 100]);
  put('range_update', await timed(side, ranges, ([lo, price]) => side.rangeUpdate(writes, lo, price)));
  // What the writes left, checked on a sample: each inserted row, and the last price each update set.
  for (const row of inserted.slice(0, 50))
    if ((await side.pointRead(writes, row.i_id))?.i_name !== row.i_name) throw new Error(`${side.name}: insert lost`);
  const last = new Map<number, number>();
  for (const [id, price] of updated) last.set(id, price);
  for (const [lo, price] of ranges) for (let k = lo; k < lo + 100; k++) last.set(k, price);
  for (const [id, price] of [...last].slice(0, 200))
    if ((await side.pointRead(writes, id))?.i_price !== price) throw new Error(`${side.name}: the update of ${id} to ${price} was lost`);
  return out;
}

/** branchgraph through the API (the engine in this process, or the REST client), its typed GraphQL for `connect`. */
function ours(
  name: string,
  api: BranchgraphApi,
  a: { typed: (branch: string, query: string) => Promise<unknown>; calls?: Side['calls'] },
): Side {
  const rowOf = (r: unknown): Item | null => (r === null ? null : (r as Item));
  return {
    name,
    ...(a.calls !== undefined ? { calls: a.calls } : {}),
    create: async (child, from) => void (await api.createBranch({ name: child, from })),
    connect: async (branch) => {
      const answer = (await a.typed(branch, '{ getItem(i_id: 1) { i_id } }')) as { data?: { getItem?: { i_id: number } } };
      if (answer.data?.getItem?.i_id !== 1) throw new Error(`${name}: the typed API of ${branch} answered ${JSON.stringify(answer)}`);
    },
    pointRead: async (branch, id) => rowOf((await api.getRow({ table: 'Item', key: String(id), at: branch })).row),
    rangeRead: async (branch, lo) =>
      (await api.lookupRows({ table: 'Item', at: branch, keys: Array.from({ length: 100 }, (_, k) => String(lo + k)) })).items.filter(
        (r) => r !== null,
      ).length,
    insert: async (branch, row) => void (await api.write({ branch, ops: [{ op: 'insert', table: 'Item', values: { ...row } }] })),
    update: async (branch, id, price) =>
      void (await api.write({ branch, ops: [{ op: 'update', table: 'Item', values: { i_id: id, i_price: price } }] })),
    rangeUpdate: async (branch, lo, price) =>
      void (await api.write({
        branch,
        ops: Array.from({ length: 100 }, (_, k) => ({ op: 'update' as const, table: 'Item', values: { i_id: lo + k, i_price: price } })),
      })),
  };
}

/** main's rows and the spine, through the API; the spine's tip. */
async function buildGraph(api: BranchgraphApi): Promise<string> {
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  for (let s = 1; s <= ROWS; s += 50_000)
    await api.write({
      branch: 'main',
      ops: Array.from({ length: Math.min(50_000, ROWS - s + 1) }, (_, k) => ({
        op: 'insert' as const,
        table: 'Item',
        values: { ...item(s + k) },
      })),
    });
  await api.compact({ branch: 'main', mode: 'full' });
  let from = 'main';
  for (let level = 1; level <= SPINE; level++) {
    const name = `spine${level}`;
    await api.createBranch({ name, from });
    await api.write({ branch: name, ops: [{ op: 'update', table: 'Item', values: { i_id: level * 97, i_data: `spine ${level}` } }] });
    from = name;
  }
  return from;
}

/** PostgreSQL: a database per branch, made from its parent as a template; one connection per database. */
async function postgresSide(dir: string): Promise<{ side: Side; tip: string; stop: () => Promise<void> }> {
  await mkdir(dir, { recursive: true });
  const server = await startPostgres(dir);
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  const clients = new Map<string, pg.Client>();
  const db = (name: string) => name.replace(/[^a-z0-9_]/g, '_');
  const client = async (branch: string): Promise<pg.Client> => {
    let c = clients.get(branch);
    if (c === undefined) {
      c = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, `/${db(branch)}`) });
      await c.connect();
      clients.set(branch, c);
    }
    return c;
  };
  // A template must have no sessions: the parent's connection is closed first, as BranchBench's backend does.
  const release = async (branch: string) => {
    await clients.get(branch)?.end();
    clients.delete(branch);
  };
  await admin.query('create database main');
  const main = await client('main');
  await main.query(
    'create table item (i_id int primary key, i_im_id int not null, i_name varchar(24) not null, i_price numeric(7,2) not null, i_data varchar(50) not null)',
  );
  for (let s = 1; s <= ROWS; s += 1000) {
    const rows = Array.from({ length: Math.min(1000, ROWS - s + 1) }, (_, k) => item(s + k));
    const values = rows.map((_, i) => `($${5 * i + 1}, $${5 * i + 2}, $${5 * i + 3}, $${5 * i + 4}, $${5 * i + 5})`).join(',');
    await main.query(
      `insert into item values ${values}`,
      rows.flatMap((r) => [r.i_id, r.i_im_id, r.i_name, r.i_price, r.i_data]),
    );
  }
  await main.query('vacuum analyze item');
  let from = 'main';
  for (let level = 1; level <= SPINE; level++) {
    const name = `spine${level}`;
    await release(from);
    await admin.query(`create database ${db(name)} template ${db(from)}`);
    await (await client(name)).query('update item set i_data = $1 where i_id = $2', [`spine ${level}`, level * 97]);
    from = name;
  }
  const tip = from;
  await release(tip);
  const num = (r: { i_price: string | number } & Omit<Item, 'i_price'>): Item => ({ ...r, i_price: Number(r.i_price) });
  const side: Side = {
    name: 'postgres',
    create: async (child) => void (await admin.query(`create database ${db(child)} template ${db(tip)}`)),
    connect: async (branch) => {
      await release(branch);
      if ((await (await client(branch)).query('select i_id from item where i_id = 1')).rows[0]?.i_id !== 1)
        throw new Error('postgres: connect');
    },
    pointRead: async (branch, id) => {
      const r = await (await client(branch)).query({ name: 'point', text: 'select * from item where i_id = $1', values: [id] });
      return r.rows[0] === undefined ? null : num(r.rows[0]);
    },
    rangeRead: async (branch, lo) =>
      (
        await (
          await client(branch)
        ).query({ name: 'range', text: 'select * from item where i_id between $1 and $2', values: [lo, lo + 99] })
      ).rowCount ?? 0,
    insert: async (branch, r) =>
      void (await (
        await client(branch)
      ).query({
        name: 'insert',
        text: 'insert into item values ($1, $2, $3, $4, $5)',
        values: [r.i_id, r.i_im_id, r.i_name, r.i_price, r.i_data],
      })),
    update: async (branch, id, price) =>
      void (await (
        await client(branch)
      ).query({ name: 'update', text: 'update item set i_price = $1 where i_id = $2', values: [price, id] })),
    rangeUpdate: async (branch, lo, price) =>
      void (await (
        await client(branch)
      ).query({
        name: 'range_update',
        text: 'update item set i_price = $1 where i_id between $2 and $3',
        values: [price, lo, lo + 99],
      })),
  };
  return {
    side,
    tip,
    stop: async () => {
      await Promise.all([...clients.values()].map((c) => c.end()));
      await admin.end();
      server.stop();
    },
  };
}

/**
 * What an MCP tool call costs over the plain REST call it wraps, on one server: 200 point reads
 * (`get_row` against `GET /tables/{t}/rows/{key}`) and 200 one-row writes (`write` against
 * `POST /branches/{id}/writes`), alternating, each a median of time and of the server's store calls.
 */
async function toolCalls(url: string, a: { tip: string; calls: NonNullable<Side['calls']> }): Promise<Record<string, number>> {
  const rest = new RestClient(url);
  const mcp = new Client({ name: 'branchbench', version: '1.0.0' });
  await mcp.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`)));
  const branch = 'bb-tools';
  await rest.createBranch({ name: branch, from: a.tip });
  const side = { name: 'tools', calls: a.calls } as Side;
  const out: Record<string, number> = {};
  const ids = keys(200, 29);
  const check = (got: unknown, id: number) => {
    if ((got as { i_id?: number } | null)?.i_id !== id) throw new Error(`tool calls: read ${id} got ${JSON.stringify(got)}`);
  };
  const readRest = await timed(side, ids, async (id) => check((await rest.getRow({ table: 'Item', key: String(id), at: branch })).row, id));
  const readTool = await timed(side, ids, async (id) => {
    const r = (await mcp.callTool({ name: 'get_row', arguments: { table: 'Item', key: String(id), at: branch } })) as {
      structuredContent?: { row: unknown };
    };
    check(r.structuredContent?.row, id);
  });
  const op = (id: number, price: number) => ({ op: 'update' as const, table: 'Item', values: { i_id: id, i_price: price } });
  const writeRest = await timed(side, ids, async (id) => void (await rest.write({ branch, ops: [op(id, 300 + id / 100)] })));
  const writeTool = await timed(side, ids, async (id) => {
    const r = (await mcp.callTool({ name: 'write', arguments: { branch, ops: [op(id, 400 + id / 100)] } })) as { isError?: boolean };
    if (r.isError === true) throw new Error('tool calls: a write was refused');
  });
  await mcp.close();
  for (const [k, v] of Object.entries({
    rest_point_read: readRest,
    tool_point_read: readTool,
    rest_write: writeRest,
    tool_write: writeTool,
  })) {
    out[`${k}_ms`] = r3(v.ms);
    out[`${k}_calls`] = v.calls as number;
  }
  out.tool_over_rest_point_read = r3(readTool.ms / readRest.ms);
  out.tool_over_rest_write = r3(writeTool.ms / writeRest.ms);
  return out;
}

/** Point reads on the branch at each depth of one chain of forks. */
async function depthReads(dir: string): Promise<Record<string, number>> {
  const service = await serviceOnStore(new FsStore(dir), { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, CTX);
  const rows = Math.min(ROWS, 10_000);
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  await api.write({
    branch: 'main',
    ops: Array.from({ length: rows }, (_, k) => ({ op: 'insert' as const, table: 'Item', values: { ...item(k + 1) } })),
  });
  const out: Record<string, number> = {};
  let from = 'main';
  const max = DEPTHS[DEPTHS.length - 1] as number;
  for (let level = 1; level <= max; level++) {
    const name = `depth${level}`;
    await api.createBranch({ name, from });
    await api.write({
      branch: name,
      ops: [{ op: 'update', table: 'Item', values: { i_id: 1 + (level % rows), i_data: `level ${level}` } }],
    });
    await api.compact({ branch: name, mode: 'tiered' });
    from = name;
    if (!DEPTHS.includes(level)) continue;
    const ids = keys(1000, 23).map((k) => 1 + (k % rows));
    for (const id of ids.slice(0, 50)) await api.getRow({ table: 'Item', key: String(id), at: name });
    const ms: number[] = [];
    for (const id of ids) {
      const t = performance.now();
      const got = (await api.getRow({ table: 'Item', key: String(id), at: name })).row as unknown as Item | null;
      ms.push(performance.now() - t);
      if (got?.i_id !== id) throw new Error(`depth ${level}: read ${id} got ${JSON.stringify(got)}`);
    }
    out[`point_read_ms_depth_${level}`] = r3(median(ms));
  }
  await service.close();
  return out;
}

async function main(): Promise<void> {
  const root = await mkdtemp(path.join(tmpdir(), 'bg-branchbench-'));
  // The postgres user reaches its data directory through this one.
  await chmod(root, 0o755);
  const figures: Record<string, number> = { rows: ROWS, spine: SPINE };
  try {
    // branchgraph, embedded: the graph built, then every operation, its store calls counted.
    const dir = path.join(root, 'store');
    const counting = new CountingStore(new FsStore(dir));
    const service = await serviceOnStore(counting, { actor: 'bench', shard: 'bench' });
    const api = embeddedApi(service, CTX);
    const tip = await buildGraph(api);
    const typed = embeddedTypedGraphql(service, CTX);
    const calls = { reset: () => counting.reset(), count: () => counting.snapshot().total.calls };
    Object.assign(figures, await operations(ours('embedded', api, { typed: (b, q) => typed(b, q), calls }), tip));
    await service.close();

    // The same store served over HTTP, through the REST client, its store calls counted.
    const served = new CountingStore(new FsStore(dir));
    const server = await startServer(
      loadConfig({ COMPACTION_BACKGROUND: 'false' }, { store: dir, port: '0', 'log-level': 'silent' }),
      pino({ level: 'silent' }),
      { store: served },
    );
    const typedHttp = async (branch: string, query: string) =>
      (
        await fetch(`${server.url}/branches/${encodeURIComponent(branch)}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query }),
        })
      ).json();
    const httpCalls = { reset: () => served.reset(), count: () => served.snapshot().total.calls };
    Object.assign(figures, await operations(ours('http', new RestClient(server.url), { typed: typedHttp, calls: httpCalls }), tip));
    Object.assign(figures, await toolCalls(server.url, { tip, calls: httpCalls }));
    await server.close();

    const peer = await postgresSide(path.join(root, 'pg'));
    try {
      Object.assign(figures, await operations(peer.side, peer.tip));
    } finally {
      await peer.stop();
    }
    Object.assign(figures, await depthReads(path.join(root, 'depth')));
  } finally {
    await rm(root, { recursive: true, force: true });
  }
  const f = (k: string) => figures[k] as number;
  const ratios = {
    create_ms: f('embedded_create_ms'),
    connect_ms: f('embedded_connect_ms'),
    first_query_ms: f('embedded_first_query_ms'),
    point_read_ms: f('embedded_point_read_ms'),
    range_read_ms: f('embedded_range_read_ms'),
    insert_ms: f('embedded_insert_ms'),
    update_ms: f('embedded_update_ms'),
    range_update_ms: f('embedded_range_update_ms'),
    postgres_over_branchgraph_create: r3(f('postgres_create_ms') / f('embedded_create_ms')),
    postgres_over_branchgraph_point_read: r3(f('postgres_point_read_ms') / f('embedded_point_read_ms')),
    postgres_over_branchgraph_insert: r3(f('postgres_insert_ms') / f('embedded_insert_ms')),
    read_depth_1024_over_1: r3(f('point_read_ms_depth_1024') / f('point_read_ms_depth_1')),
  };
  process.stdout.write(`${JSON.stringify({ ...figures, ...ratios, peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024) })}\n`);
}

await main();
