/**
 * A merge never publishes a head that breaks its own schema: when one side
 * tightened a constraint, the other side's rows are checked against it.
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../graph/graph.js';
import { MemoryStore } from '../store/memory-store.js';
import type { WriteOp } from '../graph/write-batch.js';
import { merge, mustWrite } from '../../test/support/fixtures.js';

const LOOSE =
  'node P { id: string @key\n n: int? @range(0, 100)\n tag: string?\n kind: enum(a, b, c)? }\nedge L: P -> P @cardinality(0, 5)';

async function forked(seed: WriteOp[]): Promise<Graph> {
  const g = await Graph.open(new MemoryStore());
  await g.applySchema('main', LOOSE);
  if (seed.length > 0) await mustWrite(g, 'main', seed);
  await g.createBranch('f', { branch: 'main' });
  return g;
}

const p = (id: string, values: Record<string, unknown> = {}): WriteOp => ({ op: 'upsert', table: 'P', values: { id, ...values } });
const l = (from: string, to: string): WriteOp => ({ op: 'insert', table: 'L', values: { from, to } });

const cases: { name: string; tight: string; target: WriteOp[]; expected: [string, string, string, string | null][] }[] = [
  {
    name: 'a narrower @range',
    tight: LOOSE.replace('@range(0, 100)', '@range(0, 10)'),
    target: [p('x', { n: 50 })],
    expected: [['ValueConstraintViolation', 'P', 'x', 'n']],
  },
  {
    name: 'a new @unique',
    tight: LOOSE.replace('tag: string?', 'tag: string? @unique'),
    target: [p('x', { tag: 't' }), p('y', { tag: 't' })],
    expected: [
      ['UniqueViolation', 'P', 'x', 'tag'],
      ['UniqueViolation', 'P', 'y', 'tag'],
    ],
  },
  {
    name: 'a narrowed enum',
    tight: LOOSE.replace('enum(a, b, c)', 'enum(a, b)'),
    target: [p('x', { kind: 'c' })],
    expected: [['ValueConstraintViolation', 'P', 'x', 'kind']],
  },
  {
    name: 'a tighter cardinality',
    tight: LOOSE.replace('@cardinality(0, 5)', '@cardinality(0, 1)'),
    target: [p('x'), p('y'), p('z'), l('x', 'y'), l('x', 'z')],
    expected: [['CardinalityViolation', 'L', 'x', null]],
  },
  {
    name: 'a new required property',
    tight: LOOSE.replace('kind: enum(a, b, c)? }', 'kind: enum(a, b, c)?\n w: int }'),
    target: [p('x')],
    expected: [['ValueConstraintViolation', 'P', 'x', 'w']],
  },
];

describe('merges with a schema tightened on one side', () => {
  for (const c of cases) {
    it(`regression: ${c.name} on the source is checked against the target's rows, and nothing is published`, async () => {
      const g = await forked([p('seed')]);
      await g.applySchema('f', c.tight, c.name === 'a new required property' ? { migration: { defaults: { 'P.w': 1 } } } : {});
      await mustWrite(g, 'main', c.target);
      const before = (await g.branchHead('main')).manifest.commit.id;
      const r = await merge(g, 'f');
      expect(r.status).toBe('conflicts');
      if (r.status !== 'conflicts') return;
      expect(r.report.items.map((x) => [x.kind, x.table, x.key, x.property])).toEqual(c.expected);
      // Values come with the conflict: the target's row for row conflicts.
      if (c.expected[0]?.[1] === 'P') expect(r.report.items[0]?.target).not.toBeNull();
      expect((await g.branchHead('main')).manifest.commit.id).toBe(before);
      // The same schema applied directly to the target is refused too: the merge is no way around it.
      // (A new required property applied directly comes with its migration's defaults.)
      if (c.name !== 'a new required property')
        await expect(g.applySchema('main', c.tight)).rejects.toMatchObject({ code: 'schema_incompatible' });
    });
  }

  it('the tightening on the target is checked against the rows the source changed', async () => {
    const g = await forked([p('seed')]);
    await mustWrite(g, 'f', [p('x', { n: 50 })]);
    await g.applySchema('main', LOOSE.replace('@range(0, 100)', '@range(0, 10)'));
    const r = await merge(g, 'f');
    expect(r.status === 'conflicts' && r.report.items.map((x) => [x.kind, x.key, x.property])).toEqual([
      ['ValueConstraintViolation', 'x', 'n'],
    ]);
  });

  it('a clean merge with a tightened schema publishes a head whose every table satisfies it', async () => {
    const g = await forked([p('seed', { n: 5 })]);
    await g.applySchema('f', LOOSE.replace('@range(0, 100)', '@range(0, 10)'));
    await mustWrite(g, 'main', [p('x', { n: 7 })]);
    const r = await merge(g, 'f');
    expect(r.status).toBe('success');
    // Applying the head's own schema again finds nothing to refuse.
    await expect(g.applySchema('main', LOOSE.replace('@range(0, 100)', '@range(0, 9)'))).resolves.toBeDefined();
  });
});

describe('schema apply', () => {
  it('regression: a cardinality minimum is refused while a node has no edge at all', async () => {
    const g = await forked([p('x'), p('y'), l('x', 'y')]);
    await expect(g.applySchema('main', LOOSE.replace('@cardinality(0, 5)', '@cardinality(1, 5)'))).rejects.toMatchObject({
      code: 'schema_incompatible',
      issues: [{ path: 'L/y' }],
    });
  });
});
