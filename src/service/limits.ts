/**
 * The bounds every transport enforces on input, in one table: what the REST
 * edge, the GraphQL edge and the operations' contracts check, and what the
 * documentation quotes.
 */
import { MAX_PAGE } from '../graph/reads.js';
import { MAX_BATCH_OPS } from '../graph/write-batch.js';
import { MAX_BATCH_KEYS } from '../graph/row-query.js';
import { MAX_CONFLICTS_PER_PAGE } from '../merge/merge.js';

/** The bounds every transport enforces on input: body and batch sizes, page sizes, GraphQL nesting, cost and aliases. */
export const LIMITS = {
  maxBodyBytes: 16 * 1024 * 1024,
  /** One number for every path, embedded included; the body limit bounds what a transport buffers. */
  maxBatchOps: MAX_BATCH_OPS,
  maxConflictPage: MAX_CONFLICTS_PER_PAGE,
  maxPage: MAX_PAGE,
  /** Keys or values one batched lookup or traversal names. */
  maxBatchKeys: MAX_BATCH_KEYS,
  maxGraphqlDepth: 12,
  /** Fields times page sizes one GraphQL document may ask for (see graphql/limits.ts). */
  maxGraphqlCost: 20_000,
  /** Brackets of any kind in a GraphQL document; input literals count too. */
  maxGraphqlNesting: 64,
  maxGraphqlAliases: 50,
  /** Bytes of objects one push to a server carries (held in memory until checked), and one object of them. */
  maxPushBytes: 64 * 1024 * 1024,
  maxPushObjectBytes: 32 * 1024 * 1024,
};
