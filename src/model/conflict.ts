/**
 * Merge conflicts: the closed set of kinds, and paginated reports with
 * counts per kind. A conflict is a value returned by a merge, never thrown.
 */
import type { Row, Value } from './values.js';

/** Every kind of merge conflict, in report order. */
export const CONFLICT_KINDS = ['DivergentInsert', 'DivergentUpdate', 'DeleteVsUpdate', 'OrphanEdge', 'UniqueViolation', 'CardinalityViolation', 'ValueConstraintViolation', 'SchemaConflict'] as const;
/** A kind of merge conflict. */
export type ConflictKind = (typeof CONFLICT_KINDS)[number];

/** One merge conflict: its kind, the entity (and property) and the values at the base and on each side. */
export interface Conflict {
  kind: ConflictKind;
  table: string;
  key: string;
  /** The property concerned, where one applies. */
  property: string | null;
  /** Values at the merge base, on the source and on the target: a property value or a whole row; null when absent. */
  base: Value | Row | null;
  source: Value | Row | null;
  target: Value | Row | null;
  message: string;
}

/** A page of a merge's conflicts, with counts per kind over all of them and a cursor to the next page. */
export interface ConflictReport {
  total: number;
  counts: Record<ConflictKind, number>;
  items: Conflict[];
  /** Pass back to get the next page; null on the last page. */
  nextCursor: string | null;
}

/** Canonical order of conflicts: table, key, kind, property. */
export function compareConflicts(a: Conflict, b: Conflict): number {
  const pairs: [string, string][] = [
    [a.table, b.table],
    [a.key, b.key],
    [a.kind, b.kind],
    [a.property ?? '', b.property ?? ''],
  ];
  for (const [x, y] of pairs) if (x !== y) return x < y ? -1 : 1;
  return 0;
}

export function conflictCounts(conflicts: readonly Conflict[]): Record<ConflictKind, number> {
  const counts = Object.fromEntries(CONFLICT_KINDS.map((k) => [k, 0])) as Record<ConflictKind, number>;
  for (const c of conflicts) counts[c.kind]++;
  return counts;
}

/** One page of a report; the cursor is the offset, so pages are stable for a given conflict list. */
export function conflictPage(conflicts: readonly Conflict[], limit: number, cursor: string | null | undefined): ConflictReport {
  const start = cursor === null || cursor === undefined || cursor === '' ? 0 : Number.parseInt(cursor, 10);
  const from = Number.isFinite(start) && start > 0 ? start : 0;
  const items = conflicts.slice(from, from + limit);
  const next = from + items.length;
  return { total: conflicts.length, counts: conflictCounts(conflicts), items, nextCursor: next < conflicts.length ? String(next) : null };
}
