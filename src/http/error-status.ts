/**
 * How the REST transport shows each public error code: its HTTP status.
 * Internal codes never reach here (`publicError` turns them into `internal`).
 */
import type { PublicErrorCode } from '../model/errors.js';

export const HTTP_STATUS = {
  invalid_input: 400,
  schema_invalid: 400,
  schema_incompatible: 409,
  constraint_violation: 422,
  not_found: 404,
  ambiguous_ref: 400,
  branch_exists: 409,
  branch_protected: 409,
  request_not_mergeable: 409,
  graph_exists: 409,
  tag_exists: 409,
  head_moved: 409,
  non_fast_forward: 409,
  payload_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  quota_exceeded: 403,
  publish_contention: 409,
  resolution_stale: 409,
  // As nginx does: the client closed the request.
  aborted: 499,
  store_unavailable: 503,
  store_error: 500,
  corrupt_object: 500,
  shutting_down: 503,
  overloaded: 503,
  internal: 500,
  // Never sent: clients raise it when no server answered.
  server_unreachable: 503,
  // Failed Dependency: the request was sound, another system it depends on did not answer.
  remote_unreachable: 424,
  publisher_unreachable: 503,
  embedding_failed: 424,
} as const satisfies Record<PublicErrorCode, number>;
