/**
 * Loads from the files people have: CSV with a header line and Parquet
 * written by another tool (DuckDB) or by our own export, each read by
 * column name into the table's types, landing the same rows over every
 * transport; and a refused load that names the line or row to fix and
 * changes nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../src/cli/run-cli.js';
import { RestClient } from '../src/http/rest-client.js';
import { allRows, embeddedApi } from '../src/service/api.js';
import { testServer, type TestServer } from './support/test-server.js';

const SCHEMA = `
node Thing {
  id: string @key
  n: int?
  f: float?
  b: bool?
  d: date?
  t: datetime?
  e: enum(red, blue)?
  j: json?
  s: string?
  v: vector(3)?
}
edge Near: Thing -> Thing {
  w: int?
}`;

const CSV = [
  'id,n,f,b,d,t,e,j,s,v',
  'a,42,1.5,true,2026-01-31,2026-01-31T12:00:00.000001Z,red,"{""x"":[1,""two""]}",hello,"[1,2,3]"',
  'b,,,,,,,,"",',
  'c,-7,-0.25,f,1999-12-31,1969-12-31T23:59:59.999999Z,blue,null,"two lines,\nand a comma",',
  '',
].join('\n');

const EXPECTED = [
  {
    id: 'a',
    n: 42,
    f: 1.5,
    b: true,
    d: '2026-01-31',
    t: '2026-01-31T12:00:00.000001Z',
    e: 'red',
    j: { x: [1, 'two'] },
    s: 'hello',
    v: [1, 2, 3],
  },
  { id: 'b', s: '' },
  { id: 'c', n: -7, f: -0.25, b: false, d: '1999-12-31', t: '1969-12-31T23:59:59.999999Z', e: 'blue', s: 'two lines,\nand a comma' },
];

const dir = mkdtempSync(path.join(tmpdir(), 'bg-load-formats-'));

/** A branch's rows of a table, without nulls, in key order. */
async function rowsAt(rest: RestClient, table: string, branch: string): Promise<Record<string, unknown>[]> {
  return (await allRows(rest, table, { branch })).map((r) => Object.fromEntries(Object.entries(r.row).filter(([, v]) => v !== null)));
}

async function cli(s: TestServer, args: string[]): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const code = await runCli(['--json', ...args, '--server', s.url], {
    stdout: () => undefined,
    stderr: (t) => err.push(t),
    stdoutStream: process.stdout,
  });
  return { code, err: err.join('') };
}

/** A Parquet file DuckDB writes from a query. */
async function duckParquet(file: string, select: string): Promise<Uint8Array> {
  const db = await (await DuckDBInstance.create(':memory:')).connect();
  await db.run(`COPY (${select}) TO '${file}' (FORMAT parquet)`);
  return new Uint8Array(await readFile(file));
}

describe('loads from CSV and Parquet', () => {
  let s: TestServer;
  let rest: RestClient;
  beforeAll(async () => {
    s = await testServer();
    rest = new RestClient(s.url);
    await rest.applySchema({ branch: 'main', schema: SCHEMA });
  });
  afterAll(async () => s.close());

  it('CSV rows land typed by their columns, the same embedded (as text or a byte stream), over REST, GraphQL and the command line', async () => {
    const ways = ['embedded', 'stream', 'rest', 'graphql', 'cli'];
    for (const b of ways) await rest.createBranch({ name: `csv-${b}`, from: { branch: 'main' } });
    const api = embeddedApi(s.service, { transport: 'embedded' });
    const embedded = await api.load({ branch: 'csv-embedded', csv: CSV, table: 'Thing' });
    expect(embedded).toMatchObject({ inserted: 3, updated: 0 });
    // Three bytes a piece: pieces end inside fields, quotes and lines.
    const bytes = Buffer.from(CSV);
    const pieces = Array.from({ length: Math.ceil(bytes.length / 3) }, (_, i) => bytes.subarray(3 * i, 3 * i + 3));
    expect(await api.load({ branch: 'csv-stream', csv: Readable.from(pieces), table: 'Thing' })).toMatchObject({ inserted: 3 });
    await rest.load({ branch: 'csv-rest', csv: CSV, table: 'Thing' });
    const gql = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        query: 'mutation($csv: String!) { load(branch: "csv-graphql", csv: $csv, table: "Thing", op: insert) { inserted } }',
        variables: { csv: CSV },
      }),
    });
    expect(((await gql.json()) as { errors?: unknown }).errors).toBeUndefined();
    const file = path.join(dir, 'things.csv');
    writeFileSync(file, CSV);
    const loaded = await cli(s, ['load', 'csv-cli', file, '--table', 'Thing']);
    expect(loaded.code, loaded.err).toBe(0);
    for (const b of ways) expect(await rowsAt(rest, 'Thing', `csv-${b}`)).toEqual(EXPECTED);
  });

  it('a raw REST body says its format by Content-Type, with the table in the query string; edges load by their endpoints', async () => {
    await rest.createBranch({ name: 'csv-raw', from: { branch: 'main' } });
    const post = (type: string, table: string, body: string) =>
      fetch(`${s.url}/branches/csv-raw/load?table=${table}`, { method: 'POST', headers: { 'content-type': type }, body });
    expect((await post('text/csv; charset=utf-8', 'Thing', 'id\nx\ny\n')).status).toBe(200);
    expect((await post('text/csv', 'Near', 'from,to,w\nx,y,3\n')).status).toBe(200);
    expect(await rowsAt(rest, 'Near', 'csv-raw')).toEqual([{ from: 'x', to: 'y', w: 3 }]);
  });

  it('Parquet written by DuckDB loads with its column types mapped, over REST and the command line', async () => {
    const bytes = await duckParquet(
      path.join(dir, 'duck.parquet'),
      `SELECT * FROM (VALUES
        ('a', 42::BIGINT, 1.5::DOUBLE, true, DATE '2026-01-31', TIMESTAMPTZ '2026-01-31 12:00:00.000001+00', 'red', '{"x":[1,"two"]}', 'hello', [1.0, 2.0, 3.0]::FLOAT[]),
        ('b', NULL, NULL, NULL, NULL, NULL, NULL, NULL, '', NULL),
        ('c', -7::BIGINT, -0.25::DOUBLE, false, DATE '1999-12-31', TIMESTAMPTZ '1969-12-31 23:59:59.999999+00', 'blue', NULL, 'two lines,\nand a comma', NULL)
      ) AS t(id, n, f, b, d, t, e, j, s, v)`,
    );
    await rest.createBranch({ name: 'pq-rest', from: { branch: 'main' } });
    await rest.load({ branch: 'pq-rest', parquet: bytes, table: 'Thing' });
    await rest.createBranch({ name: 'pq-cli', from: { branch: 'main' } });
    const loaded = await cli(s, ['load', 'pq-cli', path.join(dir, 'duck.parquet'), '--table', 'Thing', '--op', 'insert']);
    expect(loaded.code, loaded.err).toBe(0);
    for (const b of ['pq-rest', 'pq-cli']) expect(await rowsAt(rest, 'Thing', b)).toEqual(EXPECTED);
  });

  it('an exported table loads back unchanged, as Parquet and as NDJSON', async () => {
    await rest.createBranch({ name: 'export-source', from: { branch: 'main' } });
    await rest.load({ branch: 'export-source', csv: CSV, table: 'Thing' });
    const exported = async (format: string) =>
      new Uint8Array(await (await fetch(`${s.url}/tables/Thing/export?at=export-source&format=${format}`)).arrayBuffer());
    await rest.createBranch({ name: 'from-parquet', from: { branch: 'main' } });
    await rest.load({ branch: 'from-parquet', parquet: await exported('parquet'), table: 'Thing', op: 'insert' });
    await rest.createBranch({ name: 'from-ndjson', from: { branch: 'main' } });
    const lines = new TextDecoder()
      .decode(await exported('ndjson'))
      .trim()
      .split('\n');
    await rest.load({
      branch: 'from-ndjson',
      ndjson: lines.map((l) => JSON.stringify({ table: 'Thing', values: JSON.parse(l) })).join('\n'),
    });
    for (const b of ['from-parquet', 'from-ndjson']) expect(await rowsAt(rest, 'Thing', b)).toEqual(EXPECTED);
  });

  describe('a refused load names what to fix and changes nothing', () => {
    const refusals: [string, Parameters<RestClient['load']>[0] | (() => Promise<Parameters<RestClient['load']>[0]>), RegExp, string][] = [
      [
        'a cell of the wrong type',
        { branch: 'main', csv: 'id,n\na,1\nb,x\n', table: 'Thing' },
        /line 3\.values\.n: n must be an integer/,
        'constraint_violation',
      ],
      [
        'a column the table does not have',
        { branch: 'main', csv: 'id,nope\na,1\n', table: 'Thing' },
        /line 1, column 2: Thing has no property "nope"/,
        'invalid_input',
      ],
      [
        'a row with too few fields',
        { branch: 'main', csv: 'id,n\na,1\nb\n', table: 'Thing' },
        /line 3: 2 columns in the header, 1 here/,
        'invalid_input',
      ],
      [
        'an unclosed quote',
        { branch: 'main', csv: 'id,s\na,"open\n', table: 'Thing' },
        /line 2: a quoted field is not closed/,
        'invalid_input',
      ],
      [
        'a json cell that is not JSON',
        { branch: 'main', csv: 'id,j\na,{x\n', table: 'Thing' },
        /line 2: j must be JSON text/,
        'invalid_input',
      ],
      [
        'a key twice under insert',
        { branch: 'main', csv: 'id\na\nb\na\n', table: 'Thing', op: 'insert' },
        /line 4: Thing a already exists/,
        'constraint_violation',
      ],
      [
        'an NDJSON line that breaks a constraint',
        { branch: 'main', ndjson: '{"table":"Thing","values":{"id":"a"}}\n\n{"table":"Near","values":{"from":"a","to":"ghost"}}\n' },
        /line 3.*ghost/,
        'constraint_violation',
      ],
      ['a CSV load without its table', { branch: 'main', csv: 'id\na\n' }, /needs the table/, 'invalid_input'],
      ['a table that does not exist', { branch: 'main', csv: 'id\na\n', table: 'Nope' }, /table Nope does not exist/, 'not_found'],
      [
        'NDJSON with a table',
        { branch: 'main', ndjson: '{"table":"Thing","values":{"id":"a"}}', table: 'Thing' },
        /names its table and operation on each line/,
        'invalid_input',
      ],
      [
        'bytes that are not Parquet',
        { branch: 'main', parquet: new TextEncoder().encode('id\na\n'), table: 'Thing' },
        /not a Parquet file/,
        'invalid_input',
      ],
      [
        'a Parquet row without its key',
        async () => ({
          branch: 'main',
          parquet: await duckParquet(path.join(dir, 'nokey.parquet'), `SELECT * FROM (VALUES ('a'), (NULL)) AS t(id)`),
          table: 'Thing',
        }),
        /row 2\.values\.id: id is required/,
        'constraint_violation',
      ],
    ];
    for (const [what, input, message, code] of refusals)
      it(what, async () => {
        const head = (await rest.getBranch({ name: 'main' })).head.id;
        const body = typeof input === 'function' ? await input() : input;
        await expect(rest.load(body)).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
        expect((await rest.getBranch({ name: 'main' })).head.id).toBe(head);
        expect(await rowsAt(rest, 'Thing', 'main')).toEqual([]);
      });

    it('two bodies at once', async () => {
      await expect(rest.load({ branch: 'main', ndjson: '', csv: 'id\n', table: 'Thing' })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(
        embeddedApi(s.service, { transport: 'embedded' }).load({ branch: 'main', ndjson: '', csv: 'id\n' }),
      ).rejects.toMatchObject({
        code: 'invalid_input',
      });
    });
  });
});

describe('a REST load streams past the body limit where it can', () => {
  let s: TestServer;
  let rest: RestClient;
  const LIMIT = 64 * 1024;
  beforeAll(async () => {
    s = await testServer({ maxBodyBytes: LIMIT });
    rest = new RestClient(s.url);
    await rest.applySchema({ branch: 'main', schema: 'node Row { id: string @key\n n: int }' });
  });
  afterAll(async () => s.close());

  /** Text as pieces of 8 KiB that arrive one after another. */
  const streamed = (text: string): Readable =>
    Readable.from(Array.from({ length: Math.ceil(text.length / 8192) }, (_, i) => Buffer.from(text.slice(i * 8192, (i + 1) * 8192))));

  /** `count` CSV rows under their header. */
  const csvRows = (count: number): string =>
    ['id,n', ...Array.from({ length: count }, (_, i) => `row-${String(i).padStart(8, '0')},${i}`)].join('\n');

  it('CSV and NDJSON into an empty table stream through at any size; what is read whole is held to the limit and refused whole', async () => {
    const rows = 20_000;
    const csv = csvRows(rows);
    expect(csv.length).toBeGreaterThan(4 * LIMIT);
    await rest.createBranch({ name: 'big', from: { branch: 'main' } });
    // The client streams the body, as the command line streams a file; the server reads it as it arrives.
    expect(await rest.load({ branch: 'big', csv: streamed(csv), table: 'Row', op: 'insert' })).toMatchObject({ inserted: rows });
    expect((await allRows(rest, 'Row', { branch: 'big' })).length).toBe(rows);
    // NDJSON whose lines all insert into one empty table streams as CSV does.
    const ndjson = Array.from({ length: rows }, (_, i) => JSON.stringify({ table: 'Row', values: { id: `n${i}`, n: i } })).join('\n');
    await rest.createBranch({ name: 'lines', from: { branch: 'main' } });
    expect(await rest.load({ branch: 'lines', ndjson: streamed(ndjson) })).toMatchObject({ inserted: rows });
    expect((await allRows(rest, 'Row', { branch: 'lines' })).length).toBe(rows);
    // One line that is not for the bulk path (a delete, at the very end) sends the load to the general path, which reads it
    // whole: past the limit it is refused, and nothing is published.
    const head = (await rest.getBranch({ name: 'main' })).head.id;
    const deleting = `${ndjson}\n${JSON.stringify({ op: 'delete', table: 'Row', values: { id: 'n0' } })}`;
    await expect(rest.load({ branch: 'main', ndjson: streamed(deleting) })).rejects.toMatchObject({
      code: 'payload_too_large',
      message: expect.stringMatching(/read whole/),
    });
    // So is CSV into a table that holds rows (the general path).
    await expect(rest.load({ branch: 'big', csv: streamed(csvRows(rows)), table: 'Row' })).rejects.toMatchObject({
      code: 'payload_too_large',
    });
    expect((await rest.getBranch({ name: 'main' })).head.id).toBe(head);
    // Under the limit, a body read whole loads as before.
    expect(await rest.load({ branch: 'main', ndjson: ndjson.split('\n').slice(0, 100).join('\n') })).toMatchObject({ inserted: 100 });
  });
});
