/** The explorer's routes: every route survives the hash it is written as, whatever its text. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_REF, formatRoute, orderOf, parseRoute, type Route } from './route.js';

const text = fc.string({ minLength: 1, maxLength: 30 });
/** Refs with dots where they are most confusing: around the `...` a person types. */
const dotted = fc.oneof(text, fc.constantFrom('.', '..', 'a.', '.b', 'x...y', '...'));
const route: fc.Arbitrary<Route> = fc.oneof(
  fc.record({ view: fc.constant('home' as const), at: text }),
  fc.record(
    { view: fc.constant('table' as const), at: text, table: text, where: text, order: text },
    { requiredKeys: ['view', 'at', 'table'] },
  ),
  fc.record({ view: fc.constant('entity' as const), at: text, table: text, key: fc.string({ maxLength: 30 }) }),
  fc.record({ view: fc.constant('diff' as const), from: dotted, to: fc.oneof(dotted, fc.constant('')) }),
);

describe('explorer routes', () => {
  it('read back every route they were written from', () => {
    fc.assert(
      fc.property(route, (r) => {
        expect(parseRoute(formatRoute(r))).toEqual(r);
      }),
    );
  });

  it('read an empty or partial hash as main', () => {
    expect(parseRoute('')).toEqual({ view: 'home', at: DEFAULT_REF });
    expect(parseRoute('#table=')).toEqual({ view: 'home', at: DEFAULT_REF });
    expect(parseRoute('#diff=main')).toEqual({ view: 'diff', from: 'main', to: '' });
    // As a person types it: split at the first `...`.
    expect(parseRoute('#diff=main...feature')).toEqual({ view: 'diff', from: 'main', to: 'feature' });
    expect(parseRoute('#diff=v1.2...v1.3...x')).toEqual({ view: 'diff', from: 'v1.2', to: 'v1.3...x' });
  });

  it('spell an order with a trailing minus for descending', () => {
    expect(orderOf('age-')).toEqual([{ prop: 'age', direction: 'desc' }]);
    expect(orderOf('age')).toEqual([{ prop: 'age', direction: 'asc' }]);
    expect(orderOf(undefined)).toBeUndefined();
  });
});
