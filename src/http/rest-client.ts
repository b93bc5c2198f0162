/**
 * `BranchgraphApi` over HTTP, used by the CLI in server mode and by GQT over
 * REST. Every method is derived from the operation table, exactly as the
 * server's routes are: the input's path fields go into the URL, its header
 * fields into headers, and the rest into the query string (refs as text,
 * filters as JSON) or the body (refs as objects, NDJSON as text or a
 * stream). Error envelopes come back as BranchgraphErrors with the server's
 * code (see `errorFromBody`), and a server that cannot be reached as
 * `server_unreachable` naming the URL, so callers handle both modes the same
 * way. The hosted-graph routes, which are the server's and not a graph's,
 * are methods of their own.
 */
import { isErrorEnvelope } from '../../clients/typescript/src/index.js';
import { refText, type BranchgraphApi, type CallOptions } from '../service/api.js';
import { inputFields, type InputField } from '../service/input-fields.js';
import { RefZ } from '../service/inputs.js';
import { parseInput } from '../service/parse-input.js';
import { bodyMedia, type Operation } from '../service/operation.js';
import { OPERATION_LIST } from '../service/operation-table.js';
import type { Ref } from '../service/api.js';
import { BranchgraphError, errorFromBody } from '../model/errors.js';

/** Failures to connect at all: the request never reached a server. */
const NOT_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/** A request as fetch takes it. */
interface Outgoing {
  url: string;
  init: RequestInit & { duplex?: 'half' };
}

/** `BranchgraphApi` over HTTP against a running server: the table's methods, assigned in the constructor. */
export interface RestClient extends BranchgraphApi {}

/** `BranchgraphApi` over HTTP against a running server. */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the methods are the table's, assigned in the constructor.
export class RestClient {
  constructor(
    readonly baseUrl: string,
    private readonly token?: string,
    /** Headers sent with every request (a forwarded merge's mark). */
    private readonly headers: Record<string, string> = {},
  ) {
    const self = this as unknown as Record<string, unknown>;
    for (const op of OPERATION_LIST) {
      const fields = inputFields(op.input);
      // Async, so an input refused before any request is sent rejects like one the server refused.
      self[op.name] = async (input: Record<string, unknown> = {}, call: CallOptions = {}) =>
        this.call(op, request(op, { base: baseUrl, fields, input, call }));
    }
  }

  createGraph(name: string): Promise<{ name: string; created: string }> {
    return this.send('POST /graphs', {
      url: `${this.baseUrl}/graphs`,
      init: { method: 'POST', body: JSON.stringify({ name }), headers: { 'content-type': 'application/json' } },
    });
  }

  deleteGraph(name: string): Promise<{ deleted: string }> {
    return this.send('DELETE /graphs/{name}', { url: `${this.baseUrl}/graphs/${encodeURIComponent(name)}`, init: { method: 'DELETE' } });
  }

  /** A request to a route outside the operation table (the sync routes), with this client's token; a refusal as a BranchgraphError. */
  async raw(what: string, path: string, init: RequestInit & { duplex?: 'half' }): Promise<Response> {
    const res = await this.fetch(what, { url: `${this.baseUrl}${path}`, init });
    if (!res.ok) throw await this.failure(what, res);
    return res;
  }

  private async call(op: Operation, out: Outgoing): Promise<unknown> {
    const what = `${op.http.method} ${op.http.path}`;
    if (op.http.stream === undefined) return this.send(what, out, op.http.resultStatuses);
    const res = await this.fetch(what, out);
    if (!res.ok) throw await this.failure(what, res);
    return op.http.stream.receive(res);
  }

  /** One request, unwrapped: the body on success (and on `allow` statuses when it is not an error envelope), a BranchgraphError otherwise. */
  private async send<T>(what: string, out: Outgoing, allow: number[] = []): Promise<T> {
    const res = await this.fetch(what, out);
    const body = await jsonOf(res);
    if (res.ok || (allow.includes(res.status) && !isErrorEnvelope(body))) return body as T;
    throw this.error(what, res.status, body);
  }

  private async fetch(what: string, out: Outgoing): Promise<Response> {
    const headers = new Headers(out.init.headers);
    for (const [name, value] of Object.entries(this.headers)) headers.set(name, value);
    if (this.token !== undefined) headers.set('authorization', `Bearer ${this.token}`);
    try {
      return await fetch(out.url, { ...out.init, headers });
    } catch (e) {
      throw this.transportError(what, e);
    }
  }

  private async failure(what: string, res: Response): Promise<BranchgraphError> {
    return this.error(what, res.status, await jsonOf(res));
  }

  private error(what: string, status: number, body: unknown): BranchgraphError {
    const env = isErrorEnvelope(body) ? body.error : undefined;
    return errorFromBody(env as Parameters<typeof errorFromBody>[0], `${what}: HTTP ${status}`, { status });
  }

  private transportError(what: string, e: unknown): BranchgraphError {
    if (e instanceof Error && e.name === 'AbortError') return new BranchgraphError('aborted', `${what} was aborted`, { cause: e });
    const cause = (e as { cause?: { code?: string; message?: string } } | undefined)?.cause;
    const reason = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
    return new BranchgraphError('server_unreachable', `cannot reach the server at ${this.baseUrl} (${what}): ${reason}`, {
      details: { url: this.baseUrl, sent: !NOT_CONNECTED.has(cause?.code ?? '') },
      cause: e,
    });
  }
}

/** A response's JSON body; undefined when it has none or it is not JSON (a proxy's error page). */
async function jsonOf(res: Response): Promise<unknown> {
  const text = await res.text().catch(() => '');
  try {
    return text === '' ? undefined : (JSON.parse(text) as unknown);
  } catch {
    return undefined;
  }
}

/** The request an operation's binding makes of `input`. */
function request(op: Operation, r: { base: string; fields: InputField[]; input: Record<string, unknown>; call: CallOptions }): Outgoing {
  const { http } = op;
  // A field the route does not carry would be dropped without a word: refuse it instead.
  const dropped = (http.omit ?? []).find((f) => r.input[f] !== undefined);
  if (dropped !== undefined)
    throw new BranchgraphError('invalid_input', `${op.name} over REST does not take ${dropped}`, {
      issues: [{ path: dropped, message: `not carried by ${http.method} ${http.path}` }],
    });
  const rest: Record<string, unknown> = { ...r.input };
  const take = (field: string): unknown => {
    const v = rest[field];
    delete rest[field];
    return v;
  };
  const path = http.path.replace(/\{(\w+)\}/g, (_m, name: string) => encodeURIComponent(String(take(http.params?.[name] ?? name) ?? '')));
  const headers: Record<string, string> = {};
  for (const [header, field] of Object.entries(http.headers ?? {})) {
    const v = take(field);
    if (v !== undefined) headers[header] = String(v);
  }
  if (r.call.operationId !== undefined) headers['operation-id'] = r.call.operationId;
  const init: Outgoing['init'] = { method: http.method, headers, ...(r.call.signal !== undefined ? { signal: r.call.signal } : {}) };
  const kinds = new Map(r.fields.map((f) => [f.name, f.kind]));
  const withQuery = (): string => {
    const query = new URLSearchParams();
    for (const [k, v] of Object.entries(rest)) if (v !== undefined) query.set(k, queryText(kinds.get(k), v));
    const qs = query.toString();
    return `${r.base}${path}${qs === '' ? '' : `?${qs}`}`;
  };
  if (http.body === 'whole' || http.body === 'stream') {
    // The body is whichever carried field the input gives; its media type tells the server which.
    const media = bodyMedia(http);
    const given = media.filter(([, f]) => rest[f] !== undefined);
    if (given.length > 1)
      throw new BranchgraphError('invalid_input', `${op.name} takes one body: ${given.map(([, f]) => f).join(' or ')}`, {
        issues: given.map(([, f]) => ({ path: f, message: 'one body only' })),
      });
    const [type, field] = given[0] ?? (media[0] as [string, string]);
    const body = take(field);
    for (const [, f] of media) take(f);
    headers['content-type'] = type;
    const stream = typeof body === 'object' && !(body instanceof Uint8Array);
    return { url: withQuery(), init: { ...init, body: body as BodyInit, ...(stream ? { duplex: 'half' } : {}) } };
  }
  if (http.method === 'GET' || http.method === 'DELETE') return { url: withQuery(), init };
  // Refs in bodies travel as objects, as the contract spells them; a path into history (`main~2`) has no
  // object form and travels as its text, checked here all the same.
  for (const [k, v] of Object.entries(rest)) {
    if (kinds.get(k) !== 'ref' || typeof v !== 'string') continue;
    const ref = parseInput(RefZ, v, `input.${k}`);
    rest[k] = 'path' in ref ? v : ref;
  }
  headers['content-type'] = 'application/json';
  return { url: r.base + path, init: { ...init, body: JSON.stringify(rest) } };
}

/** A query parameter's text: refs as the transports spell them, filters as JSON. */
function queryText(kind: string | undefined, v: unknown): string {
  if (kind === 'ref' && typeof v === 'object' && v !== null) return refText(v as Ref);
  if (typeof v === 'object' && v !== null) return JSON.stringify(v);
  return String(v);
}
