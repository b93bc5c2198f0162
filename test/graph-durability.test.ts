import { execFile } from 'node:child_process';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { allRows } from '../src/graph/reads.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import { FsStore } from '../src/store/fs-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { knows, mustWrite, peopleGraph, person, rowsOf } from './support/fixtures.js';
import { storesUnderTest } from './support/stores.js';

const run = promisify(execFile);

for (const sut of storesUnderTest()) {
  describe(`graph on ${sut.name}`, () => {
    it('reopening reproduces exactly what was acknowledged: branches, rows, edges, history', async () => {
      const { store, reopen } = await sut.open();
      const g = await peopleGraph(store);
      const c1 = await mustWrite(g, 'main', [person('a', { age: 1, email: 'a@x' }), person('b'), knows('a', 'b', { since: '2024-02-29' })]);
      await g.createBranch('review/2026-07', { branch: 'main' });
      await mustWrite(g, 'review/2026-07', [{ op: 'update', table: 'Person', values: { id: 'b', age: 9 } }]);
      await mustWrite(g, 'main', [person('c')]);
      const merged = await mergeBranches(g.ports, mergeSpec({ source: 'review/2026-07' }));
      expect(merged.status).toBe('success');
      const expectMain = await rowsOf(g, 'main', 'Person');
      const expectKnows = await rowsOf(g, 'main', 'Knows');

      const g2 = await Graph.open(reopen());
      expect(await rowsOf(g2, 'main', 'Person')).toEqual(expectMain);
      expect(await rowsOf(g2, 'main', 'Knows')).toEqual({ '["a","b"]': { from: 'a', to: 'b', since: '2024-02-29' } });
      expect(expectKnows).toEqual(await rowsOf(g2, 'main', 'Knows'));
      expect(expectMain.b?.age).toBe(9);
      expect((await allRows({ tables: g2.ports.tables, snap: await g2.commitSnapshot(c1), table: 'Person' })).map((r) => r.key)).toEqual([
        'a',
        'b',
      ]);
      expect((await g2.listBranches()).branches.map((b) => b.record.name)).toEqual(['main', 'review/2026-07']);
      await g2.close();
    });
  });
}

describe('concurrency across processes', () => {
  it('two processes writing to one branch lose nothing they acknowledged', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-2proc-'));
    await peopleGraph(new FsStore(dir));
    const tsx = path.resolve('node_modules/.bin/tsx');
    const worker = path.resolve('test/support/graph-writer-worker.ts');
    const [a, b] = await Promise.all([run(tsx, [worker, dir, 'p1', '12']), run(tsx, [worker, dir, 'p2', '12'])]);
    const acked = [...(JSON.parse(a.stdout) as string[]), ...(JSON.parse(b.stdout) as string[])].sort();
    expect(acked).toHaveLength(24);
    const g = await Graph.open(new FsStore(dir));
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(acked);
  }, 60_000);
});

describe('model-based property test', () => {
  type Op =
    | { kind: 'upsert'; branch: number; id: string; age: number }
    | { kind: 'delete'; branch: number; id: string }
    | { kind: 'branch'; from: number }
    | { kind: 'reopen' };
  const opArb: fc.Arbitrary<Op> = fc.oneof(
    {
      weight: 5,
      arbitrary: fc.record({
        kind: fc.constant('upsert' as const),
        branch: fc.nat(3),
        id: fc.constantFrom('a', 'b', 'c', 'd'),
        age: fc.nat(5),
      }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ kind: fc.constant('delete' as const), branch: fc.nat(3), id: fc.constantFrom('a', 'b', 'c', 'd') }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('branch' as const), from: fc.nat(3) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('reopen' as const) }) },
  );

  it('random writes, branches and reopens always read as the model says', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArb, { maxLength: 25 }), async (ops) => {
        const store = new MemoryStore();
        let g = await peopleGraph(store);
        const model: Map<string, number>[] = [new Map()];
        const names = ['main'];
        for (const op of ops) {
          if (op.kind === 'reopen') {
            g = await Graph.open(store);
          } else if (op.kind === 'branch') {
            const from = op.from % names.length;
            const name = `b${names.length}`;
            await g.createBranch(name, { branch: names[from] as string });
            names.push(name);
            model.push(new Map(model[from]));
          } else {
            const b = op.branch % names.length;
            const m = model[b] as Map<string, number>;
            if (op.kind === 'upsert') {
              await g.write(names[b] as string, [{ op: 'upsert', table: 'Person', values: { id: op.id, name: op.id, age: op.age } }]);
              m.set(op.id, op.age);
            } else {
              await g.write(names[b] as string, [{ op: 'delete', table: 'Person', values: { id: op.id } }]);
              m.delete(op.id);
            }
          }
          for (let b = 0; b < names.length; b++) {
            const rows = await rowsOf(g, names[b] as string, 'Person');
            const expected = Object.fromEntries([...(model[b] as Map<string, number>)].sort(([x], [y]) => (x < y ? -1 : 1)));
            expect(Object.fromEntries(Object.entries(rows).map(([k, r]) => [k, r.age]))).toEqual(expected);
          }
        }
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
