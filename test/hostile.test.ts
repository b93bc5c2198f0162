/**
 * Hostile and unlucky input at the HTTP edge: whatever a client sends, it
 * gets a clear error with a stable code, never internals, and nothing
 * stored changes.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { createApp } from '../src/http/app.js';
import { BranchgraphService } from '../src/service/service.js';
import { MemoryStore } from '../src/store/memory-store.js';

async function app() {
  const logs: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  const service = new BranchgraphService(await Graph.open(new MemoryStore()), {});
  return { service, logs, app: createApp({ service, logger: pino({ level: 'info' }, sink), tokens: new Map() }) };
}

const gql = (query: string, variables: Record<string, unknown> = {}) => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query, variables }) });

describe('internal errors', () => {
  it('regression: an unexpected failure reaches REST and GraphQL clients as a generic message with the request id; the detail is only in the log', async () => {
    const { service, logs, app: a } = await app();
    service.listBranches = async () => {
      throw new Error('secret detail: /var/lib/data at offset 42');
    };
    const rest = await a.request('/branches', { headers: { 'x-request-id': 'req-1' } });
    expect(rest.status).toBe(500);
    const body = (await rest.json()) as { error: { code: string; message: string; details?: unknown } };
    expect(body.error.code).toBe('internal');
    expect(body.error.message).toContain('req-1');
    expect(JSON.stringify(body)).not.toContain('secret');
    const g = await a.request('/graphql', { ...gql('{ branches { name } }'), headers: { 'content-type': 'application/json', 'x-request-id': 'req-2' } });
    const gb = (await g.json()) as { errors: { message: string; extensions: { code: string } }[] };
    expect(gb.errors[0]?.extensions.code).toBe('internal');
    expect(gb.errors[0]?.message).toContain('req-2');
    expect(JSON.stringify(gb)).not.toContain('secret');
    const logged = JSON.stringify(logs.filter((l) => l.msg === 'unexpected error'));
    expect(logged).toContain('secret detail');
    expect(logged).toContain('req-1');
    expect(logged).toContain('req-2');
  });
});

describe('GraphQL documents', () => {
  it('regression: a selection or an input literal nested thousands deep is a 400 invalid_input, not a 500', async () => {
    const { app: a, service } = await app();
    await service.applySchema('main', { schema: 'node T { id: string @key\n v: json? }' }, { transport: 'embedded' });
    const deepSelection = `{ ${'branches { head { '.repeat(1500)}id${' } }'.repeat(1500)} }`;
    const deepLiteral = `mutation { write(branch: "main", input: { ops: [{ op: "insert", table: "T", values: { id: "t", v: ${'['.repeat(3000)}1${']'.repeat(3000)} } }] }) { inserted } }`;
    const deepVariables = gql('mutation($i: WriteInput!) { write(branch: "main", input: $i) { inserted } }', { i: { ops: [{ op: 'insert', table: 'T', values: { id: 't', v: JSON.parse(`${'['.repeat(3000)}1${']'.repeat(3000)}`) } }] } });
    for (const init of [gql(deepSelection), gql(deepLiteral), deepVariables]) {
      const r = await a.request('/graphql', init);
      // A document refused before execution is HTTP 400; a resolver's refusal is a GraphQL error in a 200.
      expect(r.status).toBe(init === deepVariables ? 200 : 400);
      const b = (await r.json()) as { errors: { extensions: { code: string } }[] };
      expect(b.errors[0]?.extensions.code).toBe('invalid_input');
    }
    // REST bodies with a value nested that deep are refused the same way, and nothing was written.
    const rest = await a.request('/branches/main/writes', { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{"ops":[{"op":"insert","table":"T","values":{"id":"t","v":${'['.repeat(3000)}1${']'.repeat(3000)}}}]}` });
    expect(rest.status).toBe(400);
    expect((await service.scan({ branch: 'main' }, 'T', {}, { transport: 'embedded' })).items).toEqual([]);
  });
});
