/**
 * Paging a diff: the per-table counts of the whole diff, and one page of
 * its changes in (table, key) order. A page ends after `limit` changes;
 * its cursor names the last (table, key) it holds. A cursor is bound to the
 * diff that made it (`scope`: the two commits it read and the mode), so the
 * next page is of exactly that state: ask with the commits the first page
 * reports (or with refs that still resolve to them); a cursor passed with
 * refs that moved, or to another diff, is `invalid_input`. Pure: no I/O.
 */
import { decodePageCursor, encodePageCursor } from '../model/page-cursor.js';
import { BranchgraphError } from '../model/errors.js';
import type { TableDiff } from './reads.js';

/** What changed in one table, counted over the whole diff. */
export interface DiffSummary {
  table: string;
  inserted: number;
  updated: number;
  deleted: number;
}

export interface DiffPage {
  /** This page's changes, grouped per table as in a whole diff. */
  tables: TableDiff[];
  summary: DiffSummary[];
  nextCursor: string | null;
}

export const MAX_DIFF_PAGE = 10_000;

function encode(scope: string, table: string, key: string): string {
  return encodePageCursor('diff', scope, JSON.stringify([table, key]));
}

function decode(scope: string, cursor: string): [string, string] {
  const pos = JSON.parse(decodePageCursor('diff', scope, cursor)) as unknown;
  if (!Array.isArray(pos) || pos.length !== 2 || typeof pos[0] !== 'string' || typeof pos[1] !== 'string') {
    throw new BranchgraphError('invalid_input', 'invalid cursor', { issues: [{ path: 'cursor', message: 'not a diff cursor' }] });
  }
  return pos as [string, string];
}

type Change = { table: string; key: string; put: (d: TableDiff) => void };

/** The page of `diff` after `cursor` (from the start without one), at most `limit` changes (all when undefined). */
export function pageDiff(diff: readonly TableDiff[], opts: { limit?: number; cursor?: string; scope?: string } = {}): DiffPage {
  const { limit } = opts;
  const scope = opts.scope ?? '';
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_DIFF_PAGE)) {
    throw new BranchgraphError('invalid_input', `limit must be an integer from 1 to ${MAX_DIFF_PAGE}`, {
      issues: [{ path: 'limit', message: `1..${MAX_DIFF_PAGE}` }],
    });
  }
  const after = opts.cursor === undefined ? undefined : decode(scope, opts.cursor);
  const summary = diff.map((t) => ({ table: t.table, inserted: t.inserted.length, updated: t.updated.length, deleted: t.deleted.length }));
  const changes: Change[] = [];
  for (const t of diff) {
    for (const r of t.inserted) changes.push({ table: t.table, key: r.key, put: (d) => d.inserted.push(r) });
    for (const r of t.updated) changes.push({ table: t.table, key: r.key, put: (d) => d.updated.push(r) });
    for (const r of t.deleted) changes.push({ table: t.table, key: r.key, put: (d) => d.deleted.push(r) });
  }
  // Tables are in name order already; within one, keys in the run order that every layer uses.
  changes.sort((a, b) => (a.table === b.table ? (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) : a.table < b.table ? -1 : 1));
  const start = after === undefined ? 0 : changes.findIndex((c) => c.table > after[0] || (c.table === after[0] && c.key > after[1]));
  const from = start < 0 ? changes.length : start;
  const end = limit === undefined ? changes.length : Math.min(changes.length, from + limit);
  const tables = new Map<string, TableDiff>();
  for (const c of changes.slice(from, end)) {
    let d = tables.get(c.table);
    if (d === undefined) {
      d = { table: c.table, inserted: [], updated: [], deleted: [] };
      tables.set(c.table, d);
    }
    c.put(d);
  }
  const last = changes[end - 1];
  return {
    tables: [...tables.values()],
    summary,
    nextCursor: end < changes.length && last !== undefined ? encode(scope, last.table, last.key) : null,
  };
}
