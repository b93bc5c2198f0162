/**
 * The REST routes of every operation in the table, derived from its HTTP
 * binding: the input is gathered from the path, the headers it names, the
 * query string (GET, DELETE) or the body (JSON fields; or a body taken as
 * it is, whole or streamed, into the field its Content-Type names, with the
 * other fields in the query string), checked by the operation's contract with problems named
 * `query.*` or `body.*`, run under the caller's role and abort signal, and
 * answered with the binding's status and headers (or streamed).
 */
import { largeJsonInSlices } from '../../model/utf8-in-slices.js';
import { byteStream } from '../sized-response.js';
import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { BranchgraphError } from '../../model/errors.js';
import { requireRole } from '../../service/auth.js';
import { parseInput } from '../../service/parse-input.js';
import { inputFields, type InputField } from '../../service/input-fields.js';
import { bodyFieldsOf, bodyMedia, isTextMedia, type Operation } from '../../service/operation.js';
import { OPERATION_LIST } from '../../service/operation-table.js';
import { runParsed } from '../../service/api.js';
import type { BranchgraphService } from '../../service/service.js';
import { bodyBytes, bodyText, ctxOf, jsonBody, jsonReply, param, readableOf, type Env } from '../http-context.js';

export function operationRoutes(app: Hono<Env>, service: BranchgraphService): void {
  for (const op of OPERATION_LIST) {
    // The fields the query string may carry: a raw body's own fields come only in the body.
    const carried = bodyFieldsOf(op.http);
    const fields = inputFields(op.input).filter((f) => !carried.has(f.name));
    const route = op.http.path.replace(/\{(\w+)\}/g, ':$1');
    app.on(op.http.method, route, async (c) => {
      requireRole(c.get('role'), op.role);
      const { input, release } = await httpInput(op, c, fields);
      try {
        const where = op.http.method === 'GET' || op.http.method === 'DELETE' ? 'query' : 'body';
        const parsed = parseInput(op.input, input, where) as Record<string, unknown>;
        const out = await runParsed(op, service, { input: parsed, ctx: ctxOf(c) });
        return await reply(op, c, { out, input: parsed });
      } finally {
        await release();
      }
    });
  }
}

/** What the binding says the route's input is: path parameters, named headers, and the query or the body. */
async function httpInput(
  op: Operation,
  c: Context<Env>,
  fields: InputField[],
): Promise<{ input: Record<string, unknown>; release: () => void | Promise<void> }> {
  const { http } = op;
  const fixed: Record<string, unknown> = {};
  for (const [, name] of http.path.matchAll(/\{(\w+)\}/g))
    fixed[http.params?.[name as string] ?? (name as string)] = param(c, name as string);
  for (const [header, field] of Object.entries(http.headers ?? {})) {
    const v = c.req.header(header);
    if (v !== undefined) fixed[field] = v;
  }
  let release = (): void | Promise<void> => undefined;
  let rest: Record<string, unknown>;
  if (http.body === 'whole' || http.body === 'stream') {
    const [media, field] = mediaOf(op, c);
    rest = queryInput(c, fields, fixed);
    if (http.body === 'stream') {
      const body = c.req.raw.body;
      if (body === null)
        throw new BranchgraphError('invalid_input', `${op.name} needs a body (${media})`, { issues: [{ path: 'body', message: 'empty' }] });
      // Read without cancelling the body when the reader stops early (a refusal part-way): a little
      // that is left is read and dropped before the answer goes, so a client still sending gets the
      // answer rather than a connection closed under it; more is not read (dropRest).
      rest[field] = (body as unknown as StreamWithValues).values({ preventCancel: true });
      release = () => dropRest(body);
    } else if (isTextMedia(media)) {
      const read = await bodyText(c);
      release = read.release;
      rest[field] = read.text;
    } else {
      const read = await bodyBytes(c);
      release = read.release;
      rest[field] = read.bytes;
    }
  } else if (http.method === 'GET' || http.method === 'DELETE') rest = queryInput(c, fields, fixed);
  else rest = bodyFields(await jsonBody(c), fixed);
  return { input: { ...rest, ...fixed }, release };
}

/** A web stream's reader that can leave the stream uncancelled when it stops early. */
interface StreamWithValues {
  values(o: { preventCancel: boolean }): AsyncIterable<Uint8Array>;
}

/**
 * The most of a streamed body left unread that is read and dropped before answering. Past it the
 * body is cancelled and the connection closed: a client sending far more than was asked for (a
 * hostile body) is not read to its end.
 */
const MAX_DROPPED_BYTES = 2 * 1024 * 1024;

/** What an operation left of its streamed body: read and dropped up to MAX_DROPPED_BYTES, else cancelled. */
async function dropRest(body: ReadableStream<Uint8Array>): Promise<void> {
  if (body.locked) return;
  let left = MAX_DROPPED_BYTES;
  try {
    // Leaving the loop early cancels the body.
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      left -= chunk.length;
      if (left < 0) return;
    }
  } catch {
    // The client went away: there is nobody to answer.
  }
}

/** A JSON body's fields; a field the path or a header gives is not the body's to give. */
/** The media type a raw body comes as and the field it fills: its Content-Type when the binding names it, else the first. */
function mediaOf(op: Operation, c: Context<Env>): [string, string] {
  const media = bodyMedia(op.http);
  const said = (c.req.header('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  return media.find(([m]) => m === said) ?? (media[0] as [string, string]);
}

function bodyFields(body: unknown, fixed: Record<string, unknown>): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BranchgraphError('invalid_input', 'the request body must be a JSON object', {
      issues: [{ path: 'body', message: 'a JSON object' }],
    });
  }
  for (const k of Object.keys(fixed)) {
    if (Object.hasOwn(body, k))
      throw new BranchgraphError('invalid_input', `body.${k} is given by the route`, {
        issues: [{ path: `body.${k}`, message: 'given by the route' }],
      });
  }
  return body as Record<string, unknown>;
}

/** The contract's fields from the query string, as values of their kind; parameters the contract lacks are ignored. */
function queryInput(c: Context<Env>, fields: InputField[], fixed: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of fields) {
    const v = f.name in fixed ? undefined : c.req.query(f.name);
    if (v !== undefined) out[f.name] = queryValue(f, v);
  }
  return out;
}

function queryValue(f: InputField, v: string): unknown {
  const bad = (message: string, what: string): BranchgraphError =>
    new BranchgraphError('invalid_input', message, { issues: [{ path: `query.${f.name}`, message: what }] });
  if (f.kind === 'number') {
    if (!/^\d{1,15}$/.test(v)) throw bad(`${f.name} must be a whole number`, 'whole number');
    return Number(v);
  }
  if (f.kind === 'boolean') return v === 'true' ? true : v === 'false' ? false : v;
  if (f.kind === 'object') {
    try {
      return JSON.parse(v) as unknown;
    } catch {
      throw bad(`${f.name} must be a JSON object`, 'invalid JSON');
    }
  }
  return v;
}

async function reply(op: Operation, c: Context<Env>, r: { out: unknown; input: Record<string, unknown> }): Promise<Response> {
  const { http } = op;
  if (http.stream !== undefined) {
    const sent = http.stream.send(r.out, r.input);
    return c.body(readableOf(sent.body), 200, sent.headers);
  }
  const status = typeof http.status === 'function' ? http.status(r.out) : (http.status ?? 200);
  for (const [k, v] of Object.entries(http.replyHeaders?.(r.out) ?? {})) c.header(k, v);
  // A large answer is encoded a member at a time, in slices, and streamed from its bytes as they are.
  const bytes = await largeJsonInSlices(r.out);
  if (bytes !== undefined) {
    return c.body(byteStream([bytes]), status as ContentfulStatusCode, {
      'content-type': 'application/json',
      'content-length': String(bytes.length),
    });
  }
  return jsonReply(c, r.out, { status: status as ContentfulStatusCode });
}
