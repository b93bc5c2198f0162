import { describe, expect, it } from 'vitest';
import { runSteps, type Steps } from './steps.js';
import { runStepsInSlices } from './turns.js';

/** Steps that note, at each unit, whether a callback queued before the run has run yet. */
function* noting(seen: boolean[], ran: () => boolean): Steps<number> {
  seen.push(ran());
  yield 'turn';
  seen.push(ran());
  yield;
  seen.push(ran());
  return 42;
}

describe('steps', () => {
  it('run in one go without giving the loop a turn', () => {
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    const seen: boolean[] = [];
    expect(runSteps(noting(seen, () => ran))).toBe(42);
    expect(seen).toEqual([false, false, false]);
  });

  it('run in slices give the loop a turn where a step asks for one, and after the last', async () => {
    let ran = 0;
    const queue = () =>
      setImmediate(() => {
        ran++;
      });
    queue();
    const seen: boolean[] = [];
    const done = runStepsInSlices(noting(seen, () => ran > 0));
    queue();
    expect(await done).toBe(42);
    // The first unit ran before any turn; the 'turn' let the queued callback run before the second.
    expect(seen.slice(0, 2)).toEqual([false, true]);
    expect(ran).toBe(2);
  });
});
