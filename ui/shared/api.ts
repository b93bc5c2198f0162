/**
 * The pages' one way to the server: the generated REST client (clients/typescript), relative to
 * where the page is served, so `/graphs/<name>/ui` reaches that graph, with the reader's token.
 * A refusal becomes an ApiError carrying the stable code every transport answers.
 */
import { createBranchgraphClient, isErrorEnvelope, type BranchgraphClient, type Schemas } from '../../clients/typescript/src/index.js';

export type { Schemas };

/** The graph's base path: the page's path without `/ui…`. */
export const base = location.pathname.replace(/\/ui(\/.*)?$/, '');

const TOKEN_KEY = 'branchgraph.token';

/** The token the reader entered, kept for the browser tab only. */
export const token = (): string => sessionStorage.getItem(TOKEN_KEY) ?? '';
export const setToken = (t: string): void => sessionStorage.setItem(TOKEN_KEY, t);

export function api(): BranchgraphClient {
  const t = token();
  return createBranchgraphClient({ baseUrl: location.origin + base, ...(t !== '' ? { token: t } : {}) });
}

/** A refused call: its stable code, message, HTTP status and details. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly info: { status: number; details: Record<string, unknown>; retryable: boolean },
  ) {
    super(message);
  }
  /** The code and message as a page shows them. */
  get text(): string {
    return `${this.code}: ${this.message}`;
  }
}

type Answer = { data?: unknown; error?: unknown; response: Response };

/** The data of a call, or an ApiError with the code the server gave. */
export async function answer<R extends Answer>(call: Promise<R>): Promise<NonNullable<R['data']>> {
  const r = await call;
  if (r.data !== undefined && r.data !== null && !isErrorEnvelope(r.data)) return r.data as NonNullable<R['data']>;
  throw refusal(r.error ?? r.data, r.response.status);
}

/** The ApiError a response body stands for. */
export function refusal(body: unknown, status: number): ApiError {
  if (isErrorEnvelope(body)) {
    const e = body.error as { code: string; message: string; details?: Record<string, unknown>; retryable?: boolean };
    return new ApiError(e.code, e.message, { status, details: e.details ?? {}, retryable: e.retryable === true });
  }
  return new ApiError('unexpected', `unexpected answer (HTTP ${status})`, { status, details: {}, retryable: false });
}

/** The text a page shows for any failure. */
export const failureText = (e: unknown): string => (e instanceof ApiError ? e.text : e instanceof Error ? e.message : String(e));

/** A typed GraphQL document on a branch, with its data, or its first error as an ApiError. */
export async function typedGraphql<T>(branch: string, query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const r = await answer(api().POST('/branches/{id}/graphql', { params: { path: { id: branch } }, body: { query, variables } }));
  const body = r as { data?: T | null; errors?: { message: string; extensions?: { code?: string; details?: Record<string, unknown> } }[] };
  const first = body.errors?.[0];
  if (first !== undefined)
    throw new ApiError(first.extensions?.code ?? 'graphql_error', first.message, {
      status: 200,
      details: first.extensions?.details ?? {},
      retryable: false,
    });
  return body.data as T;
}
