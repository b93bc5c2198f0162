import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { knows, merge, mergeOk, mustWrite, peopleGraph, person, rowsOf } from '../../test/support/fixtures.js';
import { Graph } from '../graph/graph.js';
import { CountingStore } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll, STORE_OPS } from '../store/object-store.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';

const upd = (table: string, values: Record<string, unknown>) => ({ op: 'update' as const, table, values });
const del = (table: string, values: Record<string, unknown>) => ({ op: 'delete' as const, table, values });

async function forked(extraOnMain = true) {
  const g = await peopleGraph();
  await mustWrite(g, 'main', [person('a', { age: 1 }), person('b', { age: 2 }), person('c', { age: 3 }), knows('a', 'b')]);
  await g.createBranch('f', { branch: 'main' });
  if (extraOnMain) await mustWrite(g, 'main', [{ op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } }]);
  return g;
}

describe('merge outcomes', () => {
  it('fast-forwards when the target has nothing new, recording both parents; then reports up to date', async () => {
    const g = await forked(false);
    await mustWrite(g, 'f', [person('d')]);
    const r = await mergeOk(g, 'f');
    expect(r.outcome).toBe('fast_forward');
    expect(r.commit?.parents).toHaveLength(2);
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toEqual(['a', 'b', 'c', 'd']);
    const again = await mergeOk(g, 'f');
    expect(again).toMatchObject({ outcome: 'already_up_to_date', commit: null });
  });

  it('merges tables changed on one side by adoption, and the same table changed on both by key', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [person('d'), upd('Person', { id: 'a', age: 10 })]);
    await mustWrite(g, 'main', [person('e'), upd('Person', { id: 'b', age: 20 })]);
    const r = await mergeOk(g, 'f');
    expect(r.outcome).toBe('merged');
    expect(r.commit?.parents).toHaveLength(2);
    expect(r.tables.map((t) => [t.table, t.action])).toEqual([['Person', 'merged']]);
    const people = await rowsOf(g, 'main', 'Person');
    expect(Object.keys(people)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect([people.a?.age, people.b?.age]).toEqual([10, 20]);
    expect(Object.keys(await rowsOf(g, 'main', 'Company'))).toEqual(['acme']);
    expect(Object.keys(await rowsOf(g, 'f', 'Company'))).toEqual([]);
  });

  it('merges different properties of one entity changed on each side', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [upd('Person', { id: 'a', name: 'Alice' })]);
    await mustWrite(g, 'main', [upd('Person', { id: 'a', age: 42 })]);
    await mergeOk(g, 'f');
    expect((await rowsOf(g, 'main', 'Person')).a).toMatchObject({ name: 'Alice', age: 42 });
  });

  it('net-zero changes on the source merge cleanly and do not change data', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [knows('b', 'c')]);
    await mustWrite(g, 'f', [del('Knows', { from: 'b', to: 'c' })]);
    const before = await rowsOf(g, 'main', 'Knows');
    const r = await mergeOk(g, 'f');
    expect(r.outcome).toBe('merged');
    expect(await rowsOf(g, 'main', 'Knows')).toEqual(before);
    expect((await mergeOk(g, 'f')).outcome).toBe('already_up_to_date');
  });

  it('repeated merges in both directions and a branch of a branch', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [person('f1')]);
    await mergeOk(g, 'f');
    await mustWrite(g, 'main', [person('m1')]);
    expect((await mergeOk(g, 'main', { into: 'f' })).outcome).toBe('fast_forward');
    await g.createBranch('f/sub', { branch: 'f' });
    await mustWrite(g, 'f/sub', [person('s1')]);
    await mustWrite(g, 'f', [person('f2')]);
    await mergeOk(g, 'f/sub', { into: 'f' });
    await mustWrite(g, 'main', [person('m2')]);
    const r = await mergeOk(g, 'f');
    expect(r.outcome).toBe('merged');
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toEqual(['a', 'b', 'c', 'f1', 'f2', 'm1', 'm2', 's1']);
    // The base of the last merge was main's state when f last took it, not the fork point.
    expect(r.tables.find((t) => t.table === 'Person')?.sourceChanges).toBe(2);
  });

  it('a third branch merged into both sides is not a conflict', async () => {
    const g = await forked();
    await g.createBranch('third', { branch: 'main' });
    await mustWrite(g, 'third', [upd('Person', { id: 'c', age: 99 })]);
    await mergeOk(g, 'third', { into: 'f' });
    await mergeOk(g, 'third', { into: 'main' });
    await mustWrite(g, 'f', [person('x')]);
    const r = await mergeOk(g, 'f');
    expect(r.outcome).toBe('merged');
    expect((await rowsOf(g, 'main', 'Person')).c?.age).toBe(99);
  });
});

describe('merge conflicts', () => {
  async function expectConflicts(g: Graph, kinds: [string, string, string, string | null][]) {
    const mainBefore = (await g.branchHead('main')).manifest.commit.id;
    const fBefore = (await g.branchHead('f')).manifest.commit.id;
    const r = await merge(g, 'f');
    expect(r.status).toBe('conflicts');
    if (r.status !== 'conflicts') return r;
    expect(r.report.items.map((c) => [c.kind, c.table, c.key, c.property])).toEqual(kinds);
    expect(r.report.total).toBe(kinds.length);
    expect((await g.branchHead('main')).manifest.commit.id).toBe(mainBefore);
    expect((await g.branchHead('f')).manifest.commit.id).toBe(fBefore);
    return r;
  }

  it('DivergentInsert, DivergentUpdate and DeleteVsUpdate, with base/source/target values', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [person('n', { age: 5 }), upd('Person', { id: 'a', age: 11 }), del('Person', { id: 'b' })]);
    await mustWrite(g, 'main', [person('n', { age: 6 }), upd('Person', { id: 'a', age: 12 }), upd('Person', { id: 'b', name: 'Bee' })]);
    const r = await expectConflicts(g, [
      ['DivergentUpdate', 'Person', 'a', 'age'],
      ['DeleteVsUpdate', 'Person', 'b', null],
      ['DivergentInsert', 'Person', 'n', null],
    ]);
    expect(r.status === 'conflicts' && r.report.items[0]).toMatchObject({ base: 1, source: 11, target: 12 });
    expect(r.status === 'conflicts' && r.report.counts).toMatchObject({
      DivergentUpdate: 1,
      DeleteVsUpdate: 1,
      DivergentInsert: 1,
      OrphanEdge: 0,
    });
  });

  it('OrphanEdge: an edge added to a node the other side deleted, either way round', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [knows('c', 'b')]);
    await mustWrite(g, 'main', [del('Person', { id: 'b' })]);
    await expectConflicts(g, [['OrphanEdge', 'Knows', '["c","b"]', 'to']]);
    const g2 = await forked();
    await mustWrite(g2, 'f', [del('Person', { id: 'c' })]);
    await mustWrite(g2, 'main', [knows('a', 'c')]);
    await expectConflicts(g2, [['OrphanEdge', 'Knows', '["a","c"]', 'to']]);
  });

  it('UniqueViolation and CardinalityViolation that appear only after combining both sides', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [upd('Person', { id: 'a', email: 'same@x' }), knows('a', 'c')]);
    await mustWrite(g, 'main', [upd('Person', { id: 'b', email: 'same@x' }), person('d'), knows('a', 'd')]);
    await mustWrite(g, 'main', [person('e'), knows('a', 'e')]);
    await expectConflicts(g, [
      ['CardinalityViolation', 'Knows', 'a', null],
      // Both rows of the clash, whichever side changed which.
      ['UniqueViolation', 'Person', 'a', 'email'],
      ['UniqueViolation', 'Person', 'b', 'email'],
    ]);
  });

  it('ValueConstraintViolation: source rows that break a constraint the target tightened', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [upd('Person', { id: 'a', age: 140 })]);
    const tightened = (await import('../../test/support/fixtures.js')).PEOPLE_SCHEMA.replace('@range(0, 150)', '@range(0, 100)');
    await g.applySchema('main', tightened);
    await expectConflicts(g, [['ValueConstraintViolation', 'Person', 'a', 'age']]);
  });

  it('paginates conflict reports with counts over all pages', async () => {
    const g = await forked();
    await mustWrite(
      g,
      'f',
      Array.from({ length: 7 }, (_, i) => person(`n${i}`, { age: 1 })),
    );
    await mustWrite(
      g,
      'main',
      Array.from({ length: 7 }, (_, i) => person(`n${i}`, { age: 2 })),
    );
    const keys: string[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 10; pages++) {
      const r = await merge(g, 'f', { conflictLimit: 3, ...(cursor ? { conflictCursor: cursor } : {}) });
      if (r.status !== 'conflicts') throw new Error('expected conflicts');
      expect(r.report.total).toBe(7);
      expect(r.report.counts.DivergentInsert).toBe(7);
      keys.push(...r.report.items.map((c) => c.key));
      if (r.report.nextCursor === null) break;
      cursor = r.report.nextCursor;
    }
    expect(keys).toEqual(['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6']);
  });
});

describe('merge options', () => {
  it('dry run reports the outcome and publishes nothing', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a')]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [upd('Person', { id: 'a', age: 3 })]);
    await mustWrite(g, 'main', [upd('Person', { id: 'a', name: 'Z' })]);
    const objects = (await listAll(store, '')).length;
    const head = (await g.branchHead('main')).manifest.commit.id;
    const r = await mergeOk(g, 'f', { dryRun: true });
    expect(r).toMatchObject({ outcome: 'merged', dryRun: true, commit: null });
    expect((await listAll(store, '')).length).toBe(objects);
    expect((await g.branchHead('main')).manifest.commit.id).toBe(head);
  });

  it('expected heads refuse a merge of anything but what the client saw', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [person('d')]);
    await expect(merge(g, 'f', { expectedSourceHead: '01ARZ3NDEKTSV4RRFFQ69G5FAV' })).rejects.toMatchObject({ code: 'head_moved' });
    await expect(merge(g, 'f', { expectedTargetHead: '01ARZ3NDEKTSV4RRFFQ69G5FAV' })).rejects.toMatchObject({ code: 'head_moved' });
    const s = (await g.branchHead('f')).manifest.commit.id;
    const t = (await g.branchHead('main')).manifest.commit.id;
    expect((await mergeOk(g, 'f', { expectedSourceHead: s, expectedTargetHead: t })).outcome).toBe('merged');
  });

  it('deleteBranch deletes the source after success, even when already up to date; refusals never fail the merge', async () => {
    const g = await forked();
    await mustWrite(g, 'f', [person('d')]);
    const r = await mergeOk(g, 'f', { deleteBranch: true });
    expect(r.branchDeleted).toBe(true);
    await expect(g.branchHead('f')).rejects.toMatchObject({ code: 'not_found' });
    await g.createBranch('g', { branch: 'main' });
    expect(await mergeOk(g, 'g', { deleteBranch: true })).toMatchObject({ outcome: 'already_up_to_date', branchDeleted: true });
    const refused = await mergeOk(g, 'main', { into: 'h', deleteBranch: true }).catch(async () => {
      await g.createBranch('h', { branch: 'main' });
      return mergeOk(g, 'main', { into: 'h', deleteBranch: true });
    });
    expect(refused.branchDeleted).toBe(false);
    expect(refused.branchDeleteError).toContain('branch_protected');
  });

  it('re-plans when the target moves during the merge', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a')]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [upd('Person', { id: 'a', age: 1 })]);
    await mustWrite(g, 'main', [person('b')]);
    // main's hint is settled, so the merging process plans on main's head, not on a hint one write behind.
    await g.idle();
    const other = await Graph.open(store);
    let fired = false;
    class RaceStore extends StoreWrapper {
      protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
        if (!fired && ctx.op === 'putIfAbsent' && ctx.key.startsWith('manifests/')) {
          fired = true;
          await mustWrite(other, 'main', [person('racer')]);
        }
        return call();
      }
    }
    const racing = await Graph.open(new RaceStore(store));
    const r = await mergeOk(racing, 'f');
    expect(r.metrics.attempts).toBe(2);
    const people = await rowsOf(g, 'main', 'Person');
    expect(Object.keys(people)).toEqual(['a', 'b', 'racer']);
    expect(people.a?.age).toBe(1);
  });
});

describe('merge cost', () => {
  async function mergeCalls(extraHistory: number, untouchedTables: number): Promise<number> {
    const store = new CountingStore(new MemoryStore());
    const g = await Graph.open(store);
    const names = Array.from({ length: untouchedTables + 2 }, (_, i) => `T${String(i).padStart(3, '0')}`);
    await g.applySchema('main', names.map((n) => `node ${n} { id: string @key\n v: int }`).join('\n'));
    for (const n of names)
      await mustWrite(
        g,
        'main',
        [1, 2, 3, 4].map((i) => ({ op: 'insert' as const, table: n, values: { id: `r${i}`, v: 0 } })),
      );
    for (let i = 0; i < extraHistory; i++) {
      // History includes merges of short-lived branches: their lineages enter main's ancestry.
      if (i % 8 === 7) {
        await g.createBranch(`old${i}`, { branch: 'main' });
        await mustWrite(g, `old${i}`, [{ op: 'update', table: 'T001', values: { id: 'r2', v: i } }]);
        await mustWrite(g, 'main', [{ op: 'update', table: 'T000', values: { id: 'r2', v: i } }]);
        await mergeOk(g, `old${i}`, { deleteBranch: true });
      } else await mustWrite(g, 'main', [{ op: 'update', table: 'T000', values: { id: 'r1', v: i + 1 } }]);
    }
    await g.createBranch('f', { branch: 'main' });
    for (const n of names.slice(0, 2)) {
      await mustWrite(g, 'f', [{ op: 'update', table: n, values: { id: 'r3', v: 7 } }]);
      await mustWrite(g, 'main', [{ op: 'update', table: n, values: { id: 'r4', v: 8 } }]);
    }
    await g.idle();
    const fresh = await Graph.open(store);
    const r = await mergeOk(fresh, 'f');
    return r.metrics.storeCalls.total.calls;
  }

  it('store calls do not grow with history depth or with untouched tables', async () => {
    const base = await mergeCalls(0, 2);
    // Deep history gives the two touched tables long run lists, whose older runs are kept in run-list
    // parts (graph/run-list-parts.ts), or which the target's writes folded since the fork (the merge
    // then reads what the folded run replaced): a read per table and manifest, in parallel with the
    // others, however deep the history.
    for (const depth of [64, 160]) expect(await mergeCalls(depth, 2)).toBeLessThanOrEqual(base + 3 * 2);
    // A schema of 42 tables is too large to ride in every manifest; it rides in the branches' head
    // hints instead, so a cold merge reads it neither by hash nor once per table.
    expect(await mergeCalls(0, 40)).toBe(base);
    // Two touched tables: within the budget of 4 calls per touched table + 10, plus the commit's event
    // (appended beside the commit index, so it adds no round trip) and its confirmation (graph/event-log.ts).
    expect(base).toBeLessThanOrEqual(4 * 2 + 10 + 2);
  }, 60_000);

  it('a large table with 1,000 changes per side reads far less than the table', async () => {
    const store = new CountingStore(new MemoryStore());
    const g = await Graph.open(store);
    await g.applySchema('main', 'node Item { id: string @key\n v: int\n w: int }');
    const n = 100_000;
    await mustWrite(
      g,
      'main',
      Array.from({ length: n }, (_, i) => ({
        op: 'insert' as const,
        table: 'Item',
        values: { id: `i${String(i).padStart(6, '0')}`, v: 0, w: 0 },
      })),
    );
    const tableBytes = (await g.branchHead('main')).manifest.tables.Item?.runs.reduce((s, r) => s + r.bytes, 0) ?? 0;
    await g.createBranch('f', { branch: 'main' });
    const pick = (k: number) => `i${String(k).padStart(6, '0')}`;
    await mustWrite(
      g,
      'f',
      Array.from({ length: 1000 }, (_, i) => ({ op: 'update' as const, table: 'Item', values: { id: pick(i * 97), v: 1 } })),
    );
    await mustWrite(
      g,
      'main',
      Array.from({ length: 1000 }, (_, i) => ({ op: 'update' as const, table: 'Item', values: { id: pick(i * 89 + 1), w: 2 } })),
    );
    const fresh = await Graph.open(store);
    const r = await mergeOk(fresh, 'f');
    expect(r.outcome).toBe('merged');
    const read = r.metrics.storeCalls.get.bytesRead;
    // Only the handful of keys both sides changed need their base rows: a few segments, not the table.
    expect(read).toBeLessThan(tableBytes / 5);
    const items = await rowsOf(fresh, 'main', 'Item');
    expect(items[pick(97)]).toMatchObject({ v: 1, w: 0 });
    expect(items[pick(90)]).toMatchObject({ v: 0, w: 2 });
  }, 120_000);
});

describe('merge properties', () => {
  const keyArb = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f');
  const opArb = fc.oneof(
    fc.record({ op: fc.constant('upsert' as const), id: keyArb, age: fc.integer({ min: 0, max: 3 }) }),
    fc.record({ op: fc.constant('delete' as const), id: keyArb, age: fc.constant(0) }),
  );
  const toOps = (ops: { op: 'upsert' | 'delete'; id: string; age: number }[]) =>
    ops.map((o) =>
      o.op === 'upsert'
        ? { op: 'upsert' as const, table: 'Person', values: { id: o.id, name: o.id, age: o.age } }
        : del('Person', { id: o.id }),
    );

  it('disjoint changes: the same result in either direction, equal to applying both diffs to the base', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 6 }), fc.array(opArb, { maxLength: 6 }), async (left, right) => {
        // Make the two sides disjoint by key.
        const rightKeys = new Set(right.map((o) => o.id));
        const l = left.filter((o) => !rightKeys.has(o.id));
        const g = await peopleGraph();
        await mustWrite(g, 'main', [person('a', { age: 1 }), person('c', { age: 1 }), person('e', { age: 1 })]);
        await g.createBranch('x', { branch: 'main' });
        await g.createBranch('y', { branch: 'main' });
        await g.createBranch('x2', { branch: 'main' });
        await g.createBranch('y2', { branch: 'main' });
        for (const [b, ops] of [
          ['x', l],
          ['y', right],
          ['x2', l],
          ['y2', right],
        ] as const)
          if (ops.length > 0) await g.write(b, toOps([...ops]));
        await mergeOk(g, 'x', { into: 'y' });
        await mergeOk(g, 'y2', { into: 'x2' });
        const xy = await rowsOf(g, 'y', 'Person');
        expect(await rowsOf(g, 'x2', 'Person')).toEqual(xy);
        // Reference: apply both sides' operations to the base.
        const model: Record<string, number | null> = { a: 1, c: 1, e: 1 };
        for (const o of [...l, ...right]) model[o.id] = o.op === 'upsert' ? o.age : null;
        const expected = Object.fromEntries(
          Object.entries(model)
            .filter(([, v]) => v !== null)
            .sort(([p], [q]) => (p < q ? -1 : 1))
            .map(([k, age]) => [k, age]),
        );
        expect(Object.fromEntries(Object.entries(xy).map(([k, r]) => [k, r.age]))).toEqual(expected);
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('merging a branch with no changes, or a branch into itself, changes nothing', async () => {
    const g = await forked();
    await g.createBranch('idle', { branch: 'main' });
    expect((await mergeOk(g, 'idle')).outcome).toBe('already_up_to_date');
    await expect(merge(g, 'main', { into: 'main' })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('criss-cross histories', () => {
  it('pick the best base with the highest generation, then the newest commit, and merge cleanly', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('p'), person('q'), person('r')]);
    await g.createBranch('A', { branch: 'main' });
    await g.createBranch('B', { branch: 'main' });
    const a1 = await mustWrite(g, 'A', [upd('Person', { id: 'p', age: 1 })]);
    // Commit times have millisecond resolution; keep B1 strictly newer so the time rule, not the id tie-break, decides.
    await new Promise((r) => setTimeout(r, 5));
    const b1 = await mustWrite(g, 'B', [upd('Person', { id: 'q', age: 2 })]);
    await g.createBranch('b1', { branch: 'B' });
    await mergeOk(g, 'A', { into: 'B' });
    await mergeOk(g, 'b1', { into: 'A' });
    // A and B now each contain A1 and B1, and neither contains the other's merge.
    await mustWrite(g, 'A', [upd('Person', { id: 'r', name: 'Arr' })]);
    await mustWrite(g, 'B', [upd('Person', { id: 'r', age: 3 })]);
    const r = await mergeOk(g, 'A', { into: 'B' });
    expect(r.outcome).toBe('merged');
    expect([a1, b1]).toContain(r.base);
    expect(r.base).toBe(b1);
    const people = await rowsOf(g, 'B', 'Person');
    expect([people.p?.age, people.q?.age, people.r?.name, people.r?.age]).toEqual([1, 2, 'Arr', 3]);
  });
});

describe('datetimes in merges', () => {
  it('regression: two values a microsecond apart are different values, so a merge sees both changes; finer precision is invalid_input', async () => {
    const g = await Graph.open(new MemoryStore());
    await g.applySchema('main', 'node E { id: string @key\n at: datetime? }');
    await mustWrite(g, 'main', [{ op: 'insert', table: 'E', values: { id: 'e', at: '2026-01-01T00:00:00Z' } }]);
    await g.createBranch('f', { branch: 'main' });
    await mustWrite(g, 'f', [{ op: 'update', table: 'E', values: { id: 'e', at: '2026-01-01T00:00:00.000001Z' } }]);
    await mustWrite(g, 'main', [{ op: 'update', table: 'E', values: { id: 'e', at: '2026-01-01T00:00:00.000002Z' } }]);
    const r = await merge(g, 'f');
    expect(r.status === 'conflicts' && r.report.items.map((c) => [c.kind, c.property, c.source, c.target])).toEqual([
      ['DivergentUpdate', 'at', '2026-01-01T00:00:00.000001Z', '2026-01-01T00:00:00.000002Z'],
    ]);
    await expect(
      g.write('main', [{ op: 'update', table: 'E', values: { id: 'e', at: '2026-01-01T00:00:00.0000001Z' } }]),
    ).rejects.toMatchObject({ code: 'invalid_input' });
  });
});

describe('@unique checks read only what a change could clash over', () => {
  /** A graph of 3,000 people (several index segments), a branch, and the keys read by what `run` does next. */
  async function traced() {
    const { StoreWrapper } = await import('../store/store-wrapper.js');
    const read: string[] = [];
    class Reads extends StoreWrapper {
      protected around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
        if (ctx.op === 'get') read.push(ctx.key);
        return call();
      }
    }
    const inner = new MemoryStore();
    const g = await peopleGraph(inner);
    await mustWrite(
      g,
      'main',
      Array.from({ length: 3000 }, (_, i) => person(`p${String(i).padStart(5, '0')}`, { email: `p${i}@x.org`, age: 1 })),
    );
    await g.createBranch('f', { branch: 'main' });
    const cold = async () => Graph.open(new Reads(inner));
    const indexReads = () => read.filter((k) => k.includes('.index-unique-')).length;
    return { g, cold, read, indexReads };
  }

  it('a write that leaves @unique values as they were reads no index, and its run says so', async () => {
    const { cold, read, indexReads } = await traced();
    const g = await cold();
    read.length = 0;
    await mustWrite(g, 'f', [upd('Person', { id: 'p00007', age: 30 }), upd('Person', { id: 'p02900', email: 'p2900@x.org', age: 31 })]);
    expect(indexReads()).toBe(0);
    expect((await g.branchHead('f')).manifest.tables.Person?.runs.at(-1)?.keptUnique).toEqual(['email']);
    // A new value is looked up, and the run does not claim to keep it.
    await mustWrite(g, 'f', [upd('Person', { id: 'p00008', email: 'p15@x.orgz' })]);
    expect(indexReads()).toBeGreaterThan(0);
    expect((await g.branchHead('f')).manifest.tables.Person?.runs.at(-1)?.keptUnique).toBeUndefined();
  });

  it('a merge whose sides kept every @unique value reads no index; one that changed a value is checked', async () => {
    const { g, cold, read, indexReads } = await traced();
    await mustWrite(g, 'f', [upd('Person', { id: 'p00010', age: 40 })]);
    await mustWrite(g, 'main', [upd('Person', { id: 'p00020', age: 50 })]);
    const c = await cold();
    read.length = 0;
    expect(await mergeOk(c, 'f')).toMatchObject({ outcome: 'merged' });
    expect(indexReads()).toBe(0);
    // Now each side gives a different row the same new value: the clash is found through the index.
    await c.createBranch('h', { branch: 'main' });
    await mustWrite(c, 'h', [upd('Person', { id: 'p00030', email: 'shared@x.org' })]);
    await mustWrite(c, 'main', [upd('Person', { id: 'p00040', email: 'shared@x.org' })]);
    const r = await merge(await cold(), 'h');
    expect(r.status).toBe('conflicts');
    if (r.status === 'conflicts')
      expect(r.report.items.map((x) => [x.kind, x.key])).toEqual([
        ['UniqueViolation', 'p00030'],
        ['UniqueViolation', 'p00040'],
      ]);
  });

  it('counts the run bytes a warm cache answered apart from the bytes read from the store', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(
      g,
      'main',
      Array.from({ length: 100 }, (_, i) => person(`p${i}`)),
    );
    await g.createBranch('f', { branch: 'main' });
    await g.createBranch('h', { branch: 'main' });
    await mustWrite(g, 'f', [{ op: 'update', table: 'Person', values: { id: 'p1', name: 'F' } }]);
    await mustWrite(g, 'h', [{ op: 'update', table: 'Person', values: { id: 'p3', name: 'H' } }]);
    await mustWrite(g, 'main', [{ op: 'update', table: 'Person', values: { id: 'p2', name: 'M' } }]);
    // Warm: every run was written or read by this graph, so the store gives no run bytes; the cache does.
    const warm = (await mergeOk(g, 'f')).metrics.storeCalls;
    expect(warm.cached.calls).toBeGreaterThan(0);
    expect(warm.cached.bytesRead).toBeGreaterThan(0);
    expect(warm.total.calls, 'cache hits are not store calls').toBe(STORE_OPS.reduce((n, op) => n + warm[op].calls, 0));
    // Cold: a new process reads the runs from the store.
    const cold = (await mergeOk(await Graph.open(store), 'h')).metrics.storeCalls;
    expect(cold.get.bytesRead).toBeGreaterThan(0);
    expect(cold.total.bytesRead).toBe(cold.get.bytesRead);
  });
});
