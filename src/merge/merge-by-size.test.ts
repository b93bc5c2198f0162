/**
 * Merge plans by size: which side is walked key by key, and whether the
 * deltas are streamed, is a cost decision only. A fast-check property
 * prepares random two-sided histories with every plan and requires the
 * same merged rows and the same conflicts as reading both deltas whole;
 * the decision itself is checked directly.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../graph/graph.js';
import type { Snapshot } from '../graph/snapshot.js';
import type { WriteOp } from '../graph/write-batch.js';
import { compareConflicts, ConflictCollector } from '../model/conflict.js';
import { parseSchema } from '../model/schema-parser.js';
import { findType, type TableType } from '../model/schema.js';
import { MemoryStore } from '../store/memory-store.js';
import { EMPTY_TABLE } from '../table/table-version.js';
import { mergeRuns } from '../table/merge-walk.js';
import { planBySize, SKEW_ROWS, sourceRowsTrusted, type SizePlan } from './merge-plan.js';
import { prepareTable, type PreparedTable } from './prepare-table.js';

const SCHEMA = 'node T { id: string @key\n a: int?\n b: int? }';
const KEYS = ['k0', 'k1', 'k2', 'k3', 'k4', 'k5'];
const op = fc.oneof(
  fc.record({
    op: fc.constant('upsert' as const),
    id: fc.constantFrom(...KEYS),
    a: fc.integer({ min: 0, max: 2 }),
    b: fc.integer({ min: 0, max: 2 }),
  }),
  fc.record({ op: fc.constant('delete' as const), id: fc.constantFrom(...KEYS) }),
);
const batches = fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { maxLength: 3 });
const toWrite = (ops: { op: 'upsert' | 'delete'; id: string; a?: number; b?: number }[]): WriteOp[] =>
  ops.map((o) =>
    o.op === 'delete'
      ? { op: 'delete', table: 'T', values: { id: o.id } }
      : { op: 'upsert', table: 'T', values: { id: o.id, a: o.a ?? null, b: o.b ?? null } },
  );

/** The T table of `main` (target) and `f` (source) since `base`, prepared under a plan, through the graph's run files. */
async function prepareT(
  g: Graph,
  at: { base: Snapshot; source: Snapshot; target: Snapshot; bySize: SizePlan | undefined; conflicts?: ConflictCollector },
): Promise<PreparedTable> {
  const type = findType(at.target.schema, 'T') as TableType;
  return prepareTable({
    type,
    base: at.base.tables.T ?? EMPTY_TABLE,
    source: at.source.tables.T ?? EMPTY_TABLE,
    target: at.target.tables.T ?? EMPTY_TABLE,
    load: g.ports.runFiles.loader(type),
    writeRun: async (rows) => g.ports.runFiles.stage(type, rows),
    ...(at.conflicts !== undefined ? { conflicts: at.conflicts } : {}),
    ...(at.bySize !== undefined ? { bySize: at.bySize } : {}),
  });
}

/** The report a page of `keep` conflicts gives under a plan: conflicts past the page are only counted. */
async function pageOf(g: Graph, at: { base: Snapshot; source: Snapshot; target: Snapshot; bySize: SizePlan | undefined }, keep: number) {
  const sink = new ConflictCollector(keep);
  await prepareT(g, { ...at, conflicts: sink });
  return { total: sink.total, counts: sink.counts, kept: sink.kept() };
}

describe('merge plans by size', () => {
  it('walking either side alone, or both, merges to the same rows and the same conflicts', async () => {
    await fc.assert(
      fc.asyncProperty(batches, batches, batches, async (seed, left, right) => {
        const g = await Graph.open(new MemoryStore());
        await g.applySchema('main', SCHEMA);
        for (const b of seed) await g.write('main', toWrite(b));
        const base = await g.branchHead('main');
        await g.createBranch('f', { branch: 'main' });
        for (const b of left) await g.write('f', toWrite(b));
        for (const b of right) await g.write('main', toWrite(b));
        const [source, target] = [await g.branchHead('f'), await g.branchHead('main')];
        const type = findType(target.schema, 'T') as TableType;
        const outcome = async (bySize: SizePlan | undefined) => {
          const p = await prepareT(g, { base, source, target, bySize });
          const rows: unknown[] = [];
          if (p.conflicts.length === 0)
            for await (const r of mergeRuns({ runs: p.version.runs, load: g.ports.runFiles.loader(type) })) rows.push([r.key, r.props]);
          return { conflicts: [...p.conflicts].sort(compareConflicts), rows };
        };
        // No plan: both deltas read whole into maps, the reference every plan must agree with.
        const whole = await outcome(undefined);
        expect(await outcome('both')).toEqual(whole);
        expect(await outcome('source-big')).toEqual(whole);
        expect(await outcome('target-big')).toEqual(whole);
        // A report's page of one: conflicts past it are only counted (the streamed plan counts them
        // from the runs' columns), and every plan counts them alike.
        const page = (bySize: SizePlan | undefined) => pageOf(g, { base, source, target, bySize }, 1);
        const paged = await page(undefined);
        expect(paged.total).toBe(whole.conflicts.length);
        expect(paged.kept).toEqual(whole.conflicts.slice(0, 1));
        for (const plan of ['both', 'source-big', 'target-big'] as const) expect(await page(plan)).toEqual(paged);
      }),
      { numRuns: 60 },
    );
  });

  it('a streamed merge of stored runs counts the conflicts past the page from their columns, as the rows count them', async () => {
    const g = await Graph.open(new MemoryStore());
    await g.applySchema('main', SCHEMA);
    // Enough rows that runs are stored as Arrow files, whose decoded columns the count reads.
    const ids = Array.from({ length: 300 }, (_, i) => `k${String(i).padStart(3, '0')}`);
    const upsert = (f: (i: number) => { a: number | null; b: number | null }): WriteOp[] =>
      ids.map((id, i) => ({ op: 'upsert', table: 'T', values: { id, ...f(i) } }));
    await g.write(
      'main',
      upsert(() => ({ a: 0, b: 0 })),
    );
    const base = await g.branchHead('main');
    await g.createBranch('f', { branch: 'main' });
    // Both sides change every row; a is changed alike on every third row, b differently on every other.
    await g.write(
      'f',
      upsert((i) => ({ a: i % 3 === 0 ? 7 : 1, b: i % 2 === 0 ? 1 : null })),
    );
    await g.write(
      'main',
      upsert((i) => ({ a: i % 3 === 0 ? 7 : 2, b: i % 2 === 0 ? 2 : null })),
    );
    const [source, target] = [await g.branchHead('f'), await g.branchHead('main')];
    const page = (bySize: SizePlan | undefined) => pageOf(g, { base, source, target, bySize }, 5);
    const whole = await page(undefined);
    const divergent = ids.filter((_, i) => i % 3 !== 0).length + ids.filter((_, i) => i % 2 === 0).length;
    expect(whole.total).toBe(divergent);
    expect(whole.kept.map((c) => c.key)).toEqual(['k000', 'k001', 'k002', 'k002', 'k004']);
    expect(await page('both')).toEqual(whole);
  });

  it('walk the smaller side only when the other is much bigger, and skip the source only when validation needs nothing from it', () => {
    expect(planBySize(SKEW_ROWS * 10, 10, true)).toBe('source-big');
    expect(planBySize(SKEW_ROWS * 10, 10, false)).toBe('both');
    expect(planBySize(10, SKEW_ROWS * 10, false)).toBe('target-big');
    expect(planBySize(SKEW_ROWS * 2, SKEW_ROWS, true)).toBe('both');
    expect(planBySize(100, 1, true)).toBe('both');
    const schema = parseSchema(
      'node N { id: string @key\n v: int }\nnode U { id: string @key\n e: string @unique }\nnode P { id: string @key }\nedge E: P -> P',
    );
    const t = (name: string) => findType(schema, name) as TableType;
    expect(sourceRowsTrusted({ schema, sourceSchema: schema, type: t('N'), sourceTombstones: 5 })).toBe(true);
    expect(sourceRowsTrusted({ schema, sourceSchema: schema, type: t('U'), sourceTombstones: 0 })).toBe(false);
    expect(sourceRowsTrusted({ schema, sourceSchema: schema, type: t('E'), sourceTombstones: 0 })).toBe(false);
    // Deleting a node edges refer to needs the surviving-edge check.
    expect(sourceRowsTrusted({ schema, sourceSchema: schema, type: t('P'), sourceTombstones: 0 })).toBe(true);
    expect(sourceRowsTrusted({ schema, sourceSchema: schema, type: t('P'), sourceTombstones: 1 })).toBe(false);
    // The source wrote its rows under another type: they must be checked again.
    const older = parseSchema('node N { id: string @key\n v: int? }');
    expect(sourceRowsTrusted({ schema, sourceSchema: older, type: t('N'), sourceTombstones: 0 })).toBe(false);
  });
});
