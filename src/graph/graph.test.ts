import { describe, expect, it } from 'vitest';
import { mustWrite, peopleGraph, person, knows, PEOPLE_SCHEMA } from '../../test/support/fixtures.js';
import { CountingStore, diffCounts } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll } from '../store/object-store.js';
import { Graph, type GraphOptions } from './graph.js';
import { allRows, diffSnapshots, edgesOf, getRow, scanRows } from './reads.js';
import { commitLog } from './commit-log.js';

describe('Graph: writes and reads', () => {
  it('inserts, updates partially, upserts and deletes by key', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('alice', { age: 30 }), person('bob')]);
    await mustWrite(g, 'main', [{ op: 'update', table: 'Person', values: { id: 'alice', email: 'a@x.io' } }]);
    const head = await g.branchHead('main');
    expect(await getRow({ tables: g.ports.tables, snap: head, table: 'Person', key: 'alice' })).toEqual({
      id: 'alice',
      name: 'ALICE',
      email: 'a@x.io',
      age: 30,
      role: null,
    });
    await mustWrite(g, 'main', [
      { op: 'upsert', table: 'Person', values: { id: 'alice', name: 'Al' } },
      { op: 'delete', table: 'Person', values: { id: 'bob' } },
    ]);
    const h2 = await g.branchHead('main');
    expect(await allRows({ tables: g.ports.tables, snap: h2, table: 'Person' })).toEqual([
      { key: 'alice', row: { id: 'alice', name: 'Al', email: null, age: null, role: null } },
    ]);
  });

  it('a failing batch changes nothing and lists every failing operation', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('alice', { email: 'a@x.io' })]);
    const before = (await g.branchHead('main')).manifest.commit.id;
    const err = await g
      .write('main', [
        person('alice'),
        person('carol', { age: 200 }),
        person('dave', { email: 'a@x.io' }),
        { op: 'update', table: 'Person', values: { id: 'zed', name: 'Z' } },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'constraint_violation' });
    const paths = (err as { issues: { path: string }[] }).issues.map((i) => i.path);
    expect(paths).toEqual(['ops[1].values.age', 'ops[0]', 'ops[3]', 'ops[2]']);
    expect((err as { issues: { message: string }[] }).issues[3]?.message).toContain('email');
    expect((await g.branchHead('main')).manifest.commit.id).toBe(before);
  });

  it('enforces unique, edge endpoints and cardinality at write time', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a', { email: 'x@y' }), person('b'), person('c'), person('d'), person('e')]);
    await expect(g.write('main', [person('f', { email: 'x@y' })])).rejects.toMatchObject({ code: 'constraint_violation' });
    await expect(g.write('main', [knows('a', 'nobody')])).rejects.toMatchObject({ code: 'constraint_violation' });
    await mustWrite(g, 'main', [knows('a', 'b'), knows('a', 'c'), knows('a', 'd')]);
    const err = await g.write('main', [knows('a', 'e')]).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'constraint_violation' });
    expect(String((err as Error).message)).toContain('4 outgoing edges');
  });

  it('deleting a node deletes its incoming and outgoing edges', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a'), person('b'), person('c'), knows('a', 'b'), knows('b', 'c'), knows('c', 'a')]);
    const r = await g.write('main', [{ op: 'delete', table: 'Person', values: { id: 'b' } }]);
    expect(r.status === 'published' && r.result).toMatchObject({ deleted: 1, cascaded: 2 });
    const head = await g.branchHead('main');
    expect((await allRows({ tables: g.ports.tables, snap: head, table: 'Knows' })).map((e) => e.key)).toEqual(['["c","a"]']);
  });

  it('scans with filters and stable cursors, and lists edges of a node', async () => {
    const g = await peopleGraph();
    await mustWrite(
      g,
      'main',
      Array.from({ length: 25 }, (_, i) => person(`p${String(i).padStart(2, '0')}`, { age: i })),
    );
    await mustWrite(g, 'main', [knows('p01', 'p02'), knows('p03', 'p01')]);
    const head = await g.branchHead('main');
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await scanRows({
        tables: g.ports.tables,
        snap: head,
        table: 'Person',
        where: { age: { op: 'gte', value: 10 } },
        limit: 4,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...page.items.map((i) => i.key));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).toEqual(Array.from({ length: 15 }, (_, i) => `p${i + 10}`));
    expect((await edgesOf({ tables: g.ports.tables, snap: head, nodeTable: 'Person', key: 'p01' })).map((e) => e.key).sort()).toEqual([
      '["p01","p02"]',
      '["p03","p01"]',
    ]);
    expect(
      (await edgesOf({ tables: g.ports.tables, snap: head, nodeTable: 'Person', key: 'p01', direction: 'out' })).map((e) => e.key),
    ).toEqual(['["p01","p02"]']);
    await expect(scanRows({ tables: g.ports.tables, snap: head, table: 'Person', where: { nope: 1 } })).rejects.toMatchObject({
      code: 'invalid_input',
    });
  });

  it('reads at any commit, shows the log newest first and diffs two refs', async () => {
    const g = await peopleGraph();
    const c1 = await mustWrite(g, 'main', [person('a'), person('b')]);
    const c2 = await mustWrite(g, 'main', [
      { op: 'update', table: 'Person', values: { id: 'a', age: 5 } },
      { op: 'delete', table: 'Person', values: { id: 'b' } },
      person('c'),
    ]);
    const at1 = await g.commitSnapshot(c1);
    expect((await allRows({ tables: g.ports.tables, snap: at1, table: 'Person' })).map((r) => r.key)).toEqual(['a', 'b']);
    const log = await commitLog(g.ports.manifests, await g.branchHead('main'));
    expect(log.map((c) => c.id).slice(0, 2)).toEqual([c2, c1]);
    expect(log.map((c) => c.kind)).toEqual(['write', 'write', 'schema', 'init']);
    const d = await diffSnapshots({ runs: g.ports.runFiles, from: at1, to: await g.commitSnapshot(c2) });
    expect(d).toEqual([
      {
        table: 'Person',
        inserted: [{ key: 'c', row: { id: 'c', name: 'C', email: null, age: null, role: null } }],
        updated: [
          { key: 'a', before: expect.objectContaining({ age: null }), after: expect.objectContaining({ age: 5 }), changed: ['age'] },
        ],
        deleted: [{ key: 'b', row: expect.objectContaining({ id: 'b' }) }],
      },
    ]);
    await expect(g.commitSnapshot('01ARZ3NDEKTSV4RRFFQ69G5FAV')).rejects.toMatchObject({ code: 'not_found' });
    await expect(g.commitSnapshot('nope')).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('a write that changes nothing publishes nothing', async () => {
    const g = await peopleGraph();
    await mustWrite(g, 'main', [person('a')]);
    const r = await g.write('main', [
      { op: 'upsert', table: 'Person', values: { id: 'a', name: 'A' } },
      { op: 'delete', table: 'Person', values: { id: 'zz' } },
    ]);
    expect(r.status).toBe('unchanged');
  });
});

describe('Graph: branches', () => {
  it('creates from a branch or a commit, shares runs, and keeps branches isolated', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    const c1 = await mustWrite(g, 'main', [person('a')]);
    await mustWrite(g, 'main', [person('b')]);
    const runsBefore = (await listAll(store, 'runs/')).length;
    await g.createBranch('review', { branch: 'main' });
    await g.createBranch('review/2026-07', { commit: c1 });
    expect((await listAll(store, 'runs/')).length).toBe(runsBefore);
    await mustWrite(g, 'review/2026-07', [person('x')]);
    const keysOf = async (b: string) =>
      (await allRows({ tables: g.ports.tables, snap: await g.branchHead(b), table: 'Person' })).map((r) => r.key);
    expect(await keysOf('review/2026-07')).toEqual(['a', 'x']);
    expect(await keysOf('review')).toEqual(['a', 'b']);
    expect(await keysOf('main')).toEqual(['a', 'b']);
    expect((await g.listBranches()).branches.map((b) => b.record.name)).toEqual(['main', 'review', 'review/2026-07']);
  });

  it('refuses to delete main, duplicate names and bad names; a re-created branch starts fresh', async () => {
    const g = await peopleGraph();
    await expect(g.deleteBranch('main')).rejects.toMatchObject({ code: 'branch_protected' });
    await g.createBranch('f', { branch: 'main' });
    await expect(g.createBranch('f', { branch: 'main' })).rejects.toMatchObject({ code: 'branch_exists' });
    for (const bad of ['', '/x', 'a//b', 'a/../b', 'x y', '.hidden', 'a/']) {
      await expect(g.createBranch(bad, { branch: 'main' })).rejects.toMatchObject({ code: 'invalid_input' });
    }
    await mustWrite(g, 'f', [person('only-on-f')]);
    await g.deleteBranch('f');
    await expect(g.branchHead('f')).rejects.toMatchObject({ code: 'not_found' });
    await g.createBranch('f', { branch: 'main' });
    expect(await allRows({ tables: g.ports.tables, snap: await g.branchHead('f'), table: 'Person' })).toEqual([]);
  });
});

describe('Graph: durability and cost', () => {
  it('reopening reproduces exactly what was acknowledged', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a'), person('b'), knows('a', 'b')]);
    await g.createBranch('dev', { branch: 'main' });
    await mustWrite(g, 'dev', [person('c')]);
    const g2 = await Graph.open(store);
    expect((await allRows({ tables: g2.ports.tables, snap: await g2.branchHead('main'), table: 'Knows' })).map((r) => r.key)).toEqual([
      '["a","b"]',
    ]);
    expect((await allRows({ tables: g2.ports.tables, snap: await g2.branchHead('dev'), table: 'Person' })).map((r) => r.key)).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('head lookup and reads cost the same store calls at 100 and 300 commits uncompacted (one more than at 1) and at 1,000 compacted', async () => {
    async function costAfter(commits: number, opts: GraphOptions = { inlineCompaction: false }): Promise<number> {
      const counting = new CountingStore(new MemoryStore());
      const g = await Graph.open(counting, opts);
      await g.applySchema('main', PEOPLE_SCHEMA);
      for (let i = 0; i < commits; i++) await mustWrite(g, 'main', [person(`p${i}`)]);
      // The last write's head hint is put after its answer: what a fresh process reads is settled first.
      await g.idle();
      const fresh = await Graph.open(counting);
      const before = counting.snapshot();
      const head = await fresh.branchHead('main');
      await getRow({ tables: fresh.ports.tables, snap: head, table: 'Person', key: 'p0' });
      return diffCounts(counting.snapshot(), before).total.calls;
    }
    // Uncompacted, 100 runs keep their older runs in a run-list part (graph/run-list-parts.ts): one read more.
    // (Each uncompacted write costs in proportion to its table's runs, so this history stays at 300.)
    const small = await costAfter(1);
    const large = await costAfter(300);
    expect(large).toBe(small + 1);
    expect(await costAfter(100)).toBe(large);
    // Writes that fold their runs (the default) keep the run list short: not even the part read.
    expect(await costAfter(1000, {})).toBe(small);
  }, 120_000);

  it('two writers racing on one branch lose nothing they were told landed', async () => {
    const store = new MemoryStore();
    await peopleGraph(store);
    const acked: string[] = [];
    async function writer(name: string): Promise<void> {
      const g = await Graph.open(store);
      for (let i = 0; i < 15; i++) {
        const id = `${name}-${i}`;
        // A client retries the typed retryable error; anything else fails the test.
        for (let attempt = 0; ; attempt++) {
          try {
            await mustWrite(g, 'main', [person(id)]);
            acked.push(id);
            break;
          } catch (e) {
            if ((e as { code?: string }).code !== 'publish_contention' || attempt > 5) throw e;
          }
        }
      }
    }
    await Promise.all([writer('w1'), writer('w2')]);
    const g = await Graph.open(store);
    expect((await allRows({ tables: g.ports.tables, snap: await g.branchHead('main'), table: 'Person' })).map((r) => r.key).sort()).toEqual(
      [...acked].sort(),
    );
    expect(acked).toHaveLength(30);
  });
});

describe('Graph: regressions found by simulation', () => {
  it('a publish whose response is lost keeps the runs its manifest references and reports success', async () => {
    const store = new MemoryStore();
    await peopleGraph(store);
    const { StoreWrapper } = await import('../store/store-wrapper.js');
    const { BranchgraphError } = await import('../model/errors.js');
    class LoseManifestResponse extends StoreWrapper {
      protected async around<T>(ctx: import('../store/store-wrapper.js').CallContext, call: () => Promise<T>): Promise<T> {
        const r = await call();
        if (ctx.op === 'putIfAbsent' && ctx.key.startsWith('manifests/')) throw new BranchgraphError('store_unavailable', 'response lost');
        return r;
      }
    }
    const g = await Graph.open(new LoseManifestResponse(store));
    const r = await g.write('main', [person('a')]);
    expect(r.status).toBe('published');
    const fresh = await Graph.open(store);
    expect(await getRow({ tables: fresh.ports.tables, snap: await fresh.branchHead('main'), table: 'Person', key: 'a' })).toMatchObject({
      id: 'a',
    });
  });
});
