/**
 * Every operation, by name. The REST routes (http/operation-routes.ts), the
 * REST client, the embedded API (api.ts), the GraphQL resolvers and the
 * CLI's calls are all built from this one table, and so is `openapi.yaml`
 * (`npm run contracts`); `test/contracts.test.ts` holds the SDL to it. Adding an operation is one file
 * under operations/ and one line here (see docs/architecture.md).
 */
import { listBranches } from './operations/branches/list-branches.js';
import { getBranch } from './operations/branches/get-branch.js';
import { createBranch } from './operations/branches/create-branch.js';
import { deleteBranch } from './operations/branches/delete-branch.js';
import { resetBranch } from './operations/branches/reset-branch.js';
import { protectBranch } from './operations/branches/protect-branch.js';
import { unprotectBranch } from './operations/branches/unprotect-branch.js';
import { listTags } from './operations/tags/list-tags.js';
import { getTag } from './operations/tags/get-tag.js';
import { createTag } from './operations/tags/create-tag.js';
import { deleteTag } from './operations/tags/delete-tag.js';
import { mergeBranch } from './operations/merges/merge-branch.js';
import { cherryPick } from './operations/merges/cherry-pick.js';
import { revert } from './operations/merges/revert.js';
import { write } from './operations/writes/write.js';
import { load } from './operations/writes/load.js';
import { ingest } from './operations/wal/ingest.js';
import { catchUp } from './operations/wal/catch-up.js';
import { walStatus } from './operations/wal/wal-status.js';
import { getSchema } from './operations/schema/get-schema.js';
import { applySchema } from './operations/schema/apply-schema.js';
import { rows } from './operations/tables/rows.js';
import { getRow } from './operations/tables/get-row.js';
import { edges } from './operations/tables/edges.js';
import { exportTable } from './operations/tables/export-table.js';
import { entityHistory } from './operations/tables/entity-history.js';
import { blame } from './operations/tables/blame.js';
import { queryRows } from './operations/tables/query-rows.js';
import { lookupRows } from './operations/tables/lookup-rows.js';
import { neighbors } from './operations/tables/neighbors.js';
import { search } from './operations/tables/search.js';
import { aggregate } from './operations/tables/aggregate.js';
import { neighborhood } from './operations/walks/neighborhood.js';
import { shortestPath } from './operations/walks/shortest-path.js';
import { paths } from './operations/walks/paths.js';
import { listTables } from './operations/tables/list-tables.js';
import { openMergeRequest } from './operations/requests/open-merge-request.js';
import { listMergeRequests } from './operations/requests/list-merge-requests.js';
import { getMergeRequest } from './operations/requests/get-merge-request.js';
import { reviseMergeRequest } from './operations/requests/revise-merge-request.js';
import { reviewMergeRequest } from './operations/requests/review-merge-request.js';
import { setMergeRequestResolutions } from './operations/requests/set-merge-request-resolutions.js';
import { mergeMergeRequest } from './operations/requests/merge-merge-request.js';
import { closeMergeRequest } from './operations/requests/close-merge-request.js';
import { runMergeRequestChecks } from './operations/requests/run-merge-request-checks.js';
import { listEvents } from './operations/events/list-events.js';
import { createHook } from './operations/hooks/create-hook.js';
import { listHooks } from './operations/hooks/list-hooks.js';
import { deleteHook } from './operations/hooks/delete-hook.js';
import { listHookDeadLetters } from './operations/hooks/list-hook-dead-letters.js';
import { redeliverHookDeadLetter } from './operations/hooks/redeliver-hook-dead-letter.js';
import { log } from './operations/history/log.js';
import { commit } from './operations/history/commit.js';
import { diff } from './operations/history/diff.js';
import { mergeBase } from './operations/history/merge-base.js';
import { compact } from './operations/admin/compact.js';
import { gc } from './operations/admin/gc.js';
import { expireBranches } from './operations/admin/expire-branches.js';
import { createToken } from './operations/tokens/create-token.js';
import { listStoredQueries } from './operations/queries/list-stored-queries.js';
import { putStoredQuery } from './operations/queries/put-stored-query.js';
import { deleteStoredQuery } from './operations/queries/delete-stored-query.js';
import { runStoredQuery } from './operations/queries/run-stored-query.js';
import { listTokens } from './operations/tokens/list-tokens.js';
import { whoami } from './operations/tokens/whoami.js';
import { deleteToken } from './operations/tokens/delete-token.js';
import { listOperations } from './operations/admin/list-operations.js';
import { getOperation } from './operations/admin/get-operation.js';
import { listRemotes } from './operations/remotes/list-remotes.js';
import { setRemote } from './operations/remotes/set-remote.js';
import { deleteRemote } from './operations/remotes/delete-remote.js';
import { fetchRemote } from './operations/remotes/fetch-remote.js';
import { pushBranch } from './operations/remotes/push-branch.js';
import type { Operation } from './operation.js';

/** Every operation by its name: the API's methods, the REST routes and the GraphQL fields all come from here. */
export const OPERATIONS = {
  listBranches,
  getBranch,
  createBranch,
  deleteBranch,
  resetBranch,
  protectBranch,
  unprotectBranch,
  listTags,
  getTag,
  createTag,
  deleteTag,
  listRemotes,
  setRemote,
  deleteRemote,
  fetchRemote,
  pushBranch,
  mergeBranch,
  cherryPick,
  revert,
  write,
  load,
  ingest,
  catchUp,
  walStatus,
  getSchema,
  applySchema,
  listStoredQueries,
  putStoredQuery,
  deleteStoredQuery,
  runStoredQuery,
  rows,
  getRow,
  edges,
  exportTable,
  entityHistory,
  blame,
  queryRows,
  lookupRows,
  neighbors,
  search,
  aggregate,
  neighborhood,
  shortestPath,
  paths,
  listTables,
  openMergeRequest,
  listMergeRequests,
  getMergeRequest,
  reviseMergeRequest,
  reviewMergeRequest,
  setMergeRequestResolutions,
  mergeMergeRequest,
  closeMergeRequest,
  runMergeRequestChecks,
  listEvents,
  createHook,
  listHooks,
  deleteHook,
  listHookDeadLetters,
  redeliverHookDeadLetter,
  log,
  commit,
  diff,
  mergeBase,
  compact,
  gc,
  expireBranches,
  createToken,
  listTokens,
  whoami,
  deleteToken,
  listOperations,
  getOperation,
} as const;

/** The table's type: each operation with its own input and result types. */
export type Operations = typeof OPERATIONS;
/** An operation's name, as the API, the CLI's `call` and the operationIds spell it. */
export type OperationName = keyof Operations;

/** The table as a list, for the edges that walk it. */
export const OPERATION_LIST: readonly Operation[] = Object.values(OPERATIONS) as readonly Operation[];
