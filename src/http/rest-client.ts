/**
 * `BranchgraphApi` over HTTP, used by the CLI in server mode and by GQT over
 * REST. Every call goes through the typed client generated from
 * `openapi.yaml` (`clients/typescript`), so a route, parameter or body that
 * drifts from the contract fails to compile here. Error envelopes come back
 * as BranchgraphErrors with the server's code (see `errorFromBody`), and a
 * server that cannot be reached as `server_unreachable` naming the URL, so
 * callers handle both modes the same way.
 */
import { createBranchgraphClient, isErrorEnvelope, type BranchgraphClient } from '../../clients/typescript/src/index.js';
import { refText, type BranchgraphApi, type CommitDetailDto, type ExportFormat, type Filter, type NdjsonBody, type Page, type Ref, type RowItem, type TableExport } from '../service/api.js';
import type { ApplyCommitInput, CatchUpInput, CompactInput, DiffInput, MergeInput, SchemaApplyInput, WriteInput } from '../service/inputs.js';
import type { OperationDto } from '../service/operations.js';
import type {
  BranchDto,
  BranchPageDto,
  BranchPageInput,
  CatchUpReport,
  CommitDto,
  CompactResultDto,
  DiffResultDto,
  GcInput,
  GcReportDto,
  IngestResultDto,
  MergeResultDto,
  SchemaApplyDto,
  TagDto,
  WalStatusDto,
  WriteResultDto,
} from '../service/service.js';
import { BranchgraphError, errorFromBody } from '../model/errors.js';

/** What openapi-fetch resolves to, whatever the route. */
type Outcome = { data?: unknown; error?: unknown; response: Response };

/** `BranchgraphApi` over HTTP against a running server. */
export class RestClient implements BranchgraphApi {
  /** The generated client, for routes `BranchgraphApi` does not cover. */
  readonly typed: BranchgraphClient;

  constructor(
    readonly baseUrl: string,
    token?: string,
  ) {
    this.typed = createBranchgraphClient({ baseUrl, ...(token !== undefined ? { token } : {}) });
  }

  /**
   * Run one typed call and unwrap it: the body on success (and on the
   * statuses in `allow` when they carry no error envelope), a
   * BranchgraphError otherwise.
   */
  private async call<T>(what: string, run: () => Promise<Outcome>, allow: number[] = []): Promise<T> {
    let out: Outcome;
    try {
      out = await run();
    } catch (e) {
      throw this.transportError(what, e);
    }
    if (out.error === undefined && out.response.ok) return out.data as T;
    if (allow.includes(out.response.status) && !isErrorEnvelope(out.error)) return out.error as T;
    const env = isErrorEnvelope(out.error) ? out.error.error : undefined;
    throw errorFromBody(env as Parameters<typeof errorFromBody>[0], `${what}: HTTP ${out.response.status}`, { status: out.response.status });
  }

  private transportError(what: string, e: unknown): BranchgraphError {
    if (e instanceof Error && e.name === 'AbortError') return new BranchgraphError('aborted', `${what} was aborted`, { cause: e });
    const cause = (e as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const reason = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
    return new BranchgraphError('server_unreachable', `cannot reach the server at ${this.baseUrl} (${what}): ${reason}`, { details: { url: this.baseUrl }, cause: e });
  }

  /** NDJSON goes out as it is given; a stream as it is read (fetch needs `duplex` for that). */
  private ndjson(body: NdjsonBody): object {
    return {
      body,
      bodySerializer: (b: unknown) => b,
      headers: { 'content-type': 'application/x-ndjson' },
      ...(typeof body === 'object' ? { duplex: 'half' } : {}),
    };
  }

  listBranches(page: BranchPageInput = {}): Promise<BranchPageDto> {
    const query = { ...(page.limit !== undefined ? { limit: page.limit } : {}), ...(page.cursor != null ? { cursor: page.cursor } : {}) };
    return this.call('GET /branches', () => this.typed.GET('/branches', { params: { query } }));
  }

  getBranch(name: string): Promise<BranchDto> {
    return this.call('GET /branches/{id}', () => this.typed.GET('/branches/{id}', { params: { path: { id: name } } }));
  }

  createBranch(name: string, from?: Ref): Promise<BranchDto> {
    return this.call('POST /branches', () => this.typed.POST('/branches', { body: { name, ...(from !== undefined ? { from } : {}) } }));
  }

  async deleteBranch(name: string): Promise<{ deleted: string }> {
    await this.call('DELETE /branches/{id}', () => this.typed.DELETE('/branches/{id}', { params: { path: { id: name } } }));
    return { deleted: name };
  }

  async listTags(): Promise<TagDto[]> {
    return (await this.call<{ tags: TagDto[] }>('GET /tags', () => this.typed.GET('/tags'))).tags;
  }

  createTag(name: string, from?: Ref, message?: string): Promise<TagDto> {
    return this.call('POST /tags', () => this.typed.POST('/tags', { body: { name, ...(from !== undefined ? { from } : {}), ...(message !== undefined ? { message } : {}) } }));
  }

  deleteTag(name: string): Promise<{ deleted: string }> {
    return this.call('DELETE /tags/{name}', () => this.typed.DELETE('/tags/{name}', { params: { path: { name } } }));
  }

  /** A 409 is a conflict report for merges, but an error envelope is always an error. */
  mergeBranch(source: string, input: MergeInput, signal?: AbortSignal, operationId?: string): Promise<MergeResultDto> {
    const header = operationId !== undefined ? { header: { 'Operation-Id': operationId } } : {};
    return this.call(
      'POST /branches/{id}/merge',
      () => this.typed.POST('/branches/{id}/merge', { params: { path: { id: source }, ...header }, body: input, ...(signal !== undefined ? { signal } : {}) }),
      [409],
    );
  }

  getOperation(id: string): Promise<OperationDto> {
    return this.call('GET /operations/{id}', () => this.typed.GET('/operations/{id}', { params: { path: { id } } }));
  }

  applyCommit(kind: 'cherry_pick' | 'revert', branch: string, input: ApplyCommitInput): Promise<MergeResultDto> {
    const params = { params: { path: { id: branch } }, body: input };
    return this.call(
      kind === 'revert' ? 'POST /branches/{id}/revert' : 'POST /branches/{id}/cherry-pick',
      () => (kind === 'revert' ? this.typed.POST('/branches/{id}/revert', params) : this.typed.POST('/branches/{id}/cherry-pick', params)),
      [409],
    );
  }

  write(branch: string, input: WriteInput): Promise<WriteResultDto> {
    return this.call('POST /branches/{id}/writes', () => this.typed.POST('/branches/{id}/writes', { params: { path: { id: branch } }, body: input }));
  }

  ingest(branch: string, ndjson: NdjsonBody): Promise<IngestResultDto> {
    return this.call('POST /branches/{id}/ingest', () => this.typed.POST('/branches/{id}/ingest', { params: { path: { id: branch } }, ...(this.ndjson(ndjson) as { body: string }) }));
  }

  load(branch: string, ndjson: string, operationId?: string): Promise<WriteResultDto> {
    const header = operationId !== undefined ? { header: { 'Operation-Id': operationId } } : {};
    return this.call('POST /branches/{id}/load', () => this.typed.POST('/branches/{id}/load', { params: { path: { id: branch }, ...header }, ...(this.ndjson(ndjson) as { body: string }) }));
  }

  catchUp(branch: string, input: CatchUpInput = {}): Promise<CatchUpReport> {
    return this.call('POST /branches/{id}/catchup', () => this.typed.POST('/branches/{id}/catchup', { params: { path: { id: branch } }, body: input }));
  }

  compact(branch: string, input: CompactInput = {}): Promise<CompactResultDto> {
    return this.call('POST /branches/{id}/compact', () => this.typed.POST('/branches/{id}/compact', { params: { path: { id: branch } }, body: input }));
  }

  walStatus(branch: string): Promise<WalStatusDto> {
    return this.call('GET /branches/{id}/wal', () => this.typed.GET('/branches/{id}/wal', { params: { path: { id: branch } } }));
  }

  applySchema(branch: string, input: SchemaApplyInput): Promise<SchemaApplyDto> {
    return this.call('POST /branches/{id}/schema', () => this.typed.POST('/branches/{id}/schema', { params: { path: { id: branch } }, body: input }));
  }

  getSchema(at: Ref): Promise<{ commit: string; text: string }> {
    return this.call('GET /schema', () => this.typed.GET('/schema', { params: { query: { at: refText(at) } } }));
  }

  rows(table: string, at: Ref, page: { limit?: number; cursor?: string; where?: Filter } = {}): Promise<Page<RowItem>> {
    const { where, ...rest } = page;
    const query = { at: refText(at), ...rest, ...(where !== undefined ? { where: JSON.stringify(where) } : {}) };
    return this.call('GET /tables/{table}/rows', () => this.typed.GET('/tables/{table}/rows', { params: { path: { table }, query } }));
  }

  getRow(table: string, key: string, at: Ref): Promise<RowItem> {
    return this.call('GET /tables/{table}/rows/{key}', () => this.typed.GET('/tables/{table}/rows/{key}', { params: { path: { table, key }, query: { at: refText(at) } } }));
  }

  commit(id: string): Promise<CommitDetailDto> {
    return this.call('GET /commits/{id}', () => this.typed.GET('/commits/{id}', { params: { path: { id } } }));
  }

  diff(from: Ref, to: Ref, opts: DiffInput = {}): Promise<DiffResultDto> {
    const query = { from: refText(from), to: refText(to), ...opts };
    return this.call('GET /diff', () => this.typed.GET('/diff', { params: { query } }));
  }

  /** The export streamed as it arrives; nothing is buffered whole. */
  async exportTable(table: string, at: Ref, format: ExportFormat): Promise<TableExport> {
    let commit = '';
    const body = await this.call<ReadableStream<Uint8Array>>('GET /tables/{table}/export', async () => {
      const out = await this.typed.GET('/tables/{table}/export', { params: { path: { table }, query: { at: refText(at), format } }, parseAs: 'stream' });
      commit = out.response.headers.get('x-branchgraph-commit') ?? '';
      return out;
    });
    return { commit, body: body as unknown as AsyncIterable<Uint8Array> };
  }

  async log(at: Ref, limit?: number): Promise<CommitDto[]> {
    const query = { at: refText(at), ...(limit !== undefined ? { limit } : {}) };
    return (await this.call<{ commits: CommitDto[] }>('GET /commits', () => this.typed.GET('/commits', { params: { query } }))).commits;
  }

  gc(input: GcInput): Promise<GcReportDto> {
    return this.call('POST /gc', () => this.typed.POST('/gc', { body: input }));
  }

  createGraph(name: string): Promise<{ name: string; created: string }> {
    return this.call('POST /graphs', () => this.typed.POST('/graphs', { body: { name } }));
  }

  deleteGraph(name: string): Promise<{ deleted: string }> {
    return this.call('DELETE /graphs/{name}', () => this.typed.DELETE('/graphs/{name}', { params: { path: { name } } }));
  }
}
