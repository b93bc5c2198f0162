/**
 * Errors as GraphQL answers them, for both schemas (the API's and the typed
 * one): a GraphQL error whose `extensions.code` is the stable code, with
 * whether a retry can help and the issues' field paths.
 */
import { GraphQLError, type ASTNode } from 'graphql';
import { isMasked, publicError, toBranchgraphError } from '../model/errors.js';
import type { RequestContext } from '../service/request-context.js';

export function toGraphqlError(e: unknown, ctx: RequestContext, nodes?: readonly ASTNode[]): GraphQLError {
  if (e instanceof GraphQLError) return e;
  const err = toBranchgraphError(e);
  // Built here, before Yoga's masking could apply: internal detail goes to the log, never to the client.
  if (isMasked(err)) ctx.log?.error({ err: e, code: err.code }, 'unexpected error');
  const shown = publicError(err, ctx.requestId);
  return new GraphQLError(shown.message, {
    ...(nodes !== undefined ? { nodes } : {}),
    extensions: { code: shown.code, retryable: shown.retryable, ...(shown.issues !== undefined ? { issues: shown.issues } : {}) },
  });
}
