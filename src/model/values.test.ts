import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from './canonical.js';
import { parseSchema } from './schema-parser.js';
import { checkRow, normalizeDatetime, rowText } from './values.js';

describe('datetimes', () => {
  it('keep microseconds, normalize to UTC with six digits, and refuse precision they cannot keep', () => {
    expect(normalizeDatetime('2026-01-01T00:00:00Z')).toEqual({ value: '2026-01-01T00:00:00.000000Z' });
    expect(normalizeDatetime('2026-01-01T00:00:00.000001Z')).toEqual({ value: '2026-01-01T00:00:00.000001Z' });
    expect(normalizeDatetime('2026-01-01T00:00:00.123456000Z')).toEqual({ value: '2026-01-01T00:00:00.123456Z' });
    expect(normalizeDatetime('2026-01-01T23:59:59.999999-05:30')).toEqual({ value: '2026-01-02T05:29:59.999999Z' });
    expect(normalizeDatetime('2026-01-01T01:00+01:00')).toEqual({ value: '2026-01-01T00:00:00.000000Z' });
    expect(normalizeDatetime('2026-01-01T00:00:00.0000001Z')).toMatchObject({ malformed: true });
    for (const bad of ['2026-02-30T00:00:00Z', '2026-01-01T24:00:00Z', '2026-01-01', 'yesterday', '2026-01-01T00:00:60Z'])
      expect(normalizeDatetime(bad)).toHaveProperty('error');
  });

  it('sort as the instants do', () => {
    const values = ['2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000500Z'].map(
      (s) => (normalizeDatetime(s) as { value: string }).value,
    );
    expect([...values].sort()).toEqual(['2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000500Z', '2026-01-01T00:00:00.001000Z']);
  });
});

describe('rowText', () => {
  it('is canonicalJson of every row checkRow makes, whole or partial, on node and edge tables', () => {
    const schema = parseSchema(
      'node P { id: string @key\n zeta: int?\n Alpha: string?\n b: json?\n B_2: bool?\n x_: float? }\nedge E: P -> P { w: int?\n a: string? }',
    );
    let checked = 0;
    const value = fc.oneof(
      fc.constant(null),
      fc.constant(undefined),
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.jsonValue({ maxDepth: 2 }),
    );
    fc.assert(
      fc.property(
        fc.constantFrom(...schema.types),
        fc.dictionary(fc.constantFrom('id', 'from', 'to', 'zeta', 'Alpha', 'b', 'B_2', 'x_', 'w', 'a'), value),
        fc.constantFrom('full' as const, 'partial' as const),
        (table, input, mode) => {
          const key = table.kind === 'node' ? { id: 'k' } : { from: 'f', to: 't' };
          const { row, issues } = checkRow({ table, input: { ...input, ...key }, mode, path: 'v' });
          if (issues.length > 0) return;
          checked++;
          expect(rowText(table, row)).toBe(canonicalJson(row));
        },
      ),
      { numRuns: 500 },
    );
    // Enough rows got through checkRow for the comparison to mean something.
    expect(checked).toBeGreaterThan(50);
  });
});
