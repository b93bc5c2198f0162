import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Row } from '../model/values.js';
import { divergentColumns, divergentProperties, markedHash, marksOf, mergeEntity } from './three-way.js';

const B: Row = { id: 'k', name: 'base', age: 1 };
const S: Row = { id: 'k', name: 'src', age: 1 };
const T: Row = { id: 'k', name: 'tgt', age: 1 };
const m = (b: Row | null, s: Row | null, t: Row | null) => mergeEntity({ table: 'Person', key: 'k', base: b, source: s, target: t });

describe('three-way merge: the truth table', () => {
  it.each([
    ['1 insert on source', null, S, null, S],
    ['2 insert on target', null, null, T, T],
    ['3 same insert on both', null, S, S, S],
    ['5 unchanged', B, B, B, B],
    ['6 target updated', B, B, T, T],
    ['7 target deleted', B, B, null, null],
    ['8 source updated', B, S, B, S],
    ['9 source deleted', B, null, B, null],
    ['10 same update on both', B, S, S, S],
    ['12 deleted on both', B, null, null, null],
  ] as const)('row %s', (_name, b, s, t, expected) => {
    expect(m(b, s, t)).toEqual({ row: expected });
  });

  it('row 4: different inserts are a DivergentInsert naming the differing properties', () => {
    const r = m(null, S, T);
    expect(r).toMatchObject({ conflicts: [{ kind: 'DivergentInsert', key: 'k', property: null, base: null, source: S, target: T }] });
    expect('conflicts' in r && r.conflicts[0]?.message).toContain('name');
  });

  it('rows 13 and 14: delete against update is DeleteVsUpdate', () => {
    expect(m(B, null, T)).toMatchObject({ conflicts: [{ kind: 'DeleteVsUpdate', base: B, source: null, target: T }] });
    expect(m(B, S, null)).toMatchObject({ conflicts: [{ kind: 'DeleteVsUpdate', base: B, source: S, target: null }] });
  });

  it('row 11: different properties merge; the same property changed differently is a DivergentUpdate naming it', () => {
    expect(m(B, { ...B, name: 'src' }, { ...B, age: 2 })).toEqual({ row: { id: 'k', name: 'src', age: 2 } });
    const r = m(B, { ...B, name: 'src', age: 3 }, { ...B, name: 'tgt', age: 3 });
    expect(r).toEqual({
      conflicts: [expect.objectContaining({ kind: 'DivergentUpdate', property: 'name', base: 'base', source: 'src', target: 'tgt' })],
      // What resolutions start from: every other property merged, the target's value where the sides conflict.
      merged: { id: 'k', name: 'tgt', age: 3 },
    });
  });

  it('equality is typed: null, "" and [] differ', () => {
    const base: Row = { id: 'k', v: null };
    expect(m(base, { id: 'k', v: '' }, { id: 'k', v: [] })).toMatchObject({ conflicts: [{ kind: 'DivergentUpdate', property: 'v' }] });
    expect(m(base, { id: 'k', v: '' }, { id: 'k', v: '' })).toEqual({ row: { id: 'k', v: '' } });
  });

  const row = fc.option(fc.record({ id: fc.constant('k'), a: fc.integer({ min: 0, max: 2 }), b: fc.constantFrom('x', 'y', null) }), {
    nil: null,
  });

  it('property: merging with an unchanged side returns the other side', () => {
    fc.assert(
      fc.property(row, row, (b, x) => {
        expect(m(b, x, b)).toEqual({ row: x });
        expect(m(b, b, x)).toEqual({ row: x });
      }),
    );
  });

  it('property: the merge is symmetric in source and target, up to which side a conflict names', () => {
    fc.assert(
      fc.property(row, row, row, (b, s, t) => {
        const ab = m(b, s, t);
        const ba = m(b, t, s);
        if ('row' in ab) expect(ba).toEqual(ab);
        else {
          expect('conflicts' in ba).toBe(true);
          if ('conflicts' in ba)
            expect(ba.conflicts.map((c) => [c.kind, c.property])).toEqual(ab.conflicts.map((c) => [c.kind, c.property]));
        }
      }),
    );
  });
});

describe('three-way merge over a marked (virtual) base', () => {
  const marked = new Set(['name']);
  const mm = (b: Row, s: Row | null, t: Row | null) =>
    mergeEntity({ table: 'Person', key: 'k', base: b, source: s, target: t }, { marks: { base: marked } });

  it('a marked property is decided by the two sides: agreeing sides are clean, differing sides conflict', () => {
    expect(mm(B, S, S)).toEqual({ row: S });
    // The base's own value of a marked property counts for nothing: a side holding it still changed it.
    const r = mm(B, B, T);
    expect('conflicts' in r && r.conflicts.map((c) => [c.kind, c.property])).toEqual([['DivergentUpdate', 'name']]);
    expect('conflicts' in r && r.conflicts[0]?.message).toContain('the common ancestors disagree');
    // Unmarked properties merge as always.
    expect(mm(B, { ...S, age: 2 }, S)).toEqual({ row: { ...S, age: 2 } });
  });

  it('a side deleting a row whose base is marked conflicts with a side that kept it; both deleting is clean', () => {
    expect(mm(B, null, null)).toEqual({ row: null });
    expect('conflicts' in mm(B, null, B) && mm(B, null, B)).toMatchObject({ conflicts: [{ kind: 'DeleteVsUpdate' }] });
  });

  it('a value taken from a marked side keeps its mark, and marks ride in the stored hash', () => {
    const r = mergeEntity({ table: 'Person', key: 'k', base: B, source: B, target: T }, { marks: { target: marked } });
    expect(r).toEqual({ row: T, marks: marked });
    const h = markedHash(T, marked);
    expect(h.startsWith('~')).toBe(true);
    expect(marksOf(h)).toEqual(marked);
    expect(marksOf(markedHash(T, new Set()))).toBeUndefined();
  });
});

describe('divergentProperties', () => {
  it('counts exactly the DivergentUpdates mergeEntity reports for rows both sides updated', () => {
    const value = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2 }), fc.constantFrom('a', 'b'), fc.constant({ x: [1] }));
    const row = fc.dictionary(fc.constantFrom('p', 'q', 'r'), value).map((r) => ({ id: 'k', ...r }) as Row);
    fc.assert(
      fc.property(row, row, row, (b, s, t) => {
        const merged = m(b, s, t);
        const reported = 'conflicts' in merged ? merged.conflicts.filter((c) => c.kind === 'DivergentUpdate').length : 0;
        expect(divergentProperties(b, s, t)).toBe(reported);
      }),
      { numRuns: 2000 },
    );
  });

  it("counts the same from the rows' columns as from the rows (a property a row lacks is null in its column)", () => {
    const value = fc.oneof(fc.constant(null), fc.integer({ min: 0, max: 2 }), fc.constantFrom('a', 'b'), fc.constant({ x: [1] }));
    const row = fc.record({ id: fc.constant('k'), p: value, q: value, r: value }) as fc.Arbitrary<Row>;
    fc.assert(
      fc.property(fc.array(row, { minLength: 3, maxLength: 6 }), fc.nat(), (rows, pick) => {
        // One run's columns holding every row, the three rows read at different positions.
        const props = ['id', 'p', 'q', 'r'];
        const columns = props.map((p) => rows.map((x) => x[p] ?? null));
        const [b, s, t] = [pick % rows.length, (pick + 1) % rows.length, (pick + 2) % rows.length];
        const at = (i: number) => ({ columns, at: i });
        expect(divergentColumns(at(b), at(s), at(t))).toBe(divergentProperties(rows[b] as Row, rows[s] as Row, rows[t] as Row));
      }),
      { numRuns: 2000 },
    );
  });
});
