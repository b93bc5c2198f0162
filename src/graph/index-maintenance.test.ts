/**
 * Secondary indexes through the engine: built on schema apply, kept by
 * writes, WAL rows, merges and compaction, exact after each (checked by
 * rebuilding them from the tables), and used so that a @unique check or a
 * cascade reads what the change touches rather than the table.
 */
import { RunStore } from './run-store.js';
import { describe, expect, it } from 'vitest';
import { knows, mergeOk, mustWrite, person, PEOPLE_SCHEMA } from '../../test/support/fixtures.js';
import type { RunRef } from '../table/run.js';
import { MemoryStore } from '../store/memory-store.js';
import { WalWriter } from '../wal/wal-writer.js';
import { mergeBranches, mergeSpec } from '../merge/merge.js';
import { Graph, type GraphOptions } from './graph.js';
import { INDEX_TAIL_RUNS, indexProblems } from './index-maintenance.js';
import { edgesOf } from './reads.js';

async function people(opts: GraphOptions = {}): Promise<{ g: Graph; store: MemoryStore }> {
  const store = new MemoryStore();
  const g = await Graph.open(store, { actor: 'test', ...opts });
  await g.applySchema('main', PEOPLE_SCHEMA);
  return { g, store };
}

async function expectExact(g: Graph, branch = 'main'): Promise<void> {
  expect(await indexProblems(g.ports.runFiles, await g.branchHead(branch))).toEqual([]);
}

const indexNames = async (g: Graph, table: string): Promise<string[]> =>
  Object.keys((await g.branchHead('main')).manifest.tables[table]?.indexes?.sets ?? {}).sort();

describe('secondary indexes in the engine', () => {
  it('are built when a schema makes a property @unique over existing rows, and refuse a clash from then on', async () => {
    const g = await Graph.open(new MemoryStore());
    await g.applySchema('main', 'node U { id: string @key\n email: string? }');
    await mustWrite(g, 'main', [
      { op: 'insert', table: 'U', values: { id: 'a', email: 'a@x' } },
      { op: 'insert', table: 'U', values: { id: 'b', email: 'b@x' } },
    ]);
    expect(await indexNames(g, 'U')).toEqual([]);
    await g.applySchema('main', 'node U { id: string @key\n email: string? @unique }');
    expect(await indexNames(g, 'U')).toEqual(['unique:email']);
    await expectExact(g);
    await expect(g.write('main', [{ op: 'insert', table: 'U', values: { id: 'c', email: 'a@x' } }])).rejects.toMatchObject({
      code: 'constraint_violation',
    });
    // Moving a value frees it: the index forgets the old entry.
    await mustWrite(g, 'main', [{ op: 'update', table: 'U', values: { id: 'a', email: 'z@x' } }]);
    await mustWrite(g, 'main', [{ op: 'insert', table: 'U', values: { id: 'c', email: 'a@x' } }]);
    await expectExact(g);
    await g.applySchema('main', 'node U { id: string @key\n email: string? }');
    expect(await indexNames(g, 'U')).toEqual([]);
  });

  it('a cascade and a @unique check read the index, not the table', async () => {
    const { g, store } = await people();
    // Enough edges for many segments; every one points at a different node.
    const n = 6000;
    const ids = Array.from({ length: n + 1 }, (_, i) => `p${String(i).padStart(5, '0')}`);
    await mustWrite(
      g,
      'main',
      ids.map((id) => person(id, { email: `${id}@x` })),
    );
    await mustWrite(
      g,
      'main',
      ids.slice(1).map((id, i) => knows(ids[i] as string, id)),
    );
    const cold = await Graph.open(store, { actor: 'test' });
    await cold.branchHead('main');
    const segments = (await new RunStore(store).segments((await cold.branchHead('main')).manifest.tables.Knows?.runs[0] as RunRef)).length;
    expect(segments).toBeGreaterThanOrEqual(6);
    // Which objects each change reads, from a cold cache.
    const read: string[] = [];
    const get = store.get.bind(store);
    store.get = (key, opts) => {
      read.push(key);
      return get(key, opts);
    };
    cold.dropCaches();
    const r = await cold.write('main', [{ op: 'delete', table: 'Person', values: { id: 'p03000' } }]);
    expect(r.status === 'published' && r.result.cascaded).toBe(2);
    // A scan would read every segment of the edge table; the cascade reads the one holding p03000's edges out.
    expect(read.filter((k) => k.startsWith('runs/Knows/') && k.endsWith('.arrow')).length).toBeLessThanOrEqual(2);
    read.length = 0;
    cold.dropCaches();
    await expect(cold.write('main', [person('dup', { email: 'p04000@x' })])).rejects.toMatchObject({ code: 'constraint_violation' });
    expect(read.filter((k) => k.startsWith('runs/Person/') && k.endsWith('.arrow')).length).toBeLessThanOrEqual(1);
    await expectExact(cold);
  });

  it('see WAL rows not yet folded, and agree once they are', async () => {
    const { g } = await people();
    await mustWrite(g, 'main', [person('a', { email: 'a@x' }), person('b'), knows('a', 'b')]);
    const w = new WalWriter(g.ports, { shard: 's1' });
    await w.ingest('main', [person('c', { email: 'c@x' }), knows('c', 'b')]);
    const head = await g.branchHead('main');
    expect(
      (await edgesOf({ tables: g.ports.tables, snap: head, nodeTable: 'Person', key: 'b', direction: 'in' })).map((e) => e.row.from),
    ).toEqual(['a', 'c']);
    await expect(g.write('main', [person('d', { email: 'c@x' })])).rejects.toMatchObject({ code: 'constraint_violation' });
    // A write folds the pending rows into runs; the publication indexes them.
    await mustWrite(g, 'main', [person('d', { email: 'd@x' })]);
    await expectExact(g);
    const r = await g.write('main', [{ op: 'delete', table: 'Person', values: { id: 'b' } }]);
    expect(r.status === 'published' && r.result.cascaded).toBe(2);
    await expectExact(g);
  });

  it('merges publish exact indexes, adopted, merged or fast-forwarded, and find clashes and orphans through them', async () => {
    const { g } = await people();
    await mustWrite(g, 'main', [person('a', { email: 'a@x' }), person('b'), person('c'), knows('a', 'b')]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [person('d', { email: 'd@x' }), knows('d', 'c')]);
    await mergeOk(g, 'f', { into: 'main' });
    await expectExact(g);
    await mustWrite(g, 'f', [knows('c', 'a'), { op: 'update', table: 'Person', values: { id: 'a', email: 'a2@x' } }]);
    await mustWrite(g, 'main', [knows('b', 'c'), person('e', { email: 'e@x' })]);
    await mergeOk(g, 'f', { into: 'main' });
    // The value the source freed is free on the merged head.
    await mustWrite(g, 'main', [{ op: 'update', table: 'Person', values: { id: 'e', email: 'a@x' } }]);
    await expectExact(g);
    await mustWrite(g, 'f', [person('x', { email: 'x@x' })]);
    await mustWrite(g, 'main', [person('y', { email: 'x@x' })]);
    const clash = await g.branchHead('main');
    const refused = await mergeBranches(g.ports, mergeSpec({ source: 'f', into: 'main' }));
    expect(refused.status === 'conflicts' && refused.report.items.map((c) => [c.kind, c.key])).toEqual([
      ['UniqueViolation', 'x'],
      ['UniqueViolation', 'y'],
    ]);
    expect((await g.branchHead('main')).manifest.commit.id).toBe(clash.manifest.commit.id);
    // The source deletes c (its edges cascade) while the target adds an edge into it: an orphan the
    // target's in-index finds, since that edge is no change of the merge.
    await g.createBranch('g2', { branch: 'main' });
    await mustWrite(g, 'g2', [{ op: 'delete', table: 'Person', values: { id: 'c' } }]);
    await mustWrite(g, 'main', [knows('e', 'c')]);
    const orphan = await mergeBranches(g.ports, mergeSpec({ source: 'g2', into: 'main' }));
    expect(orphan.status === 'conflicts' && orphan.report.items.map((c) => [c.kind, c.key, c.property])).toEqual([
      ['OrphanEdge', JSON.stringify(['e', 'c']), 'to'],
    ]);
    await g.createBranch('ff', { branch: 'main' });
    await mustWrite(g, 'ff', [person('z', { email: 'z@x' })]);
    await mergeOk(g, 'ff', { into: 'main' });
    await expectExact(g);
  });

  it('leave small writes as a tail lookups read, fold it in once it grows, and are compacted beside their table', async () => {
    // The table's runs are left to explicit compactions, so the tail above the index is what the writes made.
    const { g } = await people({ inlineCompaction: false });
    const entry = async () => (await g.branchHead('main')).manifest.tables.Person;
    for (let i = 0; i < 6; i++) await mustWrite(g, 'main', [person(`p${i}`, { email: `${i}@x` })]);
    // The first write built the index; the next five are a tail above it, with no index runs of their own.
    expect((await entry())?.indexes?.covers).toBe(1);
    expect((await entry())?.indexes?.sets['unique:email']?.runs).toHaveLength(1);
    await expect(g.write('main', [person('q', { email: '4@x' })])).rejects.toMatchObject({ code: 'constraint_violation' });
    await expectExact(g);
    // A compaction folds the tail into the index first, and the next one compacts the index runs.
    await g.compact('main', { mode: 'full' });
    expect((await entry())?.indexes?.covers).toBe(1);
    expect((await entry())?.indexes?.sets['unique:email']?.runs).toHaveLength(2);
    await expectExact(g);
    const again = await g.compact('main', { mode: 'full' });
    expect(again.status === 'published' && again.result.tables.find((t) => t.table === 'Person')?.indexRunsMerged).toBe(2);
    expect((await entry())?.indexes?.sets['unique:email']?.runs).toHaveLength(1);
    await expectExact(g);
    // A tail past INDEX_TAIL_RUNS is folded in by the write that makes it.
    for (let i = 0; i <= INDEX_TAIL_RUNS; i++) await mustWrite(g, 'main', [person(`t${i}`, { email: `t${i}@x` })]);
    expect(((await entry())?.runs.length ?? 0) - ((await entry())?.indexes?.covers ?? 0)).toBeLessThanOrEqual(INDEX_TAIL_RUNS);
    await expect(g.write('main', [person('q', { email: 't0@x' })])).rejects.toMatchObject({ code: 'constraint_violation' });
    await expectExact(g);
  });
});
