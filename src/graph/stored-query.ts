/**
 * Changing a branch's stored queries: one commit each, of kind `schema`,
 * since the queries are part of the branch's schema document
 * (model/schema.ts `StoredQueryIR`). The tables are untouched. Putting the
 * query a branch already holds, or deleting one it does not, publishes
 * nothing.
 */
import { BranchgraphError } from '../model/errors.js';
import { canonicalJson } from '../model/canonical.js';
import type { Schema, StoredQuery } from '../model/schema.js';
import type { PlanResult } from './change.js';
import type { Snapshot } from './snapshot.js';

/** What changing a stored query answers: the query as it now stands (null once deleted). */
export interface StoredQueryChange {
  query: StoredQuery | null;
}

/** The plan that puts `query` (or, with null, deletes `name`) on the branch's schema. */
export function planStoredQuery(head: Snapshot, change: { name: string; query: StoredQuery | null }): PlanResult<StoredQueryChange> {
  const { name, query } = change;
  const before = head.schema.queries ?? [];
  const current = before.find((q) => q.name === name);
  if (query === null && current === undefined)
    throw new BranchgraphError('not_found', `branch ${head.branch?.name ?? ''} stores no query ${name}`, {
      details: { branch: head.branch?.name },
    });
  if (query !== null && current !== undefined && canonicalJson(current) === canonicalJson(query)) return { unchanged: { query } };
  const queries = [...before.filter((q) => q.name !== name), ...(query === null ? [] : [query])].sort((a, b) => (a.name < b.name ? -1 : 1));
  const { queries: _, ...types } = head.schema;
  const schema: Schema = queries.length === 0 ? types : { ...types, queries };
  return {
    kind: 'schema',
    schema,
    tables: {},
    scratch: [],
    result: { query },
    message: query === null ? `delete stored query ${name}` : `store query ${name}`,
  };
}
