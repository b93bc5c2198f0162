/**
 * Work cut into steps: a generator that yields after each unit of work
 * (`'turn'` when the next unit is one large call that should start a slice
 * of its own) and returns its result. One implementation serves both kinds
 * of caller: `runSteps` here for one that must have the answer at once (and
 * for browser pages, which bundle this file), `runStepsInSlices`
 * (turns.ts) for a server that serves other requests meanwhile.
 */
export type Steps<T> = Generator<undefined | 'turn', T>;

/** The result of `steps`, run in one go. */
export function runSteps<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done === true) return r.value;
  }
}
