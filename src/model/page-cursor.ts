/**
 * Page cursors: opaque, versioned, checksummed and bound to the query that
 * made them.
 *
 * A cursor carries where the last page ended (a key, a (table, key) pair, an
 * offset) and a check over that position, the cursor's kind and the query's
 * scope (the table and filter of a row scan, the refs and mode of a diff,
 * the source and target of a conflict report). Anything this server did not
 * issue for the same query (`AAAA`, an edited offset, a rows cursor passed
 * to a diff, a cursor of one filter passed with another) is `invalid_input`,
 * never a silently wrong page. Pure: the check is a content hash.
 */
import { contentHash } from './canonical.js';
import { BranchgraphError } from './errors.js';

export type CursorKind = 'rows' | 'query' | 'diff' | 'conflicts' | 'branches' | 'log' | 'history';
const PREFIX: Record<CursorKind, string> = {
  rows: 'c2',
  query: 'q2',
  diff: 'd2',
  conflicts: 'k2',
  branches: 'b2',
  log: 'l2',
  history: 'h2',
};
/** A cursor's position is at most this many characters once encoded (keys are at most 1 KiB). */
const MAX_BODY = 8000;

function check(kind: CursorKind, scope: string, body: string): string {
  return contentHash(`${PREFIX[kind]}:${scope}:${body}`).slice(0, 12);
}

export function encodePageCursor(kind: CursorKind, scope: string, position: string): string {
  const body = Buffer.from(position, 'utf8').toString('base64url');
  return `${PREFIX[kind]}.${body}.${check(kind, scope, body)}`;
}

/** The position a cursor names, if this server made it for this kind of page and this scope. */
export function decodePageCursor(kind: CursorKind, scope: string, cursor: string): string {
  const parts = cursor.split('.');
  const [prefix, body, sum] = parts;
  if (
    parts.length !== 3 ||
    prefix !== PREFIX[kind] ||
    body === undefined ||
    body.length > MAX_BODY ||
    !/^[A-Za-z0-9_-]*$/.test(body) ||
    sum !== check(kind, scope, body)
  ) {
    throw new BranchgraphError('invalid_input', 'invalid cursor: pass back a nextCursor from a previous page of this same query', {
      issues: [{ path: 'cursor', message: `not a ${kind} cursor of this query` }],
    });
  }
  return Buffer.from(body, 'base64url').toString('utf8');
}
