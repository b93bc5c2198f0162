/**
 * The REST client: `BranchgraphApi` over HTTP, used by the CLI in server
 * mode and by GQT over REST. Error envelopes come back as BranchgraphErrors
 * with the server's code (see `errorFromBody`), so callers handle both
 * modes the same way.
 */
import { refText, type BranchgraphApi, type NdjsonBody, type Page, type Ref, type RowItem } from '../service/api.js';
import type { CatchUpInput, CompactInput, MergeInput, SchemaApplyInput, WriteInput } from '../service/inputs.js';
import type {
  BranchDto,
  CatchUpReport,
  CommitDto,
  CompactResultDto,
  DamagedBranch,
  GcInput,
  GcReportDto,
  IngestResultDto,
  MergeResultDto,
  SchemaApplyDto,
  WalStatusDto,
  WriteResultDto,
} from '../service/service.js';
import { errorFromBody, type ErrorBody } from '../model/errors.js';

/** `BranchgraphApi` over HTTP against a running server. */
export class RestClient implements BranchgraphApi {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown, opts: { raw?: NdjsonBody; allow?: number[]; signal?: AbortSignal } = {}): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = {};
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let payload: string | AsyncIterable<Uint8Array> | undefined;
    if (opts.raw !== undefined) {
      payload = opts.raw;
      headers['content-type'] = 'application/x-ndjson';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    // A streamed body goes out as it is read (fetch needs `duplex` for that).
    const init = { method, headers, body: payload, signal: opts.signal, ...(typeof payload === 'object' ? { duplex: 'half' } : {}) };
    const res = await fetch(this.baseUrl + path, init as RequestInit);
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    const env = (parsed as { error?: Partial<ErrorBody> } | undefined)?.error;
    // A 409 is a conflict report for merges, but an error envelope is always an error.
    if (res.ok || (opts.allow?.includes(res.status) && env === undefined)) return { status: res.status, body: parsed as T };
    throw errorFromBody(env, `HTTP ${res.status}`, { status: res.status });
  }

  private async get<T>(path: string): Promise<T> {
    return (await this.request<T>('GET', path)).body;
  }

  private async post<T>(path: string, body: unknown): Promise<T> {
    return (await this.request<T>('POST', path, body)).body;
  }

  private async postNdjson<T>(path: string, ndjson: NdjsonBody): Promise<T> {
    return (await this.request<T>('POST', path, undefined, { raw: ndjson })).body;
  }

  listBranches(): Promise<{ branches: BranchDto[]; damaged: DamagedBranch[] }> {
    return this.get('/branches');
  }

  getBranch(name: string): Promise<BranchDto> {
    return this.get(`/branches/${encodeURIComponent(name)}`);
  }

  createBranch(name: string, from?: Ref): Promise<BranchDto> {
    return this.post('/branches', { name, from });
  }

  async deleteBranch(name: string): Promise<{ deleted: string }> {
    await this.request('DELETE', `/branches/${encodeURIComponent(name)}`);
    return { deleted: name };
  }

  async mergeBranch(source: string, input: MergeInput, signal?: AbortSignal): Promise<MergeResultDto> {
    return (await this.request<MergeResultDto>('POST', `/branches/${encodeURIComponent(source)}/merge`, input, { allow: [409], signal })).body;
  }

  write(branch: string, input: WriteInput): Promise<WriteResultDto> {
    return this.post(`/branches/${encodeURIComponent(branch)}/writes`, input);
  }

  ingest(branch: string, ndjson: NdjsonBody): Promise<IngestResultDto> {
    return this.postNdjson(`/branches/${encodeURIComponent(branch)}/ingest`, ndjson);
  }

  load(branch: string, ndjson: string): Promise<WriteResultDto> {
    return this.postNdjson(`/branches/${encodeURIComponent(branch)}/load`, ndjson);
  }

  catchUp(branch: string, input: CatchUpInput = {}): Promise<CatchUpReport> {
    return this.post(`/branches/${encodeURIComponent(branch)}/catchup`, input);
  }

  compact(branch: string, input: CompactInput = {}): Promise<CompactResultDto> {
    return this.post(`/branches/${encodeURIComponent(branch)}/compact`, input);
  }

  walStatus(branch: string): Promise<WalStatusDto> {
    return this.get(`/branches/${encodeURIComponent(branch)}/wal`);
  }

  applySchema(branch: string, input: SchemaApplyInput): Promise<SchemaApplyDto> {
    return this.post(`/branches/${encodeURIComponent(branch)}/schema`, input);
  }

  getSchema(at: Ref): Promise<{ commit: string; text: string }> {
    return this.get(`/schema?at=${encodeURIComponent(refText(at))}`);
  }

  rows(table: string, at: Ref, page: { limit?: number; cursor?: string } = {}): Promise<Page<RowItem>> {
    const q = new URLSearchParams({ at: refText(at) });
    if (page.limit !== undefined) q.set('limit', String(page.limit));
    if (page.cursor !== undefined) q.set('cursor', page.cursor);
    return this.get(`/tables/${encodeURIComponent(table)}/rows?${q}`);
  }

  async log(at: Ref, limit?: number): Promise<CommitDto[]> {
    return (await this.get<{ commits: CommitDto[] }>(`/commits?at=${encodeURIComponent(refText(at))}${limit ? `&limit=${limit}` : ''}`)).commits;
  }

  gc(input: GcInput): Promise<GcReportDto> {
    return this.post('/gc', input);
  }
}
