/**
 * What a load balancer, a browser on another origin and a slow link meet before any operation:
 * readiness that asks the store (and says no when it cannot answer), CORS only for the origins
 * configured (a preflight answered without a token, nothing for other origins), and responses
 * compressed when the client asks, except event streams, which must flow as written.
 */
import { request } from 'node:http';
import { gunzipSync } from 'node:zlib';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../src/http/app.js';
import { loadConfig } from '../src/service/config.js';
import { testServer, type TestServer } from './support/test-server.js';

const TOKEN = 'hygiene-admin-token';
const APP_ORIGIN = 'http://app.example:3000';

/** A raw GET (a POST when given a body), so the test sees the bytes and headers as sent (fetch would decompress). */
function rawRequest(
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, method: body === undefined ? 'GET' : 'POST' }, (res) => {
      const chunks: Buffer[] = [];
      // An event stream never ends: its first bytes are enough to see how it is sent.
      const stream = res.headers['content-type']?.startsWith('text/event-stream') === true;
      res.on('data', (c: Buffer) => {
        chunks.push(c);
        if (stream) {
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) });
          req.destroy();
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('HTTP hygiene', () => {
  let s: TestServer;
  let open: TestServer;
  beforeAll(async () => {
    s = await testServer({ tokens: `admin:${TOKEN}:ada`, env: { BRANCHGRAPH_CORS_ORIGINS: APP_ORIGIN } });
    open = await testServer();
  });
  afterAll(async () => {
    await s.close();
    await open.close();
  });

  it('is ready when the store answers, without a token', async () => {
    const res = await fetch(`${s.url}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ready: true, store: 'memory' });
  });

  it('is not ready, with a stable code, when the store does not answer; liveness still holds', async () => {
    const failing = {
      graph: { store: { kind: 's3', head: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.9:7480')) } },
      metrics: { recordRequest: () => undefined },
    };
    const app = createApp({ service: failing as never, logger: pino({ level: 'silent' }), tokens: new Map() });
    const res = await app.request('/readyz');
    expect(res.status).toBe(503);
    const body = (await res.json()) as { error: { code: string; message: string; retryable: boolean } };
    expect(body.error).toMatchObject({ code: 'store_unavailable', retryable: true });
    expect(body.error.message).toContain('ECONNREFUSED');
    expect((await app.request('/healthz')).status).toBe(200);
  });

  it('answers a preflight from a configured origin without a token, and allows the headers the API uses', async () => {
    const res = await fetch(`${s.url}/branches/main/merge`, {
      method: 'OPTIONS',
      headers: {
        origin: APP_ORIGIN,
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization,content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(res.headers.get('access-control-allow-headers')).toContain('authorization');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
  });

  it('lets the configured origin read answers (and the request id), and still asks it for a token', async () => {
    const ok = await fetch(`${s.url}/branches`, { headers: { origin: APP_ORIGIN, authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe(APP_ORIGIN);
    expect(ok.headers.get('access-control-expose-headers')).toContain('x-request-id');
    const anonymous = await fetch(`${s.url}/branches`, { headers: { origin: APP_ORIGIN } });
    expect(anonymous.status).toBe(401);
  });

  it('gives no CORS header to an origin not configured, nor to any origin when none is', async () => {
    const other = await fetch(`${s.url}/branches`, { headers: { origin: 'http://evil.example', authorization: `Bearer ${TOKEN}` } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    const unconfigured = await fetch(`${open.url}/branches`, { headers: { origin: APP_ORIGIN } });
    expect(unconfigured.status).toBe(200);
    expect(unconfigured.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a configured origin that is not an origin', () => {
    expect(() => loadConfig({ BRANCHGRAPH_CORS_ORIGINS: 'http://ok.example,app.example/path' }, {})).toThrow(
      /"app.example\/path" is not an origin/,
    );
    expect(loadConfig({ BRANCHGRAPH_CORS_ORIGINS: ' * ' }, {}).corsOrigins).toEqual(['*']);
  });

  it('compresses what the client accepts compressed, to the same bytes', async () => {
    const plain = await rawRequest(`${s.url}/ui/assets/review.js`, {});
    expect(plain.headers['content-encoding']).toBeUndefined();
    const gzipped = await rawRequest(`${s.url}/ui/assets/review.js`, { 'accept-encoding': 'gzip' });
    expect(gzipped.headers['content-encoding']).toBe('gzip');
    expect(gzipped.body.length).toBeLessThan(plain.body.length / 2);
    expect(gunzipSync(gzipped.body).equals(plain.body)).toBe(true);
  });

  it('sends a small JSON answer as it is, with its length, and compresses a large one', async () => {
    const auth = { 'accept-encoding': 'gzip', authorization: `Bearer ${TOKEN}` };
    const small = await rawRequest(`${s.url}/branches/main`, auth);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(Number(small.headers['content-length'])).toBe(small.body.length);
    expect(JSON.parse(small.body.toString('utf8'))).toMatchObject({ name: 'main' });
    const query = encodeURIComponent('{ __schema { types { name description fields { name description } } } }');
    const large = await rawRequest(`${s.url}/graphql?query=${query}`, { ...auth, accept: 'application/json' });
    expect(large.headers['content-encoding']).toBe('gzip');
    const text = gunzipSync(large.body).toString('utf8');
    expect(text.length).toBeGreaterThan(16 * 1024);
    expect(JSON.parse(text).data.__schema.types.length).toBeGreaterThan(10);
  });

  it('gives every kind of JSON answer its length in bytes, not characters', async () => {
    const auth = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
    const answers = [
      // REST: an operation's answer, and an error naming what the request asked for.
      await rawRequest(`${s.url}/branches`, auth, JSON.stringify({ name: 'sized', from: 'main' })),
      await rawRequest(`${s.url}/branches/n%C3%B6pe`, auth),
      // GraphQL, on both endpoints: a validation error quoting the value it refused.
      await rawRequest(`${s.url}/graphql`, auth, JSON.stringify({ query: '{ __type(name: ["nöpe"]) { name } }' })),
      await rawRequest(`${s.url}/branches/main/graphql`, auth, JSON.stringify({ query: '{ __type(name: ["nöpe"]) { name } }' })),
      await rawRequest(`${s.url}/branches/main/graphql`, auth, JSON.stringify({ query: '{ __typename }' })),
      // The routes' own answers: health, readiness, a refusal, a path no route serves.
      await rawRequest(`${s.url}/healthz`, {}),
      await rawRequest(`${s.url}/readyz`, {}),
      await rawRequest(`${s.url}/branches/main`, {}),
      await rawRequest(`${s.url}/no/such/route`, auth),
    ];
    for (const a of answers) {
      expect(a.headers['content-type']).toMatch(/json/);
      expect(Number(a.headers['content-length'])).toBe(a.body.length);
      JSON.parse(a.body.toString('utf8'));
    }
    for (const a of answers.slice(1, 4)) expect(a.body.toString('utf8')).toContain('ö');
  });

  it('sends an event stream uncompressed, so each event arrives when it happens', async () => {
    const res = await rawRequest(`${s.url}/events/stream`, { 'accept-encoding': 'gzip', authorization: `Bearer ${TOKEN}` });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(res.headers['content-encoding']).toBeUndefined();
  });
});
