import { describe, expect, it } from 'vitest';
import { Ancestry } from '../graph/ancestry.js';
import { parseSchema } from '../model/schema-parser.js';
import type { RunRef } from '../table/run.js';
import type { TableVersion } from '../table/table-version.js';
import {
  classifyMerge,
  DECODE_FACTOR,
  deltaBytes,
  fastForwardTables,
  mergeSchemas,
  needsBaseSchema,
  planTables,
  type MergeSide,
} from './merge-plan.js';

const run = (key: string, bytes = 10): RunRef => ({
  key,
  rows: 1,
  tombstones: 0,
  bytes,
  minKey: 'a',
  maxKey: 'a',
  checksum: '0'.repeat(32),
});
const v = (...keys: string[]): TableVersion => ({ runs: keys.map((k) => run(k)) });
const schemaA = parseSchema('node A { id: string @key }\nnode B { id: string @key }');
const schemaB = parseSchema('node A { id: string @key\n n: int? }\nnode B { id: string @key }');

function side(over: Partial<MergeSide>): MergeSide {
  return {
    ref: { lineage: 'L', version: 1 },
    ancestry: Ancestry.of({ L: 1 }),
    pending: 0,
    schemaHash: 'h1',
    schema: schemaA,
    tables: {},
    ...over,
  };
}

describe('classifyMerge', () => {
  const base = { lineage: 'M', version: 3 };
  const target = side({ ref: base, ancestry: Ancestry.of({ M: 3 }) });
  const ahead = side({ ref: { lineage: 'F', version: 2 }, ancestry: Ancestry.of({ M: 3, F: 2 }) });

  it('up to date when the target contains the source, fast-forward when the source contains the target, three-way otherwise', () => {
    expect(classifyMerge(side({ ref: { lineage: 'M', version: 2 }, ancestry: Ancestry.of({ M: 2 }) }), target)).toBe('up_to_date');
    expect(classifyMerge(ahead, target)).toBe('fast_forward');
    expect(classifyMerge(ahead, side({ ref: { lineage: 'M', version: 4 }, ancestry: Ancestry.of({ M: 4 }) }))).toBe('three_way');
  });

  it('a head with pending WAL generations is never contained: its changes are not in its manifest yet', () => {
    expect(classifyMerge(side({ ref: { lineage: 'M', version: 2 }, ancestry: Ancestry.of({ M: 2 }), pending: 1 }), target)).toBe(
      'three_way',
    );
    expect(classifyMerge(ahead, { ...target, pending: 2 })).toBe('three_way');
  });

  it("regression: a branch that only re-laid the target's commit (a compaction) is up to date, not a fast-forward", () => {
    // F forked at M:3 and compacted: F:1 carries M:3's commit.
    const relaid = side({ ref: { lineage: 'F', version: 1 }, ancestry: Ancestry.of({ M: 3, F: 1 }) });
    expect(classifyMerge({ ...relaid, commit: base }, target)).toBe('up_to_date');
    // The target re-laid its own commit (M:4 re-lays M:3): a source that descends from M:3 fast-forwards.
    expect(classifyMerge(ahead, { ...side({ ref: { lineage: 'M', version: 4 }, ancestry: Ancestry.of({ M: 4 }) }), commit: base })).toBe(
      'fast_forward',
    );
  });
});

describe('fastForwardTables', () => {
  it("publishes the source's tables, removes the target's others, and reports only tables that differ", () => {
    const r = fastForwardTables(
      side({ tables: { A: v('r1', 'r2'), B: v('r3') } }),
      side({ tables: { A: v('r1'), B: v('r3'), C: v('r4') } }),
    );
    expect(r.tables).toEqual({ A: v('r1', 'r2'), B: v('r3'), C: null });
    expect(r.summaries.map((s) => [s.table, s.action])).toEqual([['A', 'adopted_source']]);
  });
});

describe('mergeSchemas', () => {
  it('takes the side that changed the schema, merges both changes when both did, and refuses without a base schema', () => {
    const s = side({ schemaHash: 'h2', schema: schemaB });
    const t = side({ schemaHash: 'h1', schema: schemaA });
    expect(mergeSchemas({ hash: 'h1', schema: undefined }, s, t)).toEqual({ schema: schemaB });
    expect(mergeSchemas({ hash: 'h1', schema: undefined }, t, s)).toEqual({ schema: schemaB });
    expect(mergeSchemas({ hash: 'h0', schema: undefined }, s, { ...s })).toEqual({ schema: schemaB });
    expect(needsBaseSchema('h0', s, t)).toBe(true);
    expect(() => mergeSchemas({ hash: 'h0', schema: undefined }, s, t)).toThrow(expect.objectContaining({ code: 'schema_incompatible' }));
    expect(mergeSchemas({ hash: 'h0', schema: { format: 1, types: [] } }, s, t)).toHaveProperty('schema');
  });
});

describe('planTables', () => {
  it('keeps tables only the target changed, adopts those only the source changed, prepares the rest in name order', () => {
    const base = { A: v('r1'), B: v('r2') };
    const source = side({ tables: { A: v('r1', 's1'), B: v('r2', 's2') } });
    const target = side({ tables: { A: v('r1', 't1'), B: v('r2') } });
    const plan = planTables({ schema: schemaA, base, source, target });
    expect(Object.keys(plan.adopted)).toEqual(['B']);
    expect(plan.summaries.map((s) => s.table)).toEqual(['B']);
    expect(plan.toPrepare.map((p) => p.type.name)).toEqual(['A']);
    expect(plan.toPrepare[0]?.estimateBytes).toBe(DECODE_FACTOR * 20);
    const onlyTarget = planTables({ schema: schemaA, base, source: side({ tables: base }), target });
    expect([onlyTarget.adopted, onlyTarget.toPrepare]).toEqual([{}, []]);
  });

  it('sizes a table a side compacted since the base by the delta beneath its compacted run, when given', () => {
    const base = { A: v('r1', 'r2', 'r3') };
    const big = { ...run('c', 5000), rows: 3000, compacted: true };
    // The target folded the base's runs and its own into one: its run list shows no delta.
    const target = side({ tables: { A: { runs: [big, run('t2')] } } });
    const source = side({ tables: { A: v('r1', 'r2', 'r3', 's1') } });
    const blind = planTables({ schema: schemaA, base, source, target });
    expect(blind.toPrepare[0]?.bySize).toBe('both');
    expect(blind.toPrepare[0]?.estimateBytes).toBe(DECODE_FACTOR * (10 + 5010));
    // With what the compacted run replaced: the target added two one-row runs, the source one.
    const aligned = { A: { target: [run('t1'), run('t2')] } };
    const plan = planTables({ schema: schemaA, base, source, target, aligned });
    expect(plan.toPrepare[0]?.plannedRows).toBe(3);
    expect(plan.toPrepare[0]?.estimateBytes).toBe(DECODE_FACTOR * 30);
  });

  it('ignores tables the merged schema does not have', () => {
    const plan = planTables({ schema: schemaA, base: {}, source: side({ tables: { Gone: v('x') } }), target: side({ tables: {} }) });
    expect(plan).toEqual({ adopted: {}, summaries: [], toPrepare: [] });
  });
});

describe('deltaBytes', () => {
  it('counts the runs a side added; a side sharing no run with a non-empty base (compacted) counts whole', () => {
    expect(deltaBytes(v('a'), { runs: [run('a', 100), run('b', 7)] })).toBe(7);
    expect(deltaBytes(v('a'), { runs: [run('c', 30), run('d', 5)] })).toBe(35);
    expect(deltaBytes(v(), { runs: [run('c', 30)] })).toBe(30);
  });
});
