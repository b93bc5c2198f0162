/**
 * What every route shares: the request's variables (id, logger, role,
 * identity, body limits), the request context handed to the service, the
 * error envelope, and the body readers under the size limit and the
 * in-flight budget.
 */
import type { Context } from 'hono';
import type { Logger } from 'pino';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { BranchgraphError, publicError } from '../model/errors.js';
import type { Role } from '../service/auth.js';
import type { RequestContext } from '../service/request-context.js';
import { FORWARDED_HEADER } from '../service/merge-forwarding.js';
import { allowStoreCallListeners } from '../model/signal-listeners.js';
import { HTTP_STATUS } from './error-status.js';
import type { TokenScope } from '../model/token-scope.js';
import { bodyJsonOf, isBlankBody, readBodyBytes, readBodyText, type BodyBudget } from './request-body.js';

export type Env = {
  Variables: {
    requestId: string;
    log: Logger;
    role: Role;
    identity?: string;
    /** The token's branch and graph scope (model/token-scope.ts); absent for an unscoped token. */
    scope?: TokenScope;
    maxBodyBytes: number;
    bodyBudget: BodyBudget;
    dispatched?: boolean;
    graphqlOperation?: string;
  };
};

export function errorBody(err: BranchgraphError, requestId: string): { error: ReturnType<typeof publicError>; requestId: string } {
  return { error: publicError(err, requestId), requestId };
}

/**
 * A JSON answer with its length, set where it is made. Hono's `c.json` leaves an answer unsized,
 * and sizing it afterwards (`sizedJson`, app.ts) makes the adapter build and read back a whole web
 * response: half a millisecond of a health check's 1.1 ms, and of every refusal.
 */
export function jsonReply(
  c: Context<Env>,
  value: unknown,
  init: { status?: ContentfulStatusCode; headers?: Record<string, string> } = {},
): Response {
  const text = JSON.stringify(value);
  return c.body(text, init.status ?? 200, {
    ...init.headers,
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
}

/** The envelope and the status it travels with. */
export function errorResponse(err: BranchgraphError, requestId: string): [ReturnType<typeof errorBody>, ContentfulStatusCode] {
  const body = errorBody(err, requestId);
  // 499 is outside Hono's list of statuses, though any status can be sent.
  return [body, HTTP_STATUS[body.error.code] as ContentfulStatusCode];
}

/** The request body as text, within the body limit and the shared in-flight budget (release it when done). */
export function bodyText(c: Context<Env>): Promise<{ text: string; release: () => void }> {
  return readBodyText(c.req.raw, c.get('maxBodyBytes'), c.get('bodyBudget'));
}

/** The request body's bytes, within the same limit and budget. */
export function bodyBytes(c: Context<Env>): Promise<{ bytes: Uint8Array; release: () => void }> {
  return readBodyBytes(c.req.raw, c.get('maxBodyBytes'), c.get('bodyBudget'));
}

/** The body's JSON value, or `{}` for a blank body; parsed in slices when it is large. */
export async function jsonBody(c: Context<Env>): Promise<unknown> {
  const { bytes, release } = await bodyBytes(c);
  // Once parsed, the bytes are garbage: the budget bounds what is being buffered, not what was.
  release();
  return isBlankBody(bytes) ? {} : bodyJsonOf(bytes);
}

export function ctxOf(c: Context<Env>): RequestContext {
  const identity = c.get('identity');
  const scope = c.get('scope');
  const operationId = c.req.header('operation-id');
  const bearer = /^Bearer (.+)$/i.exec(c.req.header('authorization') ?? '')?.[1];
  const signal = c.req.raw.signal;
  allowStoreCallListeners(signal);
  return {
    transport: 'http',
    signal,
    log: c.get('log'),
    requestId: c.get('requestId'),
    role: c.get('role'),
    ...(scope !== undefined ? { scope } : {}),
    ...(identity !== undefined ? { actor: identity } : {}),
    ...(operationId !== undefined ? { operationId } : {}),
    ...(bearer !== undefined ? { bearer } : {}),
    ...(c.req.header(FORWARDED_HEADER) !== undefined ? { forwarded: true } : {}),
  };
}

export function param(c: Context<Env>, name: string): string {
  return (c.req.param as (n: string) => string | undefined)(name) ?? '';
}

/** An async iterable as a web stream, pulled as the client reads; a client that goes away stops the reading. */
export function readableOf(body: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const next = await it.next();
      if (next.done === true) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}
