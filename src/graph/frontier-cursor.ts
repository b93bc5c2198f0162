/**
 * Cursors for history walks (the commit log, an entity's history): the
 * walk's frontier, the commits still to examine, is all a next page needs.
 * Bound to the query's scope like every page cursor (model/page-cursor.ts).
 */
import { z } from 'zod';
import { BranchgraphError } from '../model/errors.js';
import { decodePageCursor, encodePageCursor } from '../model/page-cursor.js';
import type { ManifestRef } from './manifest.js';

const FrontierZ = z.array(z.tuple([z.string().min(1).max(64), z.number().int().min(1)])).min(1);

/** The cursor for `frontier`, or null when it is empty (the walk is done). */
export function encodeFrontier(kind: 'log' | 'history', scope: string, frontier: readonly ManifestRef[]): string | null {
  if (frontier.length === 0) return null;
  return encodePageCursor(kind, scope, JSON.stringify(frontier.map((r) => [r.lineage, r.version])));
}

export function decodeFrontier(kind: 'log' | 'history', scope: string, cursor: string): ManifestRef[] {
  const text = decodePageCursor(kind, scope, cursor);
  let parsed: z.infer<typeof FrontierZ>;
  try {
    parsed = FrontierZ.parse(JSON.parse(text));
  } catch {
    throw new BranchgraphError('invalid_input', 'invalid cursor', {
      issues: [{ path: 'cursor', message: 'not a cursor this server made' }],
    });
  }
  return parsed.map(([lineage, version]) => ({ lineage, version }));
}
