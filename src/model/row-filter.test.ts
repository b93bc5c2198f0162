import { describe, expect, it } from 'vitest';
import { checkOrder, compareSortValues, compileRowFilter, indexableEquality, sortValues } from './row-filter.js';
import { parseSchema } from './schema-parser.js';

const schema = parseSchema(
  'node T { id: string @key\n s: string\n i: int?\n b: bool?\n u: string? @unique\n t: datetime? }\nedge E: T -> T { w: int }',
);
const T = schema.types.find((t) => t.name === 'T') as (typeof schema.types)[number];
const E = schema.types.find((t) => t.name === 'E') as (typeof schema.types)[number];
const f = (where: unknown) => compileRowFilter({ schema, type: T, where });
const row = (r: Record<string, unknown>) => ({ key: String(r.id), row: { s: '', i: null, b: null, u: null, t: null, ...r } as never });

describe('typed row filters', () => {
  it('tests each operator, with nulls false except isNull, ne and notIn', () => {
    const a = row({ id: 'a', s: 'apple', i: 3 });
    const n = row({ id: 'n', s: 'nut' });
    expect(f({ i: { gt: 2, lte: 3 } }).test(a)).toBe(true);
    expect(f({ i: { gt: 2 } }).test(n)).toBe(false);
    expect(f({ i: { ne: 3 } }).test(n)).toBe(true);
    expect(f({ i: { notIn: [3] } }).test(n)).toBe(true);
    expect(f({ i: { isNull: true } }).test(n)).toBe(true);
    expect(f({ s: { prefix: 'ap', contains: 'pl' } }).test(a)).toBe(true);
    expect(f({ _key: { in: ['a', 'b'] } }).test(a)).toBe(true);
    expect(f({ _or: [{ s: { eq: 'x' } }, { _not: { i: { lt: 3 } } }] }).test(a)).toBe(true);
    expect(f({ _and: [{ s: { eq: 'apple' } }, { i: { eq: 4 } }] }).test(a)).toBe(false);
  });

  it('compares datetimes in their stored form', () => {
    const r = row({ id: 'a', t: '2024-01-01T10:00:00.000001Z' });
    expect(f({ t: { gt: '2024-01-01T11:00:00+02:00' } }).test(r)).toBe(true);
    expect(f({ t: { eq: '2024-01-01T10:00:00.000001Z' } }).test(r)).toBe(true);
  });

  it.each([
    [{ nope: { eq: 1 } }, 'where.nope'],
    [{ b: { lt: true } }, 'where.b.lt'],
    [{ i: { prefix: '1' } }, 'where.i.prefix'],
    [{ s: { isNull: true } }, 'where.s.isNull'],
    [{ i: { eq: 'x' } }, 'where.i.eq'],
    [{ i: 3 }, 'where.i'],
    [{ _or: {} }, 'where._or'],
  ])('refuses %j naming %s', (where, path) => {
    expect(() => f(where)).toThrow(expect.objectContaining({ code: 'invalid_input', issues: [expect.objectContaining({ path })] }));
  });

  it('finds the equality an index can answer, never under _or', () => {
    expect(indexableEquality(f({ u: { eq: 'x' }, i: { gt: 1 } }), T)).toEqual({ prop: 'u', values: ['x'] });
    expect(indexableEquality(f({ _key: { in: ['a'] }, u: { eq: 'x' } }), T)).toEqual({ prop: '_key', values: ['a'] });
    expect(indexableEquality(f({ _or: [{ u: { eq: 'x' } }] }), T)).toBeUndefined();
    const e = compileRowFilter({ schema, type: E, where: { to: { eq: 'b' }, _from: { s: { eq: 'x' } } } });
    expect(indexableEquality(e, E)).toEqual({ prop: 'to', values: ['b'] });
    expect(e.ends).toEqual({ from: true, to: false });
  });

  it('orders by any property with nulls last and the key breaking ties', () => {
    const order = checkOrder(T, [{ prop: 'i', direction: 'desc' }]);
    expect(order).toEqual([
      { prop: 'i', direction: 'desc' },
      { prop: '_key', direction: 'asc' },
    ]);
    const rows = [row({ id: 'c' }), row({ id: 'b', i: 1 }), row({ id: 'a', i: 1 }), row({ id: 'd', i: 9 })];
    rows.sort((x, y) => compareSortValues(order, sortValues(order, x), sortValues(order, y)));
    expect(rows.map((r) => r.key)).toEqual(['d', 'a', 'b', 'c']);
    expect(checkOrder(T, [{ prop: 'id', direction: 'asc' }])).toEqual([{ prop: 'id', direction: 'asc' }]);
  });
});
