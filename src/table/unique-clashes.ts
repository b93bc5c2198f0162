/**
 * Finding @unique clashes for a set of changed rows: first among the
 * changed rows themselves, then against every other live row of the table
 * (one streaming pass; there is no secondary index yet). Writes report the
 * clashes as constraint violations, merges as UniqueViolation conflicts.
 */
import { canonicalJson } from '../model/canonical.js';
import type { PropDef } from '../model/schema.js';
import type { Row } from '../model/values.js';
import type { RunRow } from './run.js';

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

export async function* uniqueClashes(uniques: readonly PropDef[], changed: ReadonlyMap<string, Row | null>, table: AsyncIterable<RunRow>): AsyncGenerator<UniqueClash> {
  if (uniques.length === 0) return;
  const claimed = new Map<string, string>();
  for (const [key, row] of changed) {
    if (row === null) continue;
    for (const p of uniques) {
      const v = row[p.name];
      if (v === null || v === undefined) continue;
      const value = canonicalJson(v);
      const id = `${p.name}\u0000${value}`;
      const other = claimed.get(id);
      if (other !== undefined) yield { key, property: p.name, value, other, otherChanged: true };
      else claimed.set(id, key);
    }
  }
  if (claimed.size === 0) return;
  for await (const r of table) {
    if (changed.has(r.key)) continue;
    for (const p of uniques) {
      const v = r.props?.[p.name];
      if (v === null || v === undefined) continue;
      const value = canonicalJson(v);
      const holder = claimed.get(`${p.name}\u0000${value}`);
      if (holder !== undefined) yield { key: holder, property: p.name, value, other: r.key, otherChanged: false };
    }
  }
}
