import { decodeTime, isValid } from 'ulid';
import { describe, expect, it } from 'vitest';
import { monotonicIds, newId } from './new-id.js';

describe('newId', () => {
  it('makes valid ULIDs carrying the time given, all distinct across many pool refills', () => {
    const ids = Array.from({ length: 5000 }, () => newId(1_700_000_000_000));
    expect(ids.every((id) => isValid(id) && decodeTime(id) === 1_700_000_000_000)).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('uses every random character: no position is stuck across ids', () => {
    const ids = Array.from({ length: 2000 }, () => newId(0));
    for (let at = 10; at < 26; at++) expect(new Set(ids.map((id) => id[at])).size).toBeGreaterThan(16);
  });

  it('monotonic ids sort in the order they were made within one millisecond', () => {
    const next = monotonicIds();
    const ids = Array.from({ length: 1000 }, () => next(42));
    expect([...ids].sort()).toEqual(ids);
  });
});
