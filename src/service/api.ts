/**
 * The branchgraph API as one interface: what a client can ask, whatever
 * carries the request. The service in this process implements it (bound to
 * a request context by `embeddedApi`), and so does the REST client; the CLI
 * and the GQT drivers are written against it once and work over either.
 */
import type { Ref } from '../graph/graph.js';
import type { Filter, Page } from '../graph/reads.js';
import type { ExportFormat } from '../graph/table-export.js';
import type { ApplyCommitInput, CatchUpInput, CompactInput, DiffInput, MergeInput, SchemaApplyInput, WriteInput } from './inputs.js';
import type { OperationDto } from './operations.js';
import type {
  BranchDto,
  BranchPageDto,
  BranchPageInput,
  BranchgraphService,
  CatchUpReport,
  CommitDto,
  CompactResultDto,
  DiffResultDto,
  GcInput,
  GcReportDto,
  IngestResultDto,
  MergeResultDto,
  RequestContext,
  SchemaApplyDto,
  TagDto,
  WalStatusDto,
  WriteResultDto,
} from './service.js';

export type { Ref } from '../graph/graph.js';
export type { Filter, Page, TableDiff } from '../graph/reads.js';
export type { ExportFormat } from '../graph/table-export.js';
export { EXPORT_EXTENSIONS, EXPORT_FORMATS, EXPORT_MEDIA_TYPES, parseExportFormat } from '../graph/table-export.js';

/** A commit with its per-table row and run counts. */
export type CommitDetailDto = CommitDto & { tables: { name: string; rows: number; runs: number }[] };

/** A table export: the commit it was read at, and its bytes as they are produced. */
export interface TableExport {
  commit: string;
  body: AsyncIterable<Uint8Array>;
}

/** A row with its entity key. */
export type RowItem = { key: string; row: Record<string, unknown> };

/** NDJSON text, or its bytes as they arrive (a file, a socket). */
export type NdjsonBody = string | AsyncIterable<Uint8Array>;

/** Every operation a client can ask for, whatever carries it. */
export interface BranchgraphApi {
  /** One page of branches (default 100); follow `nextCursor` for the next. */
  listBranches(page?: BranchPageInput): Promise<BranchPageDto>;
  getBranch(name: string): Promise<BranchDto>;
  createBranch(name: string, from?: Ref): Promise<BranchDto>;
  deleteBranch(name: string): Promise<{ deleted: string }>;
  listTags(): Promise<TagDto[]>;
  /** Name the commit `from` resolves to (default main); tags never move. */
  createTag(name: string, from?: Ref, message?: string): Promise<TagDto>;
  deleteTag(name: string): Promise<{ deleted: string }>;
  /** A merge that finds conflicts resolves to a `conflicts` result; it does not throw. */
  mergeBranch(source: string, input: MergeInput, signal?: AbortSignal, operationId?: string): Promise<MergeResultDto>;
  /** Cherry-pick or revert one commit on a branch; conflicts resolve to a `conflicts` result, as for merges. */
  applyCommit(kind: 'cherry_pick' | 'revert', branch: string, input: ApplyCommitInput): Promise<MergeResultDto>;
  write(branch: string, input: WriteInput): Promise<WriteResultDto>;
  /** NDJSON operations as one all-or-nothing commit. */
  load(branch: string, ndjson: string, operationId?: string): Promise<WriteResultDto>;
  /** A long operation's progress, by the id its request was given (not_found before it starts). */
  getOperation(id: string): Promise<OperationDto>;
  /** NDJSON operations appended to the WAL, streamed; every line is acknowledged when this resolves. */
  ingest(branch: string, ndjson: NdjsonBody): Promise<IngestResultDto>;
  catchUp(branch: string, input?: CatchUpInput): Promise<CatchUpReport>;
  walStatus(branch: string): Promise<WalStatusDto>;
  /** Compact a branch's tables now (servers also compact in the background). */
  compact(branch: string, input?: CompactInput): Promise<CompactResultDto>;
  applySchema(branch: string, input: SchemaApplyInput): Promise<SchemaApplyDto>;
  getSchema(at: Ref): Promise<{ commit: string; text: string }>;
  rows(table: string, at: Ref, page?: { limit?: number; cursor?: string; where?: Filter }): Promise<Page<RowItem>>;
  getRow(table: string, key: string, at: Ref): Promise<RowItem>;
  log(at: Ref, limit?: number): Promise<CommitDto[]>;
  commit(id: string): Promise<CommitDetailDto>;
  /** A page of a two-dot or three-dot diff, with counts over all of it (every change when no limit is given). */
  diff(from: Ref, to: Ref, opts?: DiffInput): Promise<DiffResultDto>;
  exportTable(table: string, at: Ref, format: ExportFormat): Promise<TableExport>;
  gc(input: GcInput): Promise<GcReportDto>;
}

/** The service as the API, every call made under `ctx`. */
export function embeddedApi(service: BranchgraphService, ctx: RequestContext): BranchgraphApi {
  return {
    listBranches: (page = {}) => service.listBranches(page, ctx),
    getBranch: (name) => service.getBranch(name, ctx),
    createBranch: (name, from) => service.createBranch(name, from, ctx),
    deleteBranch: (name) => service.deleteBranch(name, ctx),
    listTags: () => service.listTags(ctx),
    createTag: (name, from, message) => service.createTag(name, from, message, ctx),
    deleteTag: (name) => service.deleteTag(name, ctx),
    applyCommit: (kind, branch, input) => service.applyCommit(kind, branch, input, ctx),
    mergeBranch: (source, input, signal, operationId) =>
      service.mergeBranch(source, input, { ...ctx, ...(signal !== undefined ? { signal } : {}), ...(operationId !== undefined ? { operationId } : {}) }),
    write: (branch, input) => service.write(branch, input, ctx),
    load: (branch, ndjson, operationId) => service.load(branch, ndjson, operationId === undefined ? ctx : { ...ctx, operationId }),
    getOperation: async (id) => service.getOperation(id, ctx),
    ingest: (branch, ndjson) => service.ingestNdjson(branch, typeof ndjson === 'string' ? bytesOf(ndjson) : ndjson, ctx),
    catchUp: (branch, input = {}) => service.catchUp(branch, input, ctx),
    walStatus: (branch) => service.walStatus(branch, ctx),
    compact: (branch, input = {}) => service.compact(branch, input, ctx),
    applySchema: (branch, input) => service.applySchema(branch, input, ctx),
    getSchema: async (at) => {
      const { commit, text } = await service.getSchema(at, ctx);
      return { commit, text };
    },
    rows: (table, at, page = {}) => service.scan(at, table, page, ctx),
    getRow: async (table, key, at) => ({ key, row: await service.getRow(at, table, key, ctx) }),
    log: (at, limit) => service.log(at, limit, ctx),
    commit: (id) => service.commit(id, ctx),
    diff: (from, to, opts = {}) => service.diffPage(from, to, opts, ctx),
    exportTable: (table, at, format) => service.exportTable(at, table, format, ctx),
    gc: (input) => service.gc(input, ctx),
  };
}

async function* bytesOf(text: string): AsyncIterable<Uint8Array> {
  yield new TextEncoder().encode(text);
}

/** Every row of a table at a ref, following cursors. */
export async function allRows(api: Pick<BranchgraphApi, 'rows'>, table: string, at: Ref): Promise<RowItem[]> {
  const out: RowItem[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.rows(table, at, { limit: 1000, cursor });
    out.push(...page.items);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

/** A ref as the transports spell it: a branch name, `commit:<id>` or `tag:<name>`. */
export function refText(at: Ref): string {
  return 'commit' in at ? `commit:${at.commit}` : 'tag' in at ? `tag:${at.tag}` : at.branch;
}
