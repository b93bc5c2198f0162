/**
 * An in-process server for HTTP tests, on a given store, with its log lines
 * captured so tests can assert what was logged.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { startServer, type RunningServer } from '../../src/http/server.js';
import { loadConfig } from '../../src/service/config.js';

export interface TestServer extends RunningServer {
  logs: Record<string, unknown>[];
}

/**
 * Background compaction is off unless asked for: tests that check a refused request changed nothing
 * compare the whole store before and after.
 */
export async function testServer(
  opts: {
    store?: string;
    latencyMs?: number;
    tokens?: string;
    maxBodyBytes?: number;
    maxIngestBytes?: number;
    drainTimeoutMs?: number;
    sealAfterMs?: number;
    compaction?: boolean;
    /** More environment settings (hook delivery, for one). */
    env?: Record<string, string>;
    /** The graphs' clock, for tests that move time (branch and token expiry). */
    clock?: () => number;
  } = {},
): Promise<TestServer> {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const config = loadConfig(
    { COMPACTION_BACKGROUND: opts.compaction === true ? 'true' : 'false', ...opts.env },
    {
      store: opts.store ?? 'memory://',
      port: '0',
      'log-level': 'info',
      ...(opts.latencyMs ? { 'store-latency-ms': String(opts.latencyMs) } : {}),
      ...(opts.tokens ? { tokens: opts.tokens } : {}),
      ...(opts.maxBodyBytes ? { 'max-body-bytes': String(opts.maxBodyBytes) } : {}),
      ...(opts.maxIngestBytes ? { 'max-ingest-bytes': String(opts.maxIngestBytes) } : {}),
      ...(opts.drainTimeoutMs !== undefined ? { 'drain-timeout-ms': String(opts.drainTimeoutMs) } : {}),
      ...(opts.sealAfterMs !== undefined ? { 'seal-after-ms': String(opts.sealAfterMs) } : {}),
    },
  );
  const server = await startServer(config, pino({ level: 'info' }, sink), opts.clock !== undefined ? { clock: opts.clock } : {});
  return Object.assign(server, { logs });
}

export async function gql(
  url: string,
  query: string,
  variables: Record<string, unknown> = {},
  token?: string,
): Promise<{
  status: number;
  body: { data?: Record<string, unknown>; errors?: { message: string; extensions?: Record<string, unknown> }[] };
}> {
  const res = await fetch(`${url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ query, variables }),
  });
  return { status: res.status, body: (await res.json()) as never };
}
