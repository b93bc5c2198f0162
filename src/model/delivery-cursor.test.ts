import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeliveryCursor } from './delivery-cursor.js';

describe('delivery cursors', () => {
  it('never pass an event still outstanding, and reach the highest once all settled', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 1, max: 200 }), { minLength: 1, maxLength: 40 }),
        fc.infiniteStream(fc.boolean()),
        (seqs, coin) => {
          const c = new DeliveryCursor(0);
          const open = new Set<number>();
          const it = coin[Symbol.iterator]();
          for (const s of seqs) {
            c.offered(s);
            open.add(s);
            for (const o of [...open])
              if (it.next().value === true) {
                c.settled(o);
                open.delete(o);
              }
            for (const o of open) expect(c.position).toBeLessThan(o);
          }
          for (const o of open) c.settled(o);
          expect(c.position).toBe(Math.max(...seqs));
        },
      ),
    );
  });
});
