import { describe, expect, it } from 'vitest';
import { mergeOk, mustWrite, peopleGraph, person, rowsOf, PEOPLE_SCHEMA } from '../../test/support/fixtures.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll } from '../store/object-store.js';
import { Graph } from './graph.js';
import { keys } from './keys.js';
import { MIN_GC_GRACE_MS } from './gc.js';
import { parseNdjson } from './ndjson.js';

describe('schema apply', () => {
  it('is a commit; a refused change leaves the branch as it was', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a', { age: 120 })]);
    const head = (await g.branchHead('main')).manifest.commit.id;
    await expect(g.applySchema('main', PEOPLE_SCHEMA.replace('@range(0, 150)', '@range(0, 100)'))).rejects.toMatchObject({
      code: 'schema_incompatible',
    });
    await expect(g.applySchema('main', 'node Person { id: string @key }')).rejects.toMatchObject({ code: 'schema_incompatible' });
    await expect(g.applySchema('main', 'node {')).rejects.toMatchObject({ code: 'schema_invalid' });
    expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
    const r = await g.applySchema('main', PEOPLE_SCHEMA.replace('node Company {', 'node Company {\n  founded: date?'));
    expect(r.status === 'published' && r.commit.kind).toBe('schema');
    expect((await g.applySchema('main', PEOPLE_SCHEMA.replace('node Company {', 'node Company {\n  founded: date?'))).status).toBe(
      'unchanged',
    );
  });

  it('migrations drop properties and fill defaults by rewriting the table', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [{ op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } }]);
    await g.applySchema(
      'main',
      PEOPLE_SCHEMA.replace('node Company {\n  id: string @key\n  name: string\n}', 'node Company {\n  id: string @key\n  size: int\n}'),
      {
        migration: { drop: ['Company.name'], defaults: { 'Company.size': 10 } },
      },
    );
    expect(await rowsOf(g, 'main', 'Company')).toEqual({ acme: { id: 'acme', size: 10 } });
  });
});

describe('NDJSON loads', () => {
  it('loads every line as one commit, or reports bad lines by number and loads nothing', async () => {
    const g = await peopleGraph();
    const good = '{"table":"Person","values":{"id":"a","name":"A"}}\n\n{"op":"insert","table":"Person","values":{"id":"b","name":"B"}}\n';
    const r = await g.load('main', good);
    expect(r.status === 'published' && r.result.inserted).toBe(2);
    await expect(parseNdjson('{"table":"Person","values":{}}\nnot json\n{"op":"drop","table":"X","values":{}}')).rejects.toMatchObject({
      code: 'invalid_input',
      issues: [expect.objectContaining({ path: 'line 2' }), expect.objectContaining({ path: 'line 3.op' })],
    });
    await expect(g.load('main', '{"table":"Person","values":{"id":"c"}}')).rejects.toMatchObject({ code: 'constraint_violation' });
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toEqual(['a', 'b']);
  });
});

describe('compaction', () => {
  it('full compaction rewrites a table as one run with the same rows; merges after it still work', async () => {
    const g = await peopleGraph();
    for (let i = 0; i < 5; i++) await mustWrite(g, 'main', [person(`p${i}`)]);
    await mustWrite(g, 'main', [{ op: 'delete', table: 'Person', values: { id: 'p2' } }]);
    await g.createBranch('f', { branch: 'main' });
    const before = await rowsOf(g, 'main', 'Person');
    await g.compact('main', { tables: ['Person'], mode: 'full' });
    expect((await g.branchHead('main')).manifest.tables.Person?.runs).toHaveLength(1);
    expect(await rowsOf(g, 'main', 'Person')).toEqual(before);
    await mustWrite(g, 'f', [{ op: 'update', table: 'Person', values: { id: 'p1', age: 7 } }]);
    await mustWrite(g, 'main', [{ op: 'update', table: 'Person', values: { id: 'p3', age: 9 } }]);
    const r = await mergeOk(g, 'f');
    expect(r.outcome).toBe('merged');
    const people = await rowsOf(g, 'main', 'Person');
    expect([people.p1?.age, people.p3?.age]).toEqual([7, 9]);
  });
});

describe('garbage collection', () => {
  it('removes what only a deleted branch referenced, after the grace period, and never anything reachable', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a')]);
    await g.createBranch('tmp', { branch: 'main' });
    await mustWrite(g, 'tmp', [person('only-tmp')]);
    await g.deleteBranch('tmp');
    const keysBefore = (await listAll(store, '')).map((o) => o.key);
    // Within the grace period nothing goes.
    expect((await g.gc()).keys).toEqual([]);
    const later = Date.now() + 2 * 60 * 60 * 1000;
    const dry = await g.gc({ now: later, dryRun: true });
    expect(dry.deleted.runs).toBe(1);
    expect(dry.deleted.manifests).toBe(1);
    // The deleted branch's head hint goes with it; main's stays.
    expect(dry.keys).toContain(keys.branchHint('tmp'));
    expect(dry.keys).not.toContain(keys.branchHint('main'));
    expect((await listAll(store, '')).map((o) => o.key)).toEqual(keysBefore);
    const done = await g.gc({ now: later });
    expect(done.keys).toEqual(dry.keys);
    const fresh = await Graph.open(store);
    expect(Object.keys(await rowsOf(fresh, 'main', 'Person'))).toEqual(['a']);
    // Every commit of main is still readable.
    for (const key of (await listAll(store, 'commits/')).map((o) => o.key)) {
      const id = key.slice('commits/'.length, -'.json'.length);
      await fresh.commitSnapshot(id);
    }
    expect((await g.gc({ now: later })).keys).toEqual([]);
  });

  it('regression: a GC process whose clock is far ahead (or behind) deletes nothing a published or in-flight change references', async () => {
    let now = Date.UTC(2026, 5, 1);
    const store = new MemoryStore(() => now);
    for (const skew of [20 * 60_000, 60 * 60_000, -60 * 60_000]) {
      const writer = await peopleGraph(store);
      const gcer = await Graph.open(store, { clock: () => now + skew });
      await mustWrite(writer, 'main', [person(`a${skew}`)]);
      await writer.createBranch(`f${skew}`, { branch: 'main' });
      await mustWrite(writer, `f${skew}`, [person(`b${skew}`)]);
      await mustWrite(writer, 'main', [person(`c${skew}`)]);
      const merged = await mergeOk(writer, `f${skew}`, { into: 'main' });
      // GC at its smallest grace, from a host whose clock says everything above is long past it.
      const report = await gcer.gc({ graceMs: 0 });
      expect(report.keys).toEqual([]);
      const fresh = await Graph.open(store);
      expect(Object.keys(await rowsOf(fresh, 'main', 'Person'))).toEqual(expect.arrayContaining([`a${skew}`, `b${skew}`, `c${skew}`]));
      for (const key of (await listAll(store, 'commits/')).map((o) => o.key))
        await fresh.commitSnapshot(key.slice('commits/'.length, -'.json'.length));
      expect((await fresh.branchHead('main')).manifest.commit.id).toBe(merged.commit?.id);
      now += 1000;
    }
    // Once the store's own clock has passed the grace, what is unreferenced goes, whatever the GC host's clock says.
    await (await Graph.open(store)).deleteBranch('f1200000');
    now += MIN_GC_GRACE_MS + 60_000;
    const late = await (await Graph.open(store, { clock: () => now - 3_600_000 })).gc({ graceMs: 0 });
    expect(late.deleted.hints).toBe(1);
  });
});

describe('NDJSON loads under hostile input', () => {
  it('fuzz: arbitrary lines are loaded all-or-nothing or refused with a typed error', async () => {
    const { default: fc } = await import('fast-check');
    const { BranchgraphError } = await import('../model/errors.js');
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a')]);
    const line = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
      fc
        .record({
          op: fc.constantFrom('insert', 'upsert', 'update', 'delete', 'drop'),
          table: fc.constantFrom('Person', 'Knows', 'Nope'),
          values: fc.dictionary(fc.constantFrom('id', 'name', 'age', 'email', 'from', 'to'), fc.jsonValue({ maxDepth: 1 })),
        })
        .map((v) => JSON.stringify(v)),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 8 }), async (lines) => {
        const before = await rowsOf(g, 'main', 'Person');
        const head = (await g.branchHead('main')).manifest.commit.id;
        try {
          await g.load('main', lines.join('\n'));
        } catch (e) {
          expect(e).toBeInstanceOf(BranchgraphError);
          expect(['invalid_input', 'constraint_violation', 'payload_too_large']).toContain(
            (e as InstanceType<typeof BranchgraphError>).code,
          );
          expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
          expect(await rowsOf(g, 'main', 'Person')).toEqual(before);
        }
      }),
      { numRuns: 300 },
    );
  }, 60_000);
});

describe('GC never deletes what a publication references', () => {
  it('regression: GC at grace 0, run over and over while one writer makes 100 writes, leaves every write readable', async () => {
    const store = new MemoryStore();
    // Every reading of the clock moves it on, so a writer's scratch run is older than grace 0 when GC
    // looks. A tenth of a second a reading keeps a write well inside the publication deadline however
    // many readings GC makes meanwhile (a second a reading let a busy machine's interleaving pass it).
    let now = Date.UTC(2026, 0, 1);
    const g = await Graph.open(store, { clock: () => (now += 100) });
    await g.applySchema('main', PEOPLE_SCHEMA);
    let writing = true;
    const writes = (async () => {
      try {
        for (let i = 0; i < 100; i++) await mustWrite(g, 'main', [person(`p${String(i).padStart(3, '0')}`)]);
      } finally {
        // A failed write stops the GC loop too, so the failure is reported instead of the loop spinning on.
        writing = false;
      }
    })();
    const gcs = (async () => {
      let runs = 0;
      while (writing) {
        const r = await g.gc({ graceMs: 0 });
        expect(r.graceMs).toBe(MIN_GC_GRACE_MS);
        runs++;
      }
      return runs;
    })();
    await writes;
    expect(await gcs).toBeGreaterThan(0);
    const fresh = await Graph.open(store);
    expect(Object.keys(await rowsOf(fresh, 'main', 'Person'))).toHaveLength(100);
  });

  it('a publication that outlives the deadline does not publish, so GC may take its scratch; the branch stays readable', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore(() => now);
    const g = await Graph.open(store, { clock: () => now });
    await g.applySchema('main', PEOPLE_SCHEMA);
    await mustWrite(g, 'main', [person('a')]);
    const before = (await g.branchHead('main')).manifest.commit.id;
    // The writer stalls between planning (its run is written) and its manifest PUT; meanwhile the
    // clock passes GC's floor and GC deletes the run, which no manifest references yet.
    const stalled = g.ports.publication.commitChange('main', {}, async (head) => {
      const type = g.ports.tables.table(head, 'Person').type;
      const run = await g.ports.runFiles.write(type, [
        { key: 'b', tomb: false, hash: 'h', props: { id: 'b', name: 'B', email: null, age: null, role: null } },
      ]);
      now += MIN_GC_GRACE_MS + 60_000;
      const swept = await g.gc({ graceMs: 0 });
      expect(swept.keys).toContain(run.key);
      return { kind: 'write', tables: { Person: { runs: [...(head.tables.Person?.runs ?? []), run] } }, scratch: [run], result: null };
    });
    await expect(stalled).rejects.toMatchObject({ code: 'publish_contention', retryable: true });
    const fresh = await Graph.open(store);
    expect((await fresh.branchHead('main')).manifest.commit.id).toBe(before);
    expect(Object.keys(await rowsOf(fresh, 'main', 'Person'))).toEqual(['a']);
  });

  it('GC keeps the runs of a branch deleted while a merge from it is being planned, within the deadline', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore(() => now);
    const g = await Graph.open(store, { clock: () => now });
    await g.applySchema('main', PEOPLE_SCHEMA);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [person('x')]);
    await mustWrite(g, 'main', [person('y')]);
    now += 4 * 60_000;
    await g.deleteBranch('f');
    expect((await g.gc({ graceMs: 0 })).deleted.runs).toBe(0);
  });
});
