/**
 * JSON text of plain data in steps: the text `JSON.stringify` gives (no
 * indentation), as pieces. One call of `JSON.stringify` encodes its whole
 * argument: a type list of an introspection answer holds a root type whose
 * thousands of fields are several megabytes of text, and a read of 15 large
 * rows is 15 MB, tens of milliseconds in one call. Here a large array or
 * object (PIECE characters of text or more) is encoded an item or a member
 * at a time, each of them the same way, so no call encodes more than one
 * small value or one long string.
 *
 * Plain data: objects, arrays, strings, numbers, booleans and null, as
 * results and parsed JSON hold (no `toJSON`, cycles or bigints). Members
 * whose value is undefined are left out and undefined items are `null`, as
 * `JSON.stringify` has them.
 */
import type { Steps } from './steps.js';

/** Values whose text is at least this long are encoded a member at a time. */
export const PIECE = 64 * 1024;

/**
 * About how long `value`'s JSON text is (escapes aside), up to `cap`: the walk stops as soon as it
 * has counted `cap`, so a large value costs no more than a small one.
 */
export function jsonLengthUpTo(value: unknown, cap: number): number {
  let length = 0;
  const walk = (v: unknown): void => {
    if (typeof v === 'string') length += v.length + 2;
    else if (v === null || typeof v !== 'object') length += 8;
    else if (Array.isArray(v)) {
      length += 2 + v.length;
      for (const x of v) if (length < cap) walk(x);
    } else {
      length += 2;
      for (const k in v) {
        length += k.length + 4;
        if (length < cap) walk((v as Record<string, unknown>)[k]);
      }
    }
  };
  walk(value);
  return Math.min(length, cap);
}

/** Whether `value`'s JSON text is at least `n` characters long (jsonLengthUpTo). */
export function jsonLengthAtLeast(value: unknown, n: number): boolean {
  return jsonLengthUpTo(value, n) >= n;
}

/** `value`'s JSON text appended to `out` in pieces, a step per item or member of each large array or object in it. */
export function* jsonSteps(value: unknown, out: string[]): Steps<void> {
  if (value === null || typeof value !== 'object' || !jsonLengthAtLeast(value, PIECE)) {
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
    yield;
  }
  out.push('}');
}
