/**
 * Exports read by the tools people use: DuckDB reads the Parquet and NDJSON
 * exports, Arrow readers the IPC file and stream, pyarrow too where Python
 * has it. Every export holds exactly the rows the API returns at the same
 * ref: pending WAL rows in, deleted and superseded rows out, every type
 * (microseconds of datetimes included) as stored.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { allRows } from '../src/service/api.js';
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
}
edge Near: Thing -> Thing {
  w: int?
}`;

const dir = mkdtempSync(path.join(tmpdir(), 'bg-export-'));
const pyarrow = spawnSync('python3', ['-c', 'import pyarrow'], { stdio: 'ignore' }).status === 0;

async function download(s: TestServer, table: string, format: string, at = 'main'): Promise<{ res: Response; bytes: Uint8Array }> {
  const res = await fetch(`${s.url}/tables/${table}/export?at=${encodeURIComponent(at)}&format=${format}`);
  return { res, bytes: new Uint8Array(await res.arrayBuffer()) };
}

/** A row as the API gives it, in the shape the exports hold (absent optional properties are null). */
function normalized(row: Record<string, unknown>, props: string[]): Record<string, unknown> {
  return Object.fromEntries(props.map((p) => [p, row[p] ?? null]));
}

const PROPS = ['id', 'n', 'f', 'b', 'd', 't', 'e', 'j'];

describe('table export', () => {
  let s: TestServer;
  let rest: RestClient;
  let expected: Record<string, unknown>[];
  beforeAll(async () => {
    s = await testServer();
    rest = new RestClient(s.url);
    await rest.applySchema({ branch: 'main', schema: SCHEMA });
    await rest.write({
      branch: 'main',
      ops: [
        {
          op: 'insert',
          table: 'Thing',
          values: {
            id: 'a',
            n: 9007199254740991,
            f: 1.5,
            b: true,
            d: '2026-01-31',
            t: '2026-01-31T12:00:00.000001Z',
            e: 'red',
            j: { x: [1, 'two'] },
          },
        },
        { op: 'insert', table: 'Thing', values: { id: 'b', n: -3 } },
        { op: 'insert', table: 'Thing', values: { id: 'gone' } },
        { op: 'insert', table: 'Near', values: { from: 'a', to: 'b', w: 1 } },
      ],
    });
    // A superseded version, a tombstone, and rows that are still only in the WAL.
    await rest.write({
      branch: 'main',
      ops: [
        { op: 'update', table: 'Thing', values: { id: 'b', n: 4, t: '1969-12-31T23:59:59.999999Z' } },
        { op: 'delete', table: 'Thing', values: { id: 'gone' } },
      ],
    });
    await rest.ingest({ branch: 'main', ndjson: `${JSON.stringify({ table: 'Thing', values: { id: 'c', f: -0.25, e: 'blue' } })}\n` });
    expect((await rest.walStatus({ branch: 'main' })).pendingGenerations).toBe(1);
    expected = (await allRows(rest, 'Thing', { branch: 'main' })).map((r) => normalized(r.row, PROPS));
    expect(expected.map((r) => r.id)).toEqual(['a', 'b', 'c']);
  });
  afterAll(async () => s.close());

  it('NDJSON holds the API rows, and DuckDB reads it', async () => {
    const { res, bytes } = await download(s, 'Thing', 'ndjson');
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    expect(res.headers.get('x-branchgraph-commit')).toBe((await rest.getBranch({ name: 'main' })).head.id);
    const lines = new TextDecoder().decode(bytes).trim().split('\n');
    expect(lines.map((l) => normalized(JSON.parse(l), PROPS))).toEqual(expected);
    const file = path.join(dir, 'thing.ndjson');
    writeFileSync(file, bytes);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const r = await db.runAndReadAll(`SELECT id, n FROM read_json('${file}', format = 'newline_delimited') ORDER BY id`);
    expect(r.getRowObjectsJson()).toEqual([
      { id: 'a', n: '9007199254740991' },
      { id: 'b', n: '4' },
      { id: 'c', n: null },
    ]);
  });

  it('Parquet read by DuckDB equals the API rows, with real column types', async () => {
    const { res, bytes } = await download(s, 'Thing', 'parquet');
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="Thing.parquet"');
    const file = path.join(dir, 'thing.parquet');
    writeFileSync(file, bytes);
    const db = await (await DuckDBInstance.create(':memory:')).connect();
    const types = await db.runAndReadAll(`SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet('${file}'))`);
    expect(Object.fromEntries(types.getRows() as [string, string][])).toEqual({
      id: 'VARCHAR',
      n: 'BIGINT',
      f: 'DOUBLE',
      b: 'BOOLEAN',
      d: 'DATE',
      t: 'TIMESTAMP WITH TIME ZONE',
      e: 'VARCHAR',
      j: 'VARCHAR',
    });
    const rows = await db.runAndReadAll(
      `SELECT id, n::VARCHAR AS n, f, b, d::VARCHAR AS d, epoch_us(t)::VARCHAR AS t, e, j FROM read_parquet('${file}') ORDER BY id`,
    );
    const micros = (t: unknown): string | null => {
      if (typeof t !== 'string') return null;
      const [whole, frac] = t.slice(0, -1).split('.') as [string, string];
      return String(BigInt(Date.parse(`${whole}Z`)) * 1000n + BigInt(frac));
    };
    expect(rows.getRowObjectsJS()).toEqual(
      expected.map((r) => ({ ...r, n: r.n === null ? null : String(r.n), t: micros(r.t), j: r.j === null ? null : JSON.stringify(r.j) })),
    );
  });

  it('the Arrow file and stream read back as the API rows', async () => {
    for (const format of ['arrow', 'arrow-stream']) {
      const { bytes } = await download(s, 'Thing', format);
      const t = tableFromIPC(bytes);
      expect(t.schema.metadata.get('branchgraph.table')).toBe('Thing');
      const rows = t.toArray().map((r) => {
        const o = r.toJSON() as Record<string, unknown>;
        return {
          ...o,
          n: o.n === null ? null : Number(o.n),
          d: o.d === null ? null : new Date(o.d as number).toISOString().slice(0, 10),
          t: o.t === null ? null : new Date(Math.floor(Number(o.t))).toISOString().slice(0, 19),
          j: o.j === null ? null : JSON.parse(o.j as string),
        };
      });
      // Arrow JS reads timestamps as milliseconds; the microseconds are checked through DuckDB above.
      expect(rows).toEqual(expected.map((r) => ({ ...r, t: r.t === null ? null : (r.t as string).slice(0, 19) })));
    }
  });

  it('regression: with rows pending in the WAL, the commit an export names reproduces exactly the rows it exported', async () => {
    await rest.ingest({ branch: 'main', ndjson: `${JSON.stringify({ table: 'Thing', values: { id: 'p1', n: 1 } })}\n` });
    expect((await rest.walStatus({ branch: 'main' })).pendingGenerations).toBeGreaterThan(0);
    const { res, bytes } = await download(s, 'Thing', 'ndjson');
    const commit = res.headers.get('x-branchgraph-commit') as string;
    const again = await download(s, 'Thing', 'ndjson', `commit:${commit}`);
    expect(new TextDecoder().decode(again.bytes)).toBe(new TextDecoder().decode(bytes));
    expect(new TextDecoder().decode(bytes)).toContain('"p1"');
    // The Parquet file's metadata names the same kind of state: its commit holds its rows.
    const pq = await download(s, 'Thing', 'arrow');
    const meta = tableFromIPC(pq.bytes).schema.metadata.get('branchgraph.commit') as string;
    expect((await download(s, 'Thing', 'arrow', `commit:${meta}`)).bytes.length).toBe(pq.bytes.length);
  });

  it('exports edge tables with from and to, at a commit, and refuses a bad table or format without a 5xx', async () => {
    const { bytes } = await download(s, 'Near', 'ndjson');
    expect(JSON.parse(new TextDecoder().decode(bytes))).toEqual({ from: 'a', to: 'b', w: 1 });
    // The first write's commit: a, b and gone (the WAL row belongs to the branch, not to a commit).
    const first = (await rest.log({ at: { branch: 'main' } })).commits.find((c) => c.message === 'write 4 operations')?.id as string;
    const old = await download(s, 'Thing', 'ndjson', `commit:${first}`);
    expect(new TextDecoder().decode(old.bytes).trim().split('\n')).toHaveLength(3);
    expect((await download(s, 'Nope', 'ndjson')).res.status).toBe(404);
    const bad = await download(s, 'Thing', 'xlsx');
    expect(bad.res.status).toBe(400);
    expect(JSON.parse(new TextDecoder().decode(bad.bytes))).toMatchObject({ error: { code: 'invalid_input' } });
  });

  it.skipIf(!pyarrow)('pyarrow reads the Parquet and Arrow exports', async () => {
    const pq = path.join(dir, 'py.parquet');
    const arrow = path.join(dir, 'py.arrow');
    writeFileSync(pq, (await download(s, 'Thing', 'parquet')).bytes);
    writeFileSync(arrow, (await download(s, 'Thing', 'arrow')).bytes);
    const script = `import pyarrow.parquet as pq, pyarrow.ipc as ipc, json
a = pq.read_table(${JSON.stringify(pq)}).column('id').to_pylist()
b = ipc.open_file(${JSON.stringify(arrow)}).read_all().column('id').to_pylist()
print(json.dumps([a, b]))`;
    const out = spawnSync('python3', ['-c', script], { encoding: 'utf8' });
    expect(JSON.parse(out.stdout)).toEqual([
      ['a', 'b', 'c'],
      ['a', 'b', 'c'],
    ]);
  });
});
