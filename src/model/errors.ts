/**
 * The closed set of errors branchgraph raises.
 *
 * Every failure a caller can see has one stable `code` from `ERROR_CODES`.
 * Transports map the code to an HTTP status and a GraphQL `extensions.code`
 * from this one table, so the same failure looks the same everywhere.
 * Expected outcomes (conflicts, "already up to date") are values, not errors.
 */

export const ERROR_CODES = {
  // Client mistakes.
  invalid_input: { status: 400, retryable: false },
  schema_invalid: { status: 400, retryable: false },
  schema_incompatible: { status: 409, retryable: false },
  constraint_violation: { status: 422, retryable: false },
  not_found: { status: 404, retryable: false },
  branch_exists: { status: 409, retryable: false },
  branch_protected: { status: 409, retryable: false },
  head_moved: { status: 409, retryable: false },
  payload_too_large: { status: 413, retryable: false },
  unauthorized: { status: 401, retryable: false },
  forbidden: { status: 403, retryable: false },
  // Races the caller may simply retry.
  publish_contention: { status: 409, retryable: true },
  aborted: { status: 499, retryable: true },
  // Store-level outcomes. `object_*` are normally handled inside the engine.
  object_not_found: { status: 404, retryable: false },
  object_exists: { status: 409, retryable: false },
  store_unavailable: { status: 503, retryable: true },
  store_error: { status: 500, retryable: false },
  store_crashed: { status: 500, retryable: false },
  corrupt_object: { status: 500, retryable: false },
  shutting_down: { status: 503, retryable: true },
  /** Too much work in flight (request bodies beyond the memory budget): retry shortly. */
  overloaded: { status: 503, retryable: true },
  internal: { status: 500, retryable: false },
} as const satisfies Record<string, { status: number; retryable: boolean }>;

export type ErrorCode = keyof typeof ERROR_CODES;

export interface ErrorIssue {
  /** Where the problem is: a field path, `line:column`, or a row index. */
  path: string;
  message: string;
}

export class BranchgraphError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  readonly issues: ErrorIssue[];

  constructor(code: ErrorCode, message: string, opts: { details?: Record<string, unknown>; issues?: ErrorIssue[]; cause?: unknown } = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'BranchgraphError';
    this.code = code;
    this.details = opts.details ?? {};
    this.issues = opts.issues ?? [];
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get retryable(): boolean {
    return ERROR_CODES[this.code].retryable;
  }

  toJSON(): { code: ErrorCode; message: string; retryable: boolean; issues?: ErrorIssue[]; details?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      retryable: this.retryable,
      ...(this.issues.length > 0 ? { issues: this.issues } : {}),
      ...(Object.keys(this.details).length > 0 ? { details: this.details } : {}),
    };
  }
}

/** Codes whose message may hold internals (stack details, store responses): clients get a generic one. */
const MASKED_CODES: ReadonlySet<ErrorCode> = new Set(['internal', 'store_error']);

/**
 * The error as a client may see it. An internal failure says only that it
 * happened and under which request id the server logged the detail.
 */
export function publicError(err: BranchgraphError, requestId: string | undefined): ReturnType<BranchgraphError['toJSON']> {
  if (!MASKED_CODES.has(err.code)) return err.toJSON();
  return { code: err.code, message: `an internal error occurred; the server log has the details${requestId !== undefined ? ` under request id ${requestId}` : ''}`, retryable: err.retryable };
}

/** Whether the server should log this error's detail (clients get only `publicError`). */
export function isMasked(err: BranchgraphError): boolean {
  return MASKED_CODES.has(err.code);
}

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
