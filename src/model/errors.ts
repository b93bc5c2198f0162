/**
 * The closed set of errors branchgraph raises.
 *
 * Every failure a caller can see has one stable `code` from `ERROR_CODES`,
 * with whether retrying can help. The transports map a code to their own
 * terms (HTTP status: http/error-status.ts; GraphQL `extensions.code`).
 * `INTERNAL_CODES` are outcomes the engine raises and handles inside (a
 * create-only PUT that found the key taken, a missing object, an injected
 * crash); should one ever escape, a client sees `internal`. Each code's
 * `details` has a type of its own (`ErrorDetailsByCode`). Expected outcomes
 * (conflicts, "already up to date") are values, not errors.
 */

export const ERROR_CODES = {
  // Client mistakes.
  invalid_input: { retryable: false },
  schema_invalid: { retryable: false },
  schema_incompatible: { retryable: false },
  constraint_violation: { retryable: false },
  not_found: { retryable: false },
  /** A commit-id prefix more than one commit starts with; the details list them. */
  ambiguous_ref: { retryable: false },
  branch_exists: { retryable: false },
  branch_protected: { retryable: false },
  graph_exists: { retryable: false },
  tag_exists: { retryable: false },
  head_moved: { retryable: false },
  /** A push whose commit does not contain the branch's head there: fetch, merge, and push again. */
  non_fast_forward: { retryable: false },
  /** A merge request that cannot merge now; the details list why. */
  request_not_mergeable: { retryable: false },
  payload_too_large: { retryable: false },
  unauthorized: { retryable: false },
  forbidden: { retryable: false },
  /** A token's quota (its live branches) is used up: delete one, or let one expire. */
  quota_exceeded: { retryable: false },
  // Races the caller may simply retry.
  publish_contention: { retryable: true },
  aborted: { retryable: true },
  /** A merge's resolution expected values the branches no longer hold: preview again. */
  resolution_stale: { retryable: true },
  // The store or the server.
  store_unavailable: { retryable: true },
  store_error: { retryable: false },
  corrupt_object: { retryable: false },
  shutting_down: { retryable: true },
  /** Too much work in flight (request bodies beyond the memory budget): retry shortly. */
  overloaded: { retryable: true },
  internal: { retryable: false },
  /** Raised by clients, never sent by a server: the server could not be reached at all. */
  server_unreachable: { retryable: true },
  /** A remote a fetch or push names could not be reached (a server, or its store): the request was fine, retry later. */
  remote_unreachable: { retryable: true },
  /**
   * The server that publishes the target branch for the others (a forwarded merge) stopped answering
   * after it was sent the merge: it may have landed. Retry: a merge that landed answers up to date.
   */
  publisher_unreachable: { retryable: true },
  /** The embedder an `@embed` property or a `near: {text}` needs failed or could not be reached: nothing was written; retry later. */
  embedding_failed: { retryable: true },
} as const satisfies Record<string, { retryable: boolean }>;

/** Store-level outcomes the engine handles itself; never shown to a client as such. */
export const INTERNAL_CODES = {
  object_not_found: { retryable: false },
  object_exists: { retryable: false },
  /** A fault-injection crash (tests and the simulation). */
  store_crashed: { retryable: false },
} as const satisfies Record<string, { retryable: boolean }>;

/** The codes clients see. */
export type PublicErrorCode = keyof typeof ERROR_CODES;
export type InternalErrorCode = keyof typeof INTERNAL_CODES;
/** Every code an error can carry: the public set and the engine's internal store outcomes. */
export type ErrorCode = PublicErrorCode | InternalErrorCode;

export function isPublicCode(code: string): code is PublicErrorCode {
  return Object.hasOwn(ERROR_CODES, code);
}

/** Rows an ingest made durable before the failure: they stay acknowledged. */
export interface Acknowledged {
  generations: number;
  rows: number;
  lastSeq: number | undefined;
}

/** Fields any code may carry. */
interface CommonDetails {
  /** An ingest that failed part-way: what it made durable first. */
  acknowledged?: Acknowledged;
  /** The HTTP status the error arrived with (REST client only). */
  status?: number;
}

/** What each code's `details` says; every field is optional so a client may read what it knows. */
export interface ErrorDetailsByCode {
  invalid_input: CommonDetails;
  schema_invalid: CommonDetails;
  schema_incompatible: CommonDetails;
  constraint_violation: CommonDetails;
  not_found: CommonDetails & {
    branch?: string;
    table?: string;
    key?: string;
    commit?: string;
    lineage?: string;
    version?: number;
    graph?: string;
    tag?: string;
    remote?: string;
  };
  ambiguous_ref: CommonDetails & { prefix?: string; candidates?: string[] };
  branch_exists: CommonDetails & { branch?: string };
  branch_protected: CommonDetails & { branch?: string };
  request_not_mergeable: CommonDetails & { reasons?: string[] };
  graph_exists: CommonDetails & { graph?: string };
  tag_exists: CommonDetails & { tag?: string };
  head_moved: CommonDetails & { branch?: string; expected?: string; actual?: string };
  non_fast_forward: CommonDetails & { branch?: string; head?: string; pushed?: string };
  payload_too_large: CommonDetails & { limit?: number; line?: number };
  unauthorized: CommonDetails;
  /** Which scope refused: the branch or graph asked for, and what the token needed of it. */
  forbidden: CommonDetails & { branch?: string; graph?: string; need?: 'read' | 'write' | 'admin' | 'unscoped'; scope?: string[] };
  quota_exceeded: CommonDetails & { limit?: number; owned?: number; owner?: string };
  publish_contention: CommonDetails & { branch?: string; shard?: string; attempts?: number; ageMs?: number; key?: string };
  aborted: CommonDetails & { batches?: number };
  resolution_stale: CommonDetails & { table?: string; key?: string; property?: string | null; side?: string };
  store_unavailable: CommonDetails & { key?: string; errno?: string; name?: string };
  store_error: CommonDetails & { key?: string; keys?: (string | undefined)[]; errno?: string; name?: string };
  corrupt_object: CommonDetails & { key?: string; issues?: string[] };
  shutting_down: CommonDetails;
  overloaded: CommonDetails & { limit?: number };
  internal: CommonDetails;
  /** `sent`: whether the request may have reached the server (false when the connection was never made). */
  server_unreachable: CommonDetails & { url?: string; sent?: boolean };
  remote_unreachable: CommonDetails & { remote?: string; url?: string };
  publisher_unreachable: CommonDetails & { branch?: string; url?: string };
  embedding_failed: CommonDetails & { embedder?: string };
  object_not_found: CommonDetails & { key?: string };
  object_exists: CommonDetails & { key?: string };
  store_crashed: CommonDetails & { key?: string };
}

/** The details an error with code `C` carries. */
export type ErrorDetails<C extends ErrorCode = ErrorCode> = ErrorDetailsByCode[C];

/** One problem in an input. */
export interface ErrorIssue {
  /** Where the problem is: a field path, `line:column`, or a row index. */
  path: string;
  message: string;
}

/** Every failure branchgraph raises: a stable code, whether retrying can help, issues naming what was wrong, and typed details. */
export class BranchgraphError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly details: ErrorDetails<C>;
  readonly issues: ErrorIssue[];

  constructor(code: C, message: string, opts: { details?: ErrorDetails<C>; issues?: ErrorIssue[]; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'BranchgraphError';
    this.code = code;
    this.details = opts.details ?? ({} as ErrorDetails<C>);
    this.issues = opts.issues ?? [];
  }

  /**
   * An error that is an expected answer rather than a fault (a store's "no object at this key",
   * asked far more often than it is a problem): made without a stack trace, whose capture costs
   * about ten microseconds, more than the question it answers when the store is local.
   */
  static expected<C extends ErrorCode>(code: C, message: string, opts: { details?: ErrorDetails<C> } = {}): BranchgraphError<C> {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      return new BranchgraphError(code, message, opts);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  get retryable(): boolean {
    return isPublicCode(this.code) ? ERROR_CODES[this.code].retryable : INTERNAL_CODES[this.code as InternalErrorCode].retryable;
  }

  toJSON(): ErrorBody {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.issues.length > 0 ? { issues: this.issues } : {}),
      ...(Object.keys(this.details).length > 0 ? { details: this.details } : {}),
    };
  }
}

/** An error as it travels: the REST envelope's `error`, a GraphQL error's extensions plus message. */
export interface ErrorBody {
  code: ErrorCode;
  message: string;
  retryable: boolean;
  issues?: ErrorIssue[];
  details?: ErrorDetails;
}

/** Public codes whose message may hold internals (stack details, store responses): clients get a generic one. */
const MASKED_CODES: ReadonlySet<ErrorCode> = new Set(['internal', 'store_error']);

/** Whether the server should log this error's detail (clients get only `publicError`). */
export function isMasked(err: BranchgraphError): boolean {
  return MASKED_CODES.has(err.code) || !isPublicCode(err.code);
}

/**
 * The error as a client may see it: a public code only. An internal failure
 * (or an internal code that escaped) says only that it happened and under
 * which request id the server logged the detail.
 */
export function publicError(err: BranchgraphError, requestId: string | undefined): ErrorBody & { code: PublicErrorCode } {
  if (!isMasked(err)) return err.toJSON() as ErrorBody & { code: PublicErrorCode };
  const code = isPublicCode(err.code) ? err.code : 'internal';
  return {
    code,
    message: `an internal error occurred; the server log has the details${requestId !== undefined ? ` under request id ${requestId}` : ''}`,
    retryable: ERROR_CODES[code].retryable,
  };
}

/** The error a client rebuilds from an error body it received; an unknown code becomes `internal`. */
export function errorFromBody(body: Partial<ErrorBody> | undefined, fallbackMessage: string, extra: CommonDetails = {}): BranchgraphError {
  const code = body?.code !== undefined && isPublicCode(body.code) ? body.code : 'internal';
  return new BranchgraphError(code, body?.message ?? fallbackMessage, {
    issues: body?.issues ?? [],
    details: { ...extra, ...(body?.details ?? {}) },
  });
}

/** Whether `e` is a branchgraph error, optionally with the given code. */
export function isBranchgraphError(e: unknown, code?: ErrorCode): e is BranchgraphError {
  return e instanceof BranchgraphError && (code === undefined || e.code === code);
}

/** Wrap anything thrown into the closed set; unknown failures become `internal`. */
export function toBranchgraphError(e: unknown): BranchgraphError {
  if (e instanceof BranchgraphError) return e;
  if (e instanceof Error && e.name === 'AbortError') return new BranchgraphError('aborted', 'the operation was aborted', { cause: e });
  return new BranchgraphError('internal', e instanceof Error ? e.message : String(e), { cause: e });
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new BranchgraphError('aborted', 'the operation was aborted', { cause: signal.reason });
}
