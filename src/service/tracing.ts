/**
 * OpenTelemetry spans through the API package only (`@opentelemetry/api`): with no SDK
 * registered no span is made at all (`tracing()`); an operator who registers
 * one (docs/operations.md) gets a span per request (server/http-context), per merge with one
 * child per phase (resolve, base, prepare, validate, publish, cleanup), and per store call.
 * Incoming `traceparent` headers are honoured through the propagator the SDK registers.
 */
import {
  context,
  type Context,
  INVALID_SPAN_CONTEXT,
  ProxyTracerProvider,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
} from '@opentelemetry/api';
import { isBranchgraphError } from '../model/errors.js';
import type { PhaseObserver } from '../model/phase-timer.js';
import type { ObjectStore } from '../store/object-store.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';

export const TRACER_NAME = 'branchgraph';
/** What work is handed when no SDK is registered: a span whose every method does nothing. */
const UNTRACED: Span = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

/**
 * Whether an SDK is registered, asked on each call (as the tracer is got) so one registered after
 * start, or replaced, is followed. Without one, the API's own no-op spans still cost a span object
 * and an active context per request and per store call, about a twentieth of a small read's time.
 */
export function tracing(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(TRACER_NAME) !== undefined;
}

/** Ends a span with the outcome of its work: an error's stable code, or OK. */
function endSpan(span: Span, error?: unknown): void {
  if (error !== undefined) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    if (isBranchgraphError(error)) span.setAttribute('branchgraph.error.code', error.code);
    if (error instanceof Error) span.recordException(error);
  }
  span.end();
}

/** Runs `fn` in a span that is the active one while it runs (so store calls nest under it). */
export async function inSpan<T>(
  name: string,
  how: { attributes?: Attributes; kind?: SpanKind; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  if (!tracing()) return fn(UNTRACED);
  return trace
    .getTracer(TRACER_NAME)
    .startActiveSpan(
      name,
      { kind: how.kind ?? SpanKind.INTERNAL, ...(how.attributes ? { attributes: how.attributes } : {}) },
      how.parent ?? context.active(),
      async (span) => {
        try {
          const out = await fn(span);
          endSpan(span);
          return out;
        } catch (e) {
          endSpan(span, e);
          throw e;
        }
      },
    );
}

/** A phase timer's observer that keeps one child span of the active span per phase, in turn. */
export function phaseSpans(prefix: string): PhaseObserver<string> {
  if (!tracing()) return () => undefined;
  const parent = context.active();
  let open: Span | undefined;
  return (phase) => {
    open?.end();
    open = phase === undefined ? undefined : trace.getTracer(TRACER_NAME).startSpan(`${prefix} ${phase}`, {}, parent);
  };
}

/** Every store call as a client span named after its operation, with the key it touched. */
export class TracedStore extends StoreWrapper {
  constructor(inner: ObjectStore) {
    super(inner);
  }

  protected around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    // Without a recording parent a store call would start a trace of its own: background work
    // (compaction, expiry sweeps) stays out of the traces unless its caller is traced.
    if (!tracing() || !trace.getSpan(context.active())?.isRecording()) return call();
    return inSpan(
      `store ${ctx.op}`,
      { kind: SpanKind.CLIENT, attributes: { 'branchgraph.store.op': ctx.op, 'branchgraph.store.key': ctx.key } },
      () => call(),
    );
  }
}
