/**
 * Merge conflicts: the closed set of kinds, and paginated reports with
 * counts per kind. A conflict is a value returned by a merge, never thrown.
 */
import { BranchgraphError } from './errors.js';
import { decodePageCursor, encodePageCursor } from './page-cursor.js';
import type { Row, Value } from './values.js';

/** Every kind of merge conflict, in report order. */
export const CONFLICT_KINDS = [
  'DivergentInsert',
  'DivergentUpdate',
  'DeleteVsUpdate',
  'OrphanEdge',
  'UniqueViolation',
  'CardinalityViolation',
  'ValueConstraintViolation',
  'SchemaConflict',
] as const;
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

/**
 * Conflicts as a merge finds them, in any order: every one counted (total and by kind), only the
 * first `keep` in canonical order held (a bounded max-heap), so a merge with millions of conflicts
 * holds one page's worth. A page at offset `from` of `limit` needs `keep = from + limit`.
 */
export class ConflictCollector {
  total = 0;
  readonly counts = Object.fromEntries(CONFLICT_KINDS.map((k) => [k, 0])) as Record<ConflictKind, number>;
  /** A max-heap by canonical order: the root is the greatest conflict held. */
  private readonly heap: Conflict[] = [];

  constructor(readonly keep: number = Number.POSITIVE_INFINITY) {}

  add(c: Conflict): void {
    this.total++;
    this.counts[c.kind]++;
    const h = this.heap;
    if (h.length < this.keep) {
      h.push(c);
      for (let i = h.length - 1; i > 0; ) {
        const up = (i - 1) >> 1;
        if (compareConflicts(h[i] as Conflict, h[up] as Conflict) <= 0) break;
        [h[i], h[up]] = [h[up] as Conflict, h[i] as Conflict];
        i = up;
      }
    } else if (h.length > 0 && compareConflicts(c, h[0] as Conflict) < 0) {
      h[0] = c;
      for (let i = 0; ; ) {
        const [l, r] = [2 * i + 1, 2 * i + 2];
        let big = i;
        if (l < h.length && compareConflicts(h[l] as Conflict, h[big] as Conflict) > 0) big = l;
        if (r < h.length && compareConflicts(h[r] as Conflict, h[big] as Conflict) > 0) big = r;
        if (big === i) break;
        [h[i], h[big]] = [h[big] as Conflict, h[i] as Conflict];
        i = big;
      }
    }
  }

  /**
   * Whether a conflict of this table and key could be among those held: false once the heap is full
   * and its greatest is an earlier key, so a caller may count the key's conflicts (`count`) without
   * describing them.
   */
  wants(table: string, key: string): boolean {
    const top = this.heap[0];
    if (this.heap.length < this.keep || top === undefined) return true;
    return table < top.table || (table === top.table && key <= top.key);
  }

  /** Count a conflict that cannot be held (see `wants`). */
  count(kind: ConflictKind): void {
    this.total++;
    this.counts[kind]++;
  }

  addAll(cs: readonly Conflict[]): void {
    for (const c of cs) this.add(c);
  }

  /** The conflicts held, in canonical order. */
  kept(): Conflict[] {
    return [...this.heap].sort(compareConflicts);
  }
}

/** How many conflicts a page at `cursor` (an offset) of `limit` needs held. */
export function conflictWindow(limit: number, cursor: string | null | undefined, scope = ''): number {
  return offsetOf(cursor, scope) + limit;
}

/** The offset a conflict cursor names; `scope` is the merge it was made for (model/page-cursor.ts), so another merge's cursor, or an edited one, is refused. */
function offsetOf(cursor: string | null | undefined, scope: string): number {
  if (cursor === null || cursor === undefined || cursor === '') return 0;
  const pos = decodePageCursor('conflicts', scope, cursor);
  const start = /^\d{1,9}$/.test(pos) ? Number(pos) : Number.NaN;
  if (!Number.isSafeInteger(start))
    throw new BranchgraphError('invalid_input', 'invalid cursor', {
      issues: [{ path: 'conflictCursor', message: 'not a conflict cursor' }],
    });
  return start;
}

/** One page of a report; the cursor names the offset, so pages are stable for a given set of conflicts. */
export function conflictPage(a: {
  conflicts: readonly Conflict[] | ConflictCollector;
  limit: number;
  cursor?: string | null | undefined;
  scope?: string | undefined;
}): ConflictReport {
  const { conflicts, limit, cursor, scope = '' } = a;
  const col = conflicts instanceof ConflictCollector ? conflicts : collectAll(conflicts);
  const from = offsetOf(cursor, scope);
  const items = col.kept().slice(from, from + limit);
  const next = from + items.length;
  return {
    total: col.total,
    counts: { ...col.counts },
    items,
    nextCursor: next < col.total ? encodePageCursor('conflicts', scope, String(next)) : null,
  };
}

function collectAll(conflicts: readonly Conflict[]): ConflictCollector {
  const col = new ConflictCollector();
  col.addAll(conflicts);
  return col;
}
