/**
 * The bulk path of a load (src/graph/streaming-load.ts) against the general
 * path it stands beside: the same rows loaded as CSV in many small chunks
 * and as one NDJSON batch give the same tables and indexes, or are both
 * refused; a refused bulk load names a line that takes part in the problem
 * and publishes nothing; and what the chunks cannot see alone (a key or a
 * @unique value in two chunks, an edge whose endpoint is missing) is caught.
 */
import fc from 'fast-check';
import { mkdtempSync, rmSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { parseNdjson } from '../src/graph/ndjson.js';
import type { WriteOp } from '../src/graph/write-batch.js';
import { isBranchgraphError } from '../src/model/errors.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll } from '../src/store/object-store.js';
import { observe } from './support/observe.js';
import { PEOPLE_SCHEMA } from './support/fixtures.js';

interface Person {
  id: string;
  name: string;
  email: string | null;
  age: number | null;
}

const csvOf = (people: readonly Person[]): string =>
  ['id,name,email,age', ...people.map((p) => `${p.id},${p.name},${p.email ?? ''},${p.age ?? ''}`)].join('\n');

const ndjsonOf = (people: readonly Person[], op: string): string =>
  people.map((p) => JSON.stringify({ op, table: 'Person', values: { ...p } })).join('\n');

/** The general path's answer: the same operations as one write batch, which a load off the bulk path is planned as. */
const oneBatch = (g: Graph, ops: WriteOp[]): Promise<unknown> => g.write('main', ops);
const peopleOps = (people: readonly Person[], op: 'insert' | 'upsert'): WriteOp[] =>
  people.map((p) => ({ op, table: 'Person', values: { ...p } }));

async function emptyGraph(): Promise<{ g: Graph; store: MemoryStore }> {
  const store = new MemoryStore();
  const g = await Graph.open(store, { actor: 'test' });
  await g.applySchema('main', PEOPLE_SCHEMA);
  // The schema's hint and event mark land after it returns: what the store holds is settled first.
  await g.idle();
  return { g, store };
}

/** What a load did: the refusal's code and the lines its issues name, or nothing when it published. */
async function outcome(load: () => Promise<unknown>): Promise<{ code: string; paths: string[] } | undefined> {
  try {
    await load();
    return undefined;
  } catch (e) {
    if (!isBranchgraphError(e)) throw e;
    return { code: e.code, paths: (e.issues ?? []).map((i) => i.path) };
  }
}

// Loads spill under the system's temporary directory; this file's get one of their own, so the
// loads other test files run at the same time leave nothing in the directory checked here.
// Test files share worker processes, so the variable is put back for the files after this one.
const ownTmp = mkdtempSync(path.join(os.tmpdir(), 'streaming-load-test-'));
const systemTmp = process.env.TMPDIR;
beforeAll(() => {
  process.env.TMPDIR = ownTmp;
});
afterAll(() => {
  if (systemTmp === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = systemTmp;
  rmSync(ownTmp, { recursive: true, force: true });
});

const spills = async (): Promise<string[]> => (await readdir(ownTmp)).filter((f) => f.startsWith('branchgraph-load-'));

const person = fc.record({
  id: fc.constantFrom('p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'p7', 'p8'),
  name: fc.constantFrom('Ada', 'Bo'),
  email: fc.option(fc.constantFrom('a@x', 'b@x', 'c@x', 'd@x', 'e@x', 'f@x', 'g@x', 'h@x', 'i@x'), { nil: null }),
  age: fc.option(fc.integer({ min: 0, max: 150 }), { nil: null }),
});

describe('the bulk path of a load', () => {
  it('property: CSV in chunks of any size, merged any number at a time, lands what one write batch lands, or both are refused', async () => {
    const before = await spills();
    await fc.assert(
      fc.asyncProperty(
        fc.array(person, { minLength: 0, maxLength: 24 }),
        fc.integer({ min: 1, max: 9 }),
        fc.constantFrom('insert' as const, 'upsert' as const),
        // Few chunks per merge: a merge of merges, as a load of millions of rows makes.
        fc.integer({ min: 2, max: 5 }),
        async (people, chunkRows, op, fanIn) => {
          const bulk = await emptyGraph();
          const general = await emptyGraph();
          const bulkOutcome = await outcome(() =>
            bulk.g.load('main', { format: 'csv', table: 'Person', op, body: csvOf(people) }, { chunkRows, fanIn }),
          );
          const generalOutcome = await outcome(() => oneBatch(general.g, peopleOps(people, op)));
          expect(bulkOutcome?.code).toBe(generalOutcome?.code);
          if (bulkOutcome === undefined) {
            expect((await observe(bulk.store)).contents).toEqual((await observe(general.store)).contents);
            return;
          }
          // A refusal names a CSV line (header is line 1) holding a row that takes part in the problem.
          for (const p of bulkOutcome.paths) {
            const line = Number(/^line (\d+)/.exec(p)?.[1]);
            expect(line).toBeGreaterThanOrEqual(2);
            expect(line).toBeLessThanOrEqual(people.length + 1);
          }
          // …and publishes nothing: the table is as empty as before.
          expect((await observe(bulk.store)).contents.main?.Person).toEqual({});
        },
      ),
      { numRuns: 60 },
    );
    expect(await spills()).toEqual(before);
  });

  it('property: NDJSON streamed in pieces of any size lands what one batch of its lines lands, whether every line is for the bulk path or one sends it to the general path', async () => {
    const before = await spills();
    // Now and then a line the bulk path does not take: it must send the whole load, from its first line, to the general path.
    const odd = fc.constantFrom(
      JSON.stringify({ op: 'delete', table: 'Person', values: { id: 'p1' } }),
      JSON.stringify({ op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } }),
      JSON.stringify({ op: 'update', table: 'Person', values: { id: 'p2', name: 'Cy' } }),
      '{"table": "Person", "values": ',
      '',
      '   ',
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof({ weight: 6, arbitrary: person }, { weight: 1, arbitrary: odd }), { maxLength: 24 }),
        fc.constantFrom('insert' as const, 'upsert' as const),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 200 }),
        async (lines, op, chunkRows, piece) => {
          const text = lines.map((l) => (typeof l === 'string' ? l : JSON.stringify({ op, table: 'Person', values: { ...l } }))).join('\n');
          async function* body(): AsyncGenerator<Uint8Array> {
            const bytes = Buffer.from(text);
            for (let at = 0; at < bytes.length; at += piece) yield bytes.subarray(at, at + piece);
          }
          const [bulk, general] = [await emptyGraph(), await emptyGraph()];
          const bulkOutcome = await outcome(() => bulk.g.load('main', { format: 'ndjson', body: body() }, { chunkRows, fanIn: 2 }));
          const generalOutcome = await outcome(async () => oneBatch(general.g, await parseNdjson(text)));
          expect(bulkOutcome?.code).toBe(generalOutcome?.code);
          if (bulkOutcome === undefined) expect((await observe(bulk.store)).contents).toEqual((await observe(general.store)).contents);
          else expect((await observe(bulk.store)).contents.main).toEqual((await observe((await emptyGraph()).store)).contents.main);
        },
      ),
      { numRuns: 80 },
    );
    expect(await spills()).toEqual(before);
    expect((await readdir(ownTmp)).filter((f) => f.startsWith('branchgraph-body-'))).toEqual([]);
  });

  it('NDJSON whose last line is for another table is read again from its start by the general path, from a copy: the body itself is read once', async () => {
    const { g, store } = await emptyGraph();
    const people = Array.from({ length: 40 }, (_, i) => ({ id: `p${String(i).padStart(2, '0')}`, name: 'N', email: null, age: null }));
    const text = `${ndjsonOf(people, 'insert')}\n${JSON.stringify({ table: 'Company', values: { id: 'acme', name: 'Acme' } })}\n`;
    let reads = 0;
    async function* body(): AsyncGenerator<Uint8Array> {
      for (const line of text.split(/(?<=\n)/)) {
        reads++;
        yield Buffer.from(line);
      }
    }
    // Five chunks of eight rows are checked and spilled before the last line shows the load is not one table's.
    expect(await g.load('main', { format: 'ndjson', body: body() }, { chunkRows: 8 })).toMatchObject({
      status: 'published',
      result: { inserted: 41 },
    });
    // The body was read once: the general path read the copy of what the bulk path had read, then the rest.
    expect(reads).toBe(people.length + 1);
    const contents = (await observe(store)).contents.main;
    expect(Object.keys(contents?.Person ?? {})).toHaveLength(40);
    expect(Object.keys(contents?.Company ?? {})).toEqual(['acme']);
  });

  it('an NDJSON load refused while its body still streams lets go of the body and leaves no copy of it', async () => {
    const { g } = await emptyGraph();
    let released = false;
    async function* body(): AsyncGenerator<Uint8Array> {
      try {
        yield Buffer.from(`${JSON.stringify({ op: 'insert', table: 'Person', values: { id: 'p1', name: 'A', age: 999 } })}\n`);
        for (let i = 0; ; i++)
          yield Buffer.from(`${JSON.stringify({ op: 'insert', table: 'Person', values: { id: `q${i}`, name: 'B' } })}\n`);
      } finally {
        released = true;
      }
    }
    await expect(g.load('main', { format: 'ndjson', body: body() }, { chunkRows: 4 })).rejects.toMatchObject({
      code: 'constraint_violation',
      message: expect.stringMatching(/line 1/),
    });
    expect(released).toBe(true);
    expect((await readdir(ownTmp)).filter((f) => f.startsWith('branchgraph-'))).toEqual([]);
  });

  it('a CSV string holding a lone surrogate is refused by either path, though its cells are not walked when it is well-formed', async () => {
    const { g, store } = await emptyGraph();
    const body = 'id,name\np1,Ada\np2,B\uD800o\n';
    const refused = { code: 'invalid_input', message: expect.stringMatching(/line 3\.values\.name: must be well-formed Unicode/) };
    await expect(g.load('main', { format: 'csv', table: 'Person', body }, { chunkRows: 1 })).rejects.toMatchObject(refused);
    await g.write('main', [{ op: 'insert', table: 'Person', values: { id: 'p0', name: 'Old' } }]);
    await expect(g.load('main', { format: 'csv', table: 'Person', body })).rejects.toMatchObject(refused);
    expect(Object.keys((await observe(store)).contents.main?.Person ?? {})).toEqual(['p0']);
  });

  it('a key loaded twice by insert is refused with both lines named, across chunks', async () => {
    const { g } = await emptyGraph();
    const people = ['p1', 'p2', 'p3', 'p4', 'p2'].map((id) => ({ id, name: 'N', email: null, age: null }));
    const err = await outcome(() =>
      g.load('main', { format: 'csv', table: 'Person', op: 'insert', body: csvOf(people) }, { chunkRows: 2 }),
    );
    expect(err).toEqual({ code: 'constraint_violation', paths: ['line 6'] });
    // The same when the chunks are merged two at a time: the first line stays the first.
    await expect(
      g.load('main', { format: 'csv', table: 'Person', op: 'insert', body: csvOf(people) }, { chunkRows: 1, fanIn: 2 }),
    ).rejects.toThrow(/Person p2 already exists \(at line 3\)/);
  });

  it('a @unique value held by rows in two chunks is refused, naming the row and the key already holding it', async () => {
    const { g, store } = await emptyGraph();
    const before = await listAll(store, '');
    const people = [
      { id: 'p1', name: 'A', email: 'same@x', age: null },
      { id: 'p2', name: 'B', email: 'other@x', age: null },
      { id: 'p3', name: 'C', email: 'same@x', age: null },
    ];
    await expect(g.load('main', { format: 'csv', table: 'Person', body: csvOf(people) }, { chunkRows: 1 })).rejects.toThrow(
      /line 4: Person.email = "same@x" is also used by p1/,
    );
    // Nothing published, and the runs the load wrote before it was refused are gone.
    expect((await listAll(store, '')).map((o) => o.key).sort()).toEqual(before.map((o) => o.key).sort());
  });

  it('an upsert of one key in two chunks keeps the later row, and its index holds only the later value', async () => {
    const { g, store } = await emptyGraph();
    const people = [
      { id: 'p1', name: 'First', email: 'old@x', age: 1 },
      { id: 'p2', name: 'B', email: 'b@x', age: null },
      { id: 'p1', name: 'Second', email: 'new@x', age: 2 },
    ];
    const done = await g.load('main', { format: 'csv', table: 'Person', body: csvOf(people) }, { chunkRows: 1 });
    expect(done.result).toEqual({ inserted: 2, updated: 0, deleted: 0, cascaded: 0 });
    expect((await observe(store)).contents.main?.Person?.p1).toMatchObject({ name: 'Second', email: 'new@x', age: 2 });
    // The old value is free again: another row may take it.
    await g.write('main', [{ op: 'insert', table: 'Person', values: { id: 'p9', name: 'N', email: 'old@x' } }]);
  });

  it('property: edges in chunks of any size land what one write batch lands, or both are refused', async () => {
    const edge = fc.record({ from: fc.constantFrom('a', 'b', 'c', 'z'), to: fc.constantFrom('acme', 'gone') });
    await fc.assert(
      fc.asyncProperty(
        fc.array(edge, { maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        fc.constantFrom('insert' as const, 'upsert' as const),
        async (edges, chunkRows, op) => {
          const [bulk, general] = [await emptyGraph(), await emptyGraph()];
          for (const { g } of [bulk, general]) {
            await g.write('main', [
              ...['a', 'b', 'c'].map((id) => ({ op: 'insert' as const, table: 'Person', values: { id, name: id } })),
              { op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } },
            ]);
          }
          const csv = ['from,to', ...edges.map((e) => `${e.from},${e.to}`)].join('\n');
          const bulkOutcome = await outcome(() => bulk.g.load('main', { format: 'csv', table: 'WorksAt', op, body: csv }, { chunkRows }));
          const generalOutcome = await outcome(() =>
            oneBatch(
              general.g,
              edges.map((e) => ({ op, table: 'WorksAt', values: { from: e.from, to: e.to } })),
            ),
          );
          expect(bulkOutcome?.code).toBe(generalOutcome?.code);
          if (bulkOutcome === undefined) expect((await observe(bulk.store)).contents).toEqual((await observe(general.store)).contents);
          else expect((await observe(bulk.store)).contents.main?.WorksAt).toEqual({});
        },
      ),
      { numRuns: 40 },
    );
  });

  it('edges are checked against their endpoints as the merge keeps them, and the in-edge index is built', async () => {
    const { g, store } = await emptyGraph();
    await g.load('main', {
      format: 'csv',
      table: 'Person',
      body: csvOf(['a', 'b', 'c'].map((id) => ({ id, name: id, email: null, age: null }))),
    });
    await g.write('main', [{ op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } }]);
    const edges = (rows: string[]): string => ['from,to', ...rows].join('\n');
    await expect(
      g.load('main', { format: 'csv', table: 'WorksAt', body: edges(['a,acme', 'b,acme', 'z,acme']) }, { chunkRows: 2 }),
    ).rejects.toThrow(/line 4.*source Person z does not exist/);
    await g.load('main', { format: 'csv', table: 'WorksAt', body: edges(['c,acme', 'a,acme', 'b,acme']) }, { chunkRows: 2 });
    // observe checks every index against its table.
    expect(Object.keys((await observe(store)).contents.main?.WorksAt ?? {})).toHaveLength(3);
  });

  it('a load into a table that already holds rows takes the general path and merges with them', async () => {
    const { g, store } = await emptyGraph();
    await g.write('main', [{ op: 'insert', table: 'Person', values: { id: 'p1', name: 'Old' } }]);
    await g.load(
      'main',
      { format: 'csv', table: 'Person', body: csvOf([{ id: 'p2', name: 'New', email: null, age: null }]) },
      { chunkRows: 1 },
    );
    expect(Object.keys((await observe(store)).contents.main?.Person ?? {}).sort()).toEqual(['p1', 'p2']);
  });

  it('a load whose table gains rows while it is read publishes nothing and says to retry', async () => {
    const { g, store } = await emptyGraph();
    const rows = Array.from({ length: 50 }, (_, i) => ({ id: `p${i}`, name: 'N', email: null, age: null }));
    const text = csvOf(rows);
    // The body streams: a writer lands a row in the table between its two halves.
    async function* body(): AsyncGenerator<Uint8Array> {
      yield Buffer.from(text.slice(0, text.length / 2));
      await g.write('main', [{ op: 'insert', table: 'Person', values: { id: 'zz', name: 'Z' } }]);
      yield Buffer.from(text.slice(text.length / 2));
    }
    const err = await outcome(() => g.load('main', { format: 'csv', table: 'Person', body: body() }, { chunkRows: 8 }));
    expect(err?.code).toBe('publish_contention');
    expect(Object.keys((await observe(store)).contents.main?.Person ?? {})).toEqual(['zz']);
    // The runs the load wrote are gone: what is left under the table is the one write's.
    const head = await g.branchHead('main');
    const listed = (await listAll(store, 'runs/Person/')).map((o) => o.key);
    expect(listed).toEqual((head.tables.Person?.runs ?? []).map((r) => r.key));
  });
});
