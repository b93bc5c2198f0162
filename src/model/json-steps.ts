/**
 * JSON text of plain data in steps: the text `JSON.stringify` gives (no
 * indentation), as pieces, a step per item of a long array. One call of
 * `JSON.stringify` encodes its whole argument: a type list of an
 * introspection answer holds a root type whose thousands of fields are
 * several megabytes of text, tens of milliseconds in one call. Here a long
 * array's items, and the members of an object that holds one, are encoded
 * one by one, so no call encodes more than one item of a long array.
 *
 * Plain data: objects, arrays, strings, numbers, booleans and null, as
 * results and parsed JSON hold (no `toJSON`, cycles or bigints). Members
 * whose value is undefined are left out and undefined items are `null`, as
 * `JSON.stringify` has them.
 */
import type { Steps } from './steps.js';

/** Arrays longer than this are encoded an item at a time. */
const LONG = 64;
/** How deep under an object or a short array a long array is looked for. */
const DEPTH = 3;

/** Is `value` a long array, or does it hold one, up to `depth` levels down? */
function holdsLong(value: unknown, depth: number): boolean {
  if (Array.isArray(value) && value.length > LONG) return true;
  if (value === null || typeof value !== 'object' || depth === 0) return false;
  for (const v of Object.values(value)) if (holdsLong(v, depth - 1)) return true;
  return false;
}

/** `value`'s JSON text appended to `out` in pieces, a step per item of each long array in it. */
export function* jsonSteps(value: unknown, out: string[]): Steps<void> {
  if (!holdsLong(value, DEPTH)) {
    out.push(JSON.stringify(value) ?? 'null');
    return;
  }
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      yield* jsonSteps(value[i] ?? null, out);
      yield;
    }
    out.push(']');
    return;
  }
  out.push('{');
  let first = true;
  for (const [k, v] of Object.entries(value as object)) {
    if (v === undefined) continue;
    out.push(`${first ? '' : ','}${JSON.stringify(k)}:`);
    first = false;
    yield* jsonSteps(v, out);
  }
  out.push('}');
}
