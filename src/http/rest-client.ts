/**
 * A small REST client for the server's routes, used by the CLI in server
 * mode and by GQT over REST. Error envelopes come back as BranchgraphErrors
 * with the server's code, so callers handle both modes the same way.
 */
import { BranchgraphError, ERROR_CODES, type ErrorCode } from '../model/errors.js';
import type { CatchUpInput, MergeInput, SchemaApplyInput, WriteInput } from '../service/inputs.js';
import type { BranchDto, CatchUpReport, CommitDto, DamagedBranch, IngestResultDto, MergeResultDto, WalStatusDto, WriteResultDto } from '../service/service.js';

export class RestClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
  ) {}

  async request<T>(method: string, path: string, body?: unknown, opts: { raw?: string; allow?: number[]; signal?: AbortSignal } = {}): Promise<{ status: number; body: T }> {
    const headers: Record<string, string> = {};
    if (this.token !== undefined) headers.authorization = `Bearer ${this.token}`;
    let payload: string | undefined;
    if (opts.raw !== undefined) {
      payload = opts.raw;
      headers['content-type'] = 'application/x-ndjson';
    } else if (body !== undefined) {
      payload = JSON.stringify(body);
      headers['content-type'] = 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, ...(payload !== undefined ? { body: payload } : {}), ...(opts.signal ? { signal: opts.signal } : {}) });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = text;
    }
    const env = (parsed as { error?: { code?: string; message?: string; issues?: { path: string; message: string }[]; details?: Record<string, unknown> } } | undefined)?.error;
    // A 409 is a conflict report for merges, but an error envelope is always an error.
    if (res.ok || (opts.allow?.includes(res.status) && env === undefined)) return { status: res.status, body: parsed as T };
    const code = (env?.code !== undefined && env.code in ERROR_CODES ? env.code : 'internal') as ErrorCode;
    throw new BranchgraphError(code, env?.message ?? `HTTP ${res.status}`, { issues: env?.issues ?? [], details: { status: res.status, ...(env?.details ?? {}) } });
  }

  private async get<T>(path: string): Promise<T> {
    return (await this.request<T>('GET', path)).body;
  }

  listBranches(): Promise<{ branches: BranchDto[]; damaged: DamagedBranch[] }> {
    return this.get<{ branches: BranchDto[]; damaged: DamagedBranch[] }>('/branches');
  }

  getBranch(name: string): Promise<BranchDto> {
    return this.get(`/branches/${encodeURIComponent(name)}`);
  }

  async createBranch(name: string, from?: { branch?: string; commit?: string }): Promise<BranchDto> {
    return (await this.request<BranchDto>('POST', '/branches', { name, ...(from ? { from } : {}) })).body;
  }

  async deleteBranch(name: string): Promise<void> {
    await this.request('DELETE', `/branches/${encodeURIComponent(name)}`);
  }

  async merge(source: string, input: MergeInput, signal?: AbortSignal): Promise<MergeResultDto> {
    return (await this.request<MergeResultDto>('POST', `/branches/${encodeURIComponent(source)}/merge`, input, { allow: [409], ...(signal ? { signal } : {}) })).body;
  }

  async write(branch: string, input: WriteInput): Promise<WriteResultDto> {
    return (await this.request<WriteResultDto>('POST', `/branches/${encodeURIComponent(branch)}/writes`, input)).body;
  }

  async ingest(branch: string, ndjson: string): Promise<IngestResultDto> {
    return (await this.request<IngestResultDto>('POST', `/branches/${encodeURIComponent(branch)}/ingest`, undefined, { raw: ndjson })).body;
  }

  async catchUp(branch: string, input: CatchUpInput = {}): Promise<CatchUpReport> {
    return (await this.request<CatchUpReport>('POST', `/branches/${encodeURIComponent(branch)}/catchup`, input)).body;
  }

  async walStatus(branch: string): Promise<WalStatusDto> {
    return this.get<WalStatusDto>(`/branches/${encodeURIComponent(branch)}/wal`);
  }

  async load(branch: string, ndjson: string): Promise<WriteResultDto> {
    return (await this.request<WriteResultDto>('POST', `/branches/${encodeURIComponent(branch)}/load`, undefined, { raw: ndjson })).body;
  }

  async applySchema(branch: string, input: SchemaApplyInput): Promise<{ commit: CommitDto | null; tables: Record<string, string> }> {
    return (await this.request<{ commit: CommitDto | null; tables: Record<string, string> }>('POST', `/branches/${encodeURIComponent(branch)}/schema`, input)).body;
  }

  getSchema(at: string): Promise<{ commit: string; text: string }> {
    return this.get(`/schema?at=${encodeURIComponent(at)}`);
  }

  /** Every row of a table at a ref, following cursors. */
  async allRows(table: string, at: string): Promise<{ key: string; row: Record<string, unknown> }[]> {
    const out: { key: string; row: Record<string, unknown> }[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/tables/${encodeURIComponent(table)}/rows?at=${encodeURIComponent(at)}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: { items: { key: string; row: Record<string, unknown> }[]; nextCursor: string | null } = await this.get(q);
      out.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor !== null);
    return out;
  }

  log(at: string, limit?: number): Promise<CommitDto[]> {
    return this.get<{ commits: CommitDto[] }>(`/commits?at=${encodeURIComponent(at)}${limit ? `&limit=${limit}` : ''}`).then((r) => r.commits);
  }

  async gc(input: { graceSeconds?: number; dryRun?: boolean }): Promise<unknown> {
    return (await this.request('POST', '/gc', input)).body;
  }
}
