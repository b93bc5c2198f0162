import { parse } from 'graphql';
import { describe, expect, it } from 'vitest';
import { inSelectionOrder } from './selection-order.js';

const keys = (v: unknown): unknown =>
  Array.isArray(v)
    ? v.map(keys)
    : v !== null && typeof v === 'object'
      ? Object.entries(v).map(([k, x]) => (x !== null && typeof x === 'object' ? { [k]: keys(x) } : k))
      : v;

describe('results in selection order', () => {
  it('orders every object, through lists, aliases, inline fragments and named ones, and changes no value', () => {
    const doc = parse(`query Q { page { nodes { id ... on Person { name } ...More friend: to { b a } } total } }
      fragment More on Person { age }`);
    const data = {
      page: {
        total: 2,
        nodes: [
          { friend: { a: 1, b: 2 }, age: 3, name: 'x', id: 'p1' },
          { age: 4, id: 'p2', friend: { a: 5, b: 6 }, name: 'y' },
        ],
      },
    };
    const out = inSelectionOrder(data, doc, 'Q');
    expect(out).toEqual(data);
    expect(keys(out)).toEqual([
      {
        page: [
          {
            nodes: [
              ['id', 'name', 'age', { friend: ['b', 'a'] }],
              ['id', 'name', 'age', { friend: ['b', 'a'] }],
            ],
          },
          'total',
        ],
      },
    ]);
  });

  it('keeps keys the selection does not name after the others, and picks the named operation', () => {
    const doc = parse('query A { x } query B { b a }');
    expect(keys(inSelectionOrder({ extra: 1, a: 1, b: 2 }, doc, 'B'))).toEqual(['b', 'a', 'extra']);
  });
});
