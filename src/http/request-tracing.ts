/**
 * A server span per request, a child of the caller's trace when the request carries a
 * `traceparent` (the propagator the operator's SDK registers reads it), named by its route once
 * routed (`POST /branches/:id/merge`), with the status it answered. Everything the request does
 * (merges, store calls) nests under it.
 */
import { propagation, ROOT_CONTEXT, SpanKind, type TextMapGetter } from '@opentelemetry/api';
import type { MiddlewareHandler } from 'hono';
import { inSpan, tracing } from '../service/tracing.js';
import type { Env } from './http-context.js';

const HEADERS: TextMapGetter<Headers> = {
  get: (h, key) => h.get(key) ?? undefined,
  keys: (h) => [...h.keys()],
};

export const requestTracing: MiddlewareHandler<Env> = (c, next) => {
  if (!tracing()) return next();
  const parent = propagation.extract(ROOT_CONTEXT, c.req.raw.headers, HEADERS);
  const attributes = { 'http.request.method': c.req.method, 'url.path': c.req.path };
  return inSpan(c.req.method, { kind: SpanKind.SERVER, parent, attributes }, async (span) => {
    await next();
    span.updateName(`${c.req.method} ${c.req.routePath}`);
    span.setAttributes({ 'http.route': c.req.routePath, 'http.response.status_code': c.res.status });
  });
};
