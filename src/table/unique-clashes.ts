/**
 * Finding @unique clashes for a set of changed rows: first among the
 * changed rows themselves, then against the other live rows of the table,
 * found by value (`UniqueHolders`: the property's secondary index, or one
 * scan where none is usable). Writes report the clashes as constraint
 * violations, merges as UniqueViolation conflicts.
 */
import type { PropDef } from '../model/schema.js';
import type { Row } from '../model/values.js';
import { compareKey } from './run.js';
import { encodeUnique } from './secondary-index.js';

export interface UniqueClash {
  /** The changed row that cannot keep its value. */
  key: string;
  property: string;
  /** Canonical JSON of the shared value. */
  value: string;
  /** The other row holding the value. */
  other: string;
  /** Whether the other row is also among the changed rows. */
  otherChanged: boolean;
}

/** Live keys of the table holding each encoded value of `prop` (see `encodeUnique`). */
export type UniqueHolders = (prop: PropDef, values: string[]) => Promise<Map<string, string[]>>;

export async function uniqueClashes(a: {
  uniques: readonly PropDef[];
  /** The changed rows (null where deleted), and whether a key is among them. */
  changed: Iterable<[string, Row | null]> & { has(key: string): boolean };
  holdersOf: UniqueHolders;
  /**
   * Whether `key` held this encoded value of `prop` just before the change. In a valid table no
   * other row holds it then, so only the changed rows can clash over it: its holders are not
   * looked up (an update that leaves a @unique property as it was reads no index).
   */
  heldBefore?: ((key: string, prop: string, value: string) => boolean) | undefined;
}): Promise<UniqueClash[]> {
  const { uniques, changed, holdersOf, heldBefore } = a;
  const out: UniqueClash[] = [];
  if (uniques.length === 0) return out;
  const claimed = uniques.map(() => new Map<string, string>());
  const unheld = uniques.map(() => new Set<string>());
  for (const [key, row] of changed) {
    if (row === null) continue;
    for (const [i, p] of uniques.entries()) {
      const v = row[p.name];
      if (v === null || v === undefined) continue;
      const value = encodeUnique(v);
      const mine = claimed[i] as Map<string, string>;
      const other = mine.get(value);
      if (other !== undefined) out.push({ key, property: p.name, value, other, otherChanged: true });
      else mine.set(value, key);
      if (heldBefore?.(key, p.name, value) !== true) unheld[i]?.add(value);
    }
  }
  const held: UniqueClash[] = [];
  for (const [i, p] of uniques.entries()) {
    const mine = claimed[i] as Map<string, string>;
    const ask = [...mine.keys()].filter((v) => unheld[i]?.has(v));
    if (ask.length === 0) continue;
    for (const [value, keys] of await holdersOf(p, ask)) {
      for (const other of keys)
        if (!changed.has(other)) held.push({ key: mine.get(value) as string, property: p.name, value, other, otherChanged: false });
    }
  }
  // In the order a scan of the table meets the other rows, as reports always listed them.
  const order = new Map(uniques.map((p, i) => [p.name, i]));
  held.sort((a, b) => compareKey(a.other, b.other) || (order.get(a.property) as number) - (order.get(b.property) as number));
  return [...out, ...held];
}
