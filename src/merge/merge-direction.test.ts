/**
 * A merge's conflicts are a property of the two heads, not of the
 * direction: merging a into b and b into a report the same conflicts, with
 * only the source and target values swapped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../graph/graph.js';
import type { WriteOp } from '../graph/write-batch.js';
import type { Conflict } from '../model/conflict.js';
import { MemoryStore } from '../store/memory-store.js';
import { merge } from '../../test/support/fixtures.js';

const SCHEMA = 'node N { id: string @key\n tag: string? @unique }\nedge L: N -> N';
const NODES = ['a', 'b', 'c'];

async function twoSides(seed: WriteOp[], left: WriteOp[], right: WriteOp[]): Promise<Graph> {
  const g = await Graph.open(new MemoryStore());
  await g.applySchema('main', SCHEMA);
  for (const op of seed) await g.write('main', [op]).catch(() => undefined);
  await g.createBranch('left', { branch: 'main' });
  await g.createBranch('right', { branch: 'main' });
  // Operations the constraints refuse (an edge to a missing node) are simply skipped.
  for (const [branch, ops] of [
    ['left', left],
    ['right', right],
  ] as const) {
    for (const op of ops) await g.write(branch, [op]).catch(() => undefined);
  }
  return g;
}

async function conflictsOf(g: Graph, source: string, into: string): Promise<Conflict[]> {
  const r = await merge(g, source, { into, dryRun: true, conflictLimit: 1000 });
  return r.status === 'conflicts' ? r.report.items : [];
}

/** The conflict as the other direction reports it: values swapped. Messages name the sides, so they differ in wording. */
const swap = ({ message: _m, ...c }: Conflict): Omit<Conflict, 'message'> => ({ ...c, source: c.target, target: c.source });
const withoutMessage = ({ message: _m, ...c }: Conflict): Omit<Conflict, 'message'> => c;

const opArb: fc.Arbitrary<WriteOp> = fc.oneof(
  fc.record({ op: fc.constant('delete' as const), table: fc.constant('N'), values: fc.record({ id: fc.constantFrom(...NODES) }) }),
  fc.record({
    op: fc.constant('upsert' as const),
    table: fc.constant('N'),
    values: fc.record({ id: fc.constantFrom(...NODES), tag: fc.constantFrom('t1', 't2', null) }),
  }),
  fc.record({
    op: fc.constant('upsert' as const),
    table: fc.constant('L'),
    values: fc.record({ from: fc.constantFrom(...NODES), to: fc.constantFrom(...NODES) }),
  }),
  fc.record({
    op: fc.constant('delete' as const),
    table: fc.constant('L'),
    values: fc.record({ from: fc.constantFrom(...NODES), to: fc.constantFrom(...NODES) }),
  }),
);

describe('merge direction', () => {
  it('regression: deleting b on one side while the other adds b→c, c→b and b→b reports the same four OrphanEdge conflicts either way', async () => {
    const node = (id: string): WriteOp => ({ op: 'insert', table: 'N', values: { id } });
    const edge = (from: string, to: string): WriteOp => ({ op: 'insert', table: 'L', values: { from, to } });
    const g = await twoSides(
      [node('b'), node('c')],
      [{ op: 'delete', table: 'N', values: { id: 'b' } }],
      [edge('b', 'c'), edge('c', 'b'), edge('b', 'b')],
    );
    const one = await conflictsOf(g, 'left', 'right');
    const other = await conflictsOf(g, 'right', 'left');
    expect(one.map((c) => [c.kind, c.key, c.property])).toEqual([
      ['OrphanEdge', '["b","b"]', 'from'],
      ['OrphanEdge', '["b","b"]', 'to'],
      ['OrphanEdge', '["b","c"]', 'from'],
      ['OrphanEdge', '["c","b"]', 'to'],
    ]);
    expect(other.map(withoutMessage)).toEqual(one.map(swap));
    // Orphans are worded by edge end, not by side: the same message either way.
    expect(other.map((c) => c.message)).toEqual(one.map((c) => c.message));
  });

  it('the same pair of heads gives the same conflicts in either direction, source and target values swapped', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { maxLength: 4 }),
        fc.array(opArb, { maxLength: 5 }),
        fc.array(opArb, { maxLength: 5 }),
        async (seed, left, right) => {
          const g = await twoSides(seed, left, right);
          const one = await conflictsOf(g, 'left', 'right');
          const other = await conflictsOf(g, 'right', 'left');
          expect(other.map(withoutMessage)).toEqual(one.map(swap));
        },
      ),
      { numRuns: 150 },
    );
  });
});
