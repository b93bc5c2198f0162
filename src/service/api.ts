/**
 * The branchgraph API as one interface: what a client can ask, whatever
 * carries the request. It is derived from the operation table: one method
 * per operation, taking that operation's input as one named-argument
 * object, answering what its REST route answers. The service in this
 * process implements it (`embeddedApi`, each call validated by the same
 * contract HTTP applies), and so does the REST client; the CLI and the GQT
 * drivers are written against it once and work over either.
 */
import { checkedResult } from './result-check.js';
import { parseInput } from './parse-input.js';
import { checkAccess } from './access.js';
import type { InputOf, Operation, OutputOf } from './operation.js';
import { OPERATION_LIST, type OperationName, type Operations } from './operation-table.js';
import type { BranchgraphService } from './service.js';
import type { RequestContext } from './request-context.js';
import type { PlainRef, Ref } from '../graph/snapshot.js';
import { refPathText } from '../model/ref-grammar.js';
import type { RowItem } from './operations/tables/rows.js';

export type { PlainRef, Ref } from '../graph/snapshot.js';

/** A ref as every operation takes it: its text (`main~2`, `commit:<id>`, …) or an object. */
export type RefInput = string | PlainRef;
export type { Filter, Page, TableDiff } from '../graph/reads.js';
export type { ExportFormat } from '../graph/table-export.js';
export { EXPORT_EXTENSIONS, EXPORT_FORMATS, EXPORT_MEDIA_TYPES, parseExportFormat } from '../graph/table-export.js';
export type { RowItem } from './operations/tables/rows.js';
export type { EntityVersionDto } from './operations/tables/entity-history.js';
export type { PropertyBlameDto } from './operations/tables/blame.js';
export type { TableExport } from './operations/tables/export-table.js';
export type { NdjsonBody } from './operations/wal/ingest.js';

/** What each operation takes, for callers that build inputs apart from the call (the GQT steps, the CLI's flags). */
export type MergeInput = Omit<InputOf<Operations['mergeBranch']>, 'source'>;
/** A cherry-pick or revert without its branch. */
export type ApplyCommitInput = Omit<InputOf<Operations['cherryPick']>, 'branch'>;
/** A write batch without its branch. */
export type WriteInput = Omit<InputOf<Operations['write']>, 'branch'>;
/** A schema change without its branch. */
export type SchemaApplyInput = Omit<InputOf<Operations['applySchema']>, 'branch'>;
/** A catch-up request without its branch. */
export type CatchUpInput = Omit<InputOf<Operations['catchUp']>, 'branch'>;
/** A compaction request without its branch. */
export type CompactInput = Omit<InputOf<Operations['compact']>, 'branch'>;
/** Which diff and which page, without the refs compared. */
export type DiffInput = Omit<InputOf<Operations['diff']>, 'from' | 'to'>;

/** What a call may carry besides its input: the caller's abort signal, and the id to follow a long operation by. */
export interface CallOptions {
  signal?: AbortSignal;
  operationId?: string;
}

/** Every operation a client can ask for, whatever carries it. */
export type BranchgraphApi = {
  [K in OperationName]: (input: InputOf<Operations[K]>, call?: CallOptions) => Promise<OutputOf<Operations[K]>>;
};

/**
 * Run one operation on the service: its input checked against its contract (problems named under
 * `where`), what it touches against the caller's scope, then its function, under `ctx`.
 */
export async function invoke<I, O>(
  op: Operation<I, O>,
  service: BranchgraphService,
  call: { input: unknown; ctx: RequestContext; where?: string },
): Promise<O> {
  return runParsed(op, service, { input: parseInput(op.input, call.input, call.where ?? 'input'), ctx: call.ctx });
}

/**
 * Run an operation on an input its contract already parsed: what it touches held to the caller's
 * scope first (access.ts), then its function, its result held to its contract. Every transport's
 * call ends here, so none can skip the scope.
 */
export async function runParsed<I, O>(
  op: Operation<I, O>,
  service: BranchgraphService,
  call: { input: I; ctx: RequestContext },
): Promise<O> {
  // An unscoped caller (a bootstrap token, the embedded API) passes without its access being worked out.
  if (call.ctx.scope !== undefined) await checkAccess(service, op.access(call.input), call.ctx);
  return checkedResult(op as Operation, await op.run(service, call.input, call.ctx));
}

/** The service as the API, every call made under `ctx` (with the call's own signal and operation id). */
export function embeddedApi(service: BranchgraphService, ctx: RequestContext): BranchgraphApi {
  const api: Record<string, unknown> = {};
  for (const op of OPERATION_LIST) {
    api[op.name] = async (input: unknown, call: CallOptions = {}) => invoke(op, service, { input, ctx: { ...ctx, ...withDefined(call) } });
  }
  return api as BranchgraphApi;
}

function withDefined(call: CallOptions): CallOptions {
  return {
    ...(call.signal !== undefined ? { signal: call.signal } : {}),
    ...(call.operationId !== undefined ? { operationId: call.operationId } : {}),
  };
}

/** Every row of a table at a ref, following cursors. */
export async function allRows(api: Pick<BranchgraphApi, 'rows'>, table: string, at: RefInput): Promise<RowItem[]> {
  const out: RowItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.rows({ table, at, limit: 1000, ...(cursor !== undefined ? { cursor } : {}) });
    out.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

/** A ref as the transports spell it: a branch name, `commit:<id>`, `tag:<name>`, or a path such as `main~2`. */
export function refText(at: Ref): string {
  if ('path' in at) return refPathText(at.path);
  return 'commit' in at ? `commit:${at.commit}` : 'tag' in at ? `tag:${at.tag}` : at.branch;
}
