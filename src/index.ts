/**
 * branchgraph as a library: the embedded API.
 *
 * Open a service on a store (a directory, S3, or memory) and call the same
 * request-owned operations the REST and GraphQL transports use; serve them
 * over HTTP; or talk to a running server with the REST client. Everything
 * here is covered by semantic versioning; anything not exported here is
 * internal. `test/public-api.test.ts` pins this list.
 *
 * ```ts
 * import { loadConfig, openService } from 'branchgraph';
 * const service = await openService(loadConfig(process.env, { store: 'file://./data' }));
 * const ctx = { transport: 'embedded' as const };
 * await service.applySchema('main', { schema: 'node Person { id: string @key\n name: string }' }, ctx);
 * await service.createBranch('feature', { branch: 'main' }, ctx);
 * await service.write('feature', { ops: [{ op: 'insert', table: 'Person', values: { id: 'a', name: 'Ann' } }] }, ctx);
 * const result = await service.mergeBranch('feature', { into: 'main' }, ctx);
 * ```
 */

// The service: one handler per operation, shared by every transport.
export { BranchgraphService } from './service/service.js';
export type { ServiceOptions } from './service/service.js';
export type { RequestContext, Transport } from './service/request-context.js';
export type {
  BranchDto,
  CatchUpReport,
  CommitDto,
  CompactResultDto,
  DamagedBranch,
  GcReportDto,
  IngestResultDto,
  MergeResultDto,
  SchemaApplyDto,
  WalStatusDto,
  WriteResultDto,
} from './service/dtos.js';
export { openGraphHost, openService, serviceOnStore } from './service/open-service.js';
export {
  allRows,
  embeddedApi,
  type BranchgraphApi,
  type CatchUpInput,
  type CompactInput,
  type MergeInput,
  type NdjsonBody,
  type RowItem,
  type SchemaApplyInput,
  type WriteInput,
} from './service/api.js';
export { OPERATIONS, type OperationName } from './service/operation-table.js';
/** Stored queries run on a branch's typed GraphQL: give an embedded service that ability with this. */
export { attachTypedGraphql } from './http/typed-graphql-port.js';
/** Fetch from and push to server remotes (`http(s)://…`): give an embedded service that ability with this. */
export { attachHttpPeers } from './http/http-peer.js';
/** Clone a graph from a directory, a bucket or a server into an empty store, as `branchgraph clone` does. */
export { cloneStores } from './service/clone-stores.js';
export { GraphHost, type HostedGraph } from './service/graph-host.js';
export { loadConfig, type Config } from './service/config.js';
export { parseRef, type WriteOpInput } from './service/inputs.js';
export { LIMITS } from './service/limits.js';

// Stores.
export type { ObjectStore, ObjectInfo } from './store/object-store.js';
export { openStore } from './store/open-store.js';
export { MemoryStore } from './store/memory-store.js';
export { PrefixStore } from './store/prefix-store.js';
export { FsStore } from './store/fs-store.js';

// Serving over HTTP, and a client for a running server.
export { startServer, type RunningServer } from './http/server.js';
export { RestClient } from './http/rest-client.js';

// The closed set of errors, conflicts, and the schema language.
export {
  BranchgraphError,
  ERROR_CODES,
  isBranchgraphError,
  type ErrorCode,
  type ErrorDetails,
  type ErrorDetailsByCode,
  type ErrorIssue,
  type PublicErrorCode,
} from './model/errors.js';
export { CONFLICT_KINDS, type Conflict, type ConflictKind, type ConflictReport } from './model/conflict.js';
export { formatSchema, parseSchema } from './model/schema-parser.js';
export type { Schema } from './model/schema.js';
export type { Page, Ref } from './service/api.js';
