/**
 * Paging a diff: the per-table counts of the whole diff, and one page of
 * its changes in (table, key) order. A page ends after `limit` changes;
 * its cursor names the last (table, key) it holds, so the next page starts
 * right after it even if the refs' heads moved in between (pin both refs
 * to the commits a page reports to read one state). Pure: no I/O.
 */
import { contentHash } from '../model/canonical.js';
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

const CURSOR = 'd1';

function check(body: string): string {
  return contentHash(`${CURSOR}:${body}`).slice(0, 12);
}

function encode(table: string, key: string): string {
  const body = Buffer.from(JSON.stringify([table, key]), 'utf8').toString('base64url');
  return `${CURSOR}.${body}.${check(body)}`;
}

function decode(cursor: string): [string, string] {
  const m = /^d1\.([A-Za-z0-9_-]{1,8000})\.([0-9a-f]{12})$/.exec(cursor);
  if (m === null || check(m[1] as string) !== m[2]) {
    throw new BranchgraphError('invalid_input', 'invalid cursor: pass back a nextCursor from a previous page of this diff', { issues: [{ path: 'cursor', message: 'not a diff cursor' }] });
  }
  return JSON.parse(Buffer.from(m[1] as string, 'base64url').toString('utf8')) as [string, string];
}

type Change = { table: string; key: string; put: (d: TableDiff) => void };

/** The page of `diff` after `cursor` (from the start without one), at most `limit` changes (all when undefined). */
export function pageDiff(diff: readonly TableDiff[], opts: { limit?: number; cursor?: string } = {}): DiffPage {
  const { limit } = opts;
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1 || limit > MAX_DIFF_PAGE)) {
    throw new BranchgraphError('invalid_input', `limit must be an integer from 1 to ${MAX_DIFF_PAGE}`, { issues: [{ path: 'limit', message: `1..${MAX_DIFF_PAGE}` }] });
  }
  const after = opts.cursor === undefined ? undefined : decode(opts.cursor);
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
  return { tables: [...tables.values()], summary, nextCursor: end < changes.length && last !== undefined ? encode(last.table, last.key) : null };
}
