/**
 * Lone UTF-16 surrogates cannot be stored (UTF-8 has no encoding for them),
 * so every input path refuses them with `invalid_input` naming the field,
 * and every string that is accepted round-trips exactly through write, read,
 * merge, catch-up and restart.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { isWellFormed } from '../src/model/text.js';
import { WalWriter } from '../src/wal/wal-writer.js';
import { catchUp } from '../src/wal/catch-up.js';
import { BranchgraphService } from '../src/service/service.js';
import { mergeOk, rowsOf } from './support/fixtures.js';
import { gql, testServer } from './support/test-server.js';
import { embeddedApi } from '../src/service/api.js';

const SCHEMA = 'node T { id: string @key\n v: string?\n j: json? }';
/** Any sequence of UTF-16 code units: lone surrogates, pairs, NUL and all. */
const utf16 = fc.array(fc.integer({ min: 0, max: 0xffff }), { maxLength: 8 }).map((units) => String.fromCharCode(...units));
const LONE = '\udfff';

async function graphWithSchema(store = new MemoryStore()): Promise<Graph> {
  const g = await Graph.open(store);
  await g.applySchema('main', SCHEMA);
  return g;
}

describe('well-formed Unicode', () => {
  it('every accepted key and value round-trips exactly through write, read, merge, catch-up and restart; ill-formed ones are refused', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          utf16.filter((s) => s.length > 0),
          { minLength: 1, maxLength: 4 },
        ),
        utf16,
        async (keys, value) => {
          const store = new MemoryStore();
          const g = await graphWithSchema(store);
          await g.createBranch('side', { branch: 'main' });
          const expected: Record<string, unknown> = {};
          for (const [i, key] of keys.entries()) {
            const op = { op: 'upsert' as const, table: 'T', values: { id: key, v: value, j: { [value]: [value] } } };
            const ok = isWellFormed(key) && isWellFormed(value);
            const via = i % 2 === 0 ? g.write('side', [op]) : new WalWriter(g.ports, { shard: 's' }).ingest('side', [op]);
            if (!ok) {
              await expect(via).rejects.toMatchObject({ code: 'invalid_input' });
              continue;
            }
            await via;
            expected[key] = { id: key, v: value, j: { [value]: [value] } };
          }
          await catchUp(g.ports, 'side');
          await mergeOk(g, 'side');
          const reopened = await Graph.open(store);
          for (const graph of [g, reopened]) {
            for (const branch of ['side', 'main']) expect(await rowsOf(graph, branch, 'T')).toEqual(expected);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('the embedded service refuses a lone surrogate in a key, a value, a JSON object key, a load line and schema text, naming the field, and stores nothing', async () => {
    const store = new MemoryStore();
    const svc = new BranchgraphService(await graphWithSchema(store), { wal: { shard: 's' } });
    const ctx = { transport: 'embedded' as const };
    const cases: [Promise<unknown>, string][] = [
      [embeddedApi(svc, ctx).write({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: LONE } }] }), 'id'],
      [embeddedApi(svc, ctx).write({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: 'a', v: `x${LONE}y` } }] }), 'v'],
      [
        embeddedApi(svc, ctx).write({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: 'a', j: { [`k${LONE}`]: 1 } } }] }),
        'j',
      ],
      [embeddedApi(svc, ctx).load({ branch: 'main', ndjson: `{"op":"insert","table":"T","values":{"id":"\\udfff"}}\n` }), 'id'],
      [embeddedApi(svc, ctx).ingest({ branch: 'main', ops: [{ op: 'insert', table: 'T', values: { id: '\ud800' } }] }), 'id'],
      [embeddedApi(svc, ctx).applySchema({ branch: 'main', schema: `node U { id: string @key } # ${LONE}` }), 'schema'],
    ];
    for (const [p, field] of cases) {
      const e = (await p.then(
        () => undefined,
        (x: unknown) => x,
      )) as { code: string; issues: { path: string }[] } | undefined;
      expect(e?.code).toBe('invalid_input');
      expect(e?.issues.some((i) => i.path.includes(field))).toBe(true);
    }
    expect(await rowsOf(svc.graph, 'main', 'T')).toEqual({});
    expect((await embeddedApi(svc, ctx).walStatus({ branch: 'main' })).pendingGenerations).toBe(0);
  });

  it('REST JSON, NDJSON load and ingest, and GraphQL variables refuse lone surrogates with 400 invalid_input', async () => {
    const s = await testServer();
    try {
      expect(
        (
          await fetch(`${s.url}/branches/main/schema`, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ schema: SCHEMA }),
          })
        ).status,
      ).toBe(200);
      const body = '{"op":"insert","table":"T","values":{"id":"\\udfff"}}';
      const rest = [
        await fetch(`${s.url}/branches/main/writes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"ops":[${body}]}`,
        }),
        await fetch(`${s.url}/branches/main/writes`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: `{"ops":[{"op":"insert","table":"T","values":{"id":"a"}}],"message":"m\\ud800"}`,
        }),
        await fetch(`${s.url}/branches/main/load`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson' },
          body: `${body}\n`,
        }),
        await fetch(`${s.url}/branches/main/ingest`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-ndjson' },
          body: `${body}\n`,
        }),
      ];
      for (const r of rest) {
        expect(r.status).toBe(400);
        expect(((await r.json()) as { error: { code: string } }).error.code).toBe('invalid_input');
      }
      const g = await gql(s.url, 'mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }', {
        i: { ops: [{ op: 'insert', table: 'T', values: { id: LONE } }] },
      });
      expect(g.body.errors?.[0]?.extensions?.code).toBe('invalid_input');
      expect(await rowsOf(s.graph, 'main', 'T')).toEqual({});
    } finally {
      await s.close();
    }
  });
});

describe('commit metadata', () => {
  it('an embedded caller giving a lone surrogate in a message or author gets invalid_input, and nothing is published', async () => {
    const g = await graphWithSchema();
    const before = (await g.branchHead('main')).manifest.commit.id;
    const op = { op: 'insert' as const, table: 'T', values: { id: 'a' } };
    await expect(g.write('main', [op], { message: `m${LONE}` })).rejects.toMatchObject({
      code: 'invalid_input',
      issues: [{ path: 'commit.message' }],
    });
    await expect(g.write('main', [op], { author: '\ud800' })).rejects.toMatchObject({
      code: 'invalid_input',
      issues: [{ path: 'commit.author' }],
    });
    expect((await g.branchHead('main')).manifest.commit.id).toBe(before);
  });
});
