/**
 * Conflict reports: a bounded collector, fed conflicts in any order, gives
 * exactly the page (and the totals) that sorting every conflict would.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
      fc.property(fc.array(conflict, { maxLength: 80 }), fc.integer({ min: 1, max: 10 }), fc.integer({ min: 0, max: 90 }), (all, limit, offset) => {
        const cursor = offset === 0 ? undefined : String(offset);
        const col = new ConflictCollector(conflictWindow(limit, cursor));
        col.addAll(all);
        expect(col.kept().length).toBeLessThanOrEqual(offset + limit);
        const bounded = conflictPage(col, limit, cursor);
        const whole = conflictPage(all, limit, cursor);
        expect(bounded).toEqual(whole);
        expect(whole.items).toEqual([...all].sort(compareConflicts).slice(offset, offset + limit));
      }),
      { numRuns: 300 },
    );
  });
});
