/**
 * Conflict reports: a bounded collector, fed conflicts in any order, gives
 * exactly the page (and the totals) that sorting every conflict would.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodePageCursor } from './page-cursor.js';
import { compareConflicts, CONFLICT_KINDS, ConflictCollector, conflictPage, conflictWindow, type Conflict } from './conflict.js';

const conflict = fc
  .record({
    kind: fc.constantFrom(...CONFLICT_KINDS),
    table: fc.constantFrom('A', 'B'),
    key: fc.constantFrom('k1', 'k2', 'k3', 'k4'),
    property: fc.option(fc.constantFrom('p', 'q'), { nil: null }),
  })
  .map((c): Conflict => ({ ...c, base: null, source: null, target: null, message: '' }));

describe('conflict reports', () => {
  it('hold one page, count every conflict, and page exactly as the whole sorted list does', () => {
    fc.assert(
      fc.property(
        fc.array(conflict, { maxLength: 80 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 0, max: 90 }),
        (all, limit, offset) => {
          const cursor = offset === 0 ? undefined : encodePageCursor('conflicts', 'm', String(offset));
          const col = new ConflictCollector(conflictWindow(limit, cursor, 'm'));
          col.addAll(all);
          expect(col.kept().length).toBeLessThanOrEqual(offset + limit);
          const bounded = conflictPage({ conflicts: col, limit, cursor, scope: 'm' });
          const whole = conflictPage({ conflicts: all, limit, cursor, scope: 'm' });
          expect(bounded).toEqual(whole);
          expect(whole.items).toEqual([...all].sort(compareConflicts).slice(offset, offset + limit));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('regression: a cursor of another merge, an edited offset or a bare number is invalid_input, never a silently wrong page', () => {
    const next = conflictPage({ conflicts: [], limit: 1, scope: 'm' }).nextCursor;
    expect(next).toBeNull();
    const mine = encodePageCursor('conflicts', 'm', '5');
    expect(conflictWindow(10, mine, 'm')).toBe(15);
    for (const bad of [
      '5',
      'abc',
      encodePageCursor('conflicts', 'other merge', '5'),
      encodePageCursor('rows', 'm', '5'),
      mine.replace(/\.[^.]+\./, '.OTk5.'),
    ]) {
      expect(() => conflictWindow(10, bad, 'm'), bad).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    }
  });
});
