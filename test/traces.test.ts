/**
 * Traces as an operator sees them once an OpenTelemetry SDK is registered: a server span per
 * request, in the caller's trace when it sends `traceparent`, a merge span under it with a span
 * per phase, and a client span per store call; a refusal marks its span with the stable code.
 * The SDK here is the test's (the package bundles none), unregistered again at the end.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inSpan, tracing } from '../src/service/tracing.js';
import { PEOPLE_SCHEMA } from './support/fixtures.js';
import { testServer, type TestServer } from './support/test-server.js';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const CALLER_SPAN = '00f067aa0ba902b7';

describe('without an SDK', () => {
  it('makes no span, and follows an SDK registered later', async () => {
    expect(tracing()).toBe(false);
    const handed = await inSpan('work', {}, async (span) => span);
    expect(handed.isRecording()).toBe(false);
    expect(trace.getActiveSpan()).toBeUndefined();
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    try {
      expect(tracing()).toBe(true);
      expect(await inSpan('work', {}, async (span) => span.isRecording())).toBe(true);
      expect(exporter.getFinishedSpans().map((x) => x.name)).toEqual(['work']);
    } finally {
      trace.disable();
    }
    expect(tracing()).toBe(false);
  });
});

describe('traces', () => {
  const exporter = new InMemorySpanExporter();
  let s: TestServer;
  beforeAll(async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
    s = await testServer();
    const post = (path: string, body: unknown) =>
      fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    await post('/branches/main/schema', { schema: PEOPLE_SCHEMA });
    await post('/branches', { name: 'feature' });
    await post('/branches/feature/writes', { ops: [{ op: 'insert', table: 'Person', values: { id: 'ann', name: 'Ann' } }] });
    exporter.reset();
  });
  afterAll(async () => {
    await s.close();
    trace.disable();
    propagation.disable();
    context.disable();
  });

  const spansOf = (traceId: string): ReadableSpan[] => exporter.getFinishedSpans().filter((x) => x.spanContext().traceId === traceId);
  const parentOf = (x: ReadableSpan): string | undefined => x.parentSpanContext?.spanId;

  it('puts a merge, its phases and its store calls under the request, in the caller’s trace', async () => {
    const res = await fetch(`${s.url}/branches/feature/merge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
      body: JSON.stringify({ into: 'main' }),
    });
    expect(res.status).toBe(200);
    const spans = spansOf(TRACE_ID);
    const request = spans.find((x) => x.name === 'POST /branches/:id/merge');
    expect(request).toBeDefined();
    expect(parentOf(request as ReadableSpan)).toBe(CALLER_SPAN);
    expect((request as ReadableSpan).attributes['http.response.status_code']).toBe(200);
    const merge = spans.find((x) => x.name === 'merge merge');
    expect(parentOf(merge as ReadableSpan)).toBe(request?.spanContext().spanId);
    expect(merge?.attributes).toMatchObject({ 'branchgraph.merge.source': 'feature', 'branchgraph.merge.into': 'main' });
    const phases = spans.filter((x) => x.name.startsWith('merge ') && parentOf(x) === merge?.spanContext().spanId).map((x) => x.name);
    expect(phases).toEqual(expect.arrayContaining(['merge resolve', 'merge publish']));
    const storeCalls = spans.filter((x) => x.name.startsWith('store '));
    expect(storeCalls.length).toBeGreaterThan(3);
    expect(storeCalls.every((x) => typeof x.attributes['branchgraph.store.key'] === 'string')).toBe(true);
    // Every span of the request is in the caller's trace, under the request span.
    const ids = new Set(spans.map((x) => x.spanContext().spanId));
    for (const x of spans) if (x !== request) expect(ids.has(parentOf(x) ?? '')).toBe(true);
  });

  it('marks a refused request’s span with its status, and starts a trace of its own without traceparent', async () => {
    exporter.reset();
    const res = await fetch(`${s.url}/branches/nope/merge`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ into: 'main' }),
    });
    expect(res.status).toBe(404);
    const request = exporter.getFinishedSpans().find((x) => x.name === 'POST /branches/:id/merge');
    expect(request?.attributes['http.response.status_code']).toBe(404);
    expect(parentOf(request as ReadableSpan)).toBeUndefined();
    const merge = exporter.getFinishedSpans().find((x) => x.name === 'merge merge');
    expect(merge?.attributes['branchgraph.error.code']).toBe('not_found');
  });
});
