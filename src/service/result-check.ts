/**
 * Holding results to their contracts as they are made. The compiler holds
 * what each operation's function returns to its result schema's type, but a
 * type allows fields it does not name, and values it cannot see (an empty
 * string where the contract asks for an id). A test run installs a check
 * that validates every result against the schema the OpenAPI document
 * publishes (test/support/result-check.ts), so every operation a test
 * exercises, over any transport, answers inside its contract. Production
 * runs without a check: it would cost every call a walk of its result.
 */
import type { Operation } from './operation.js';

/** Throws when `out` is outside `op`'s result contract. */
export type ResultCheck = (op: Operation, out: unknown) => void;

let installed: ResultCheck | undefined;

/** Check every result from now on with `check` (undefined: stop checking). */
export function checkResultsWith(check: ResultCheck | undefined): void {
  installed = check;
}

/** `out`, once the installed check (if any) has passed it. */
export function checkedResult<O>(op: Operation, out: O): O {
  installed?.(op, out);
  return out;
}
