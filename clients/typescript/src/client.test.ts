import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testServer, type TestServer } from '../../../test/support/test-server.js';
import { createBranchgraphClient, isErrorEnvelope } from './index.js';

// The README's calls, against a live server, in its order.
describe('typed client', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await testServer({ tokens: 'admin:ci-admin-token,read:ci-reader-token' });
  });
  afterAll(async () => s.close());

  it("runs the README's round: schema, branch, write, dry run, conflict, rows", async () => {
    const bg = createBranchgraphClient({ baseUrl: s.url, token: 'ci-admin-token' });
    const schema = await bg.POST('/branches/{id}/schema', {
      params: { path: { id: 'main' } },
      body: { schema: 'node Person { id: string @key\n name: string }' },
    });
    expect(schema.data?.commit?.kind).toBe('schema');
    expect((await bg.POST('/branches', { body: { name: 'feature' } })).response.status).toBe(201);
    await bg.POST('/branches/{id}/writes', {
      params: { path: { id: 'feature' } },
      body: { ops: [{ op: 'upsert', table: 'Person', values: { id: 'ada', name: 'Ada' } }] },
    });

    const preview = await bg.POST('/branches/{id}/merge', { params: { path: { id: 'feature' } }, body: { dryRun: true } });
    expect(preview.data).toMatchObject({ status: 'success', dryRun: true, outcome: 'fast_forward' });

    // Both sides insert ada, differently: the merge returns the conflict report as the error, and publishes nothing.
    await bg.POST('/branches/{id}/writes', { params: { path: { id: 'main' } }, body: { ops: [{ op: 'upsert', table: 'Person', values: { id: 'ada', name: 'A' } }] } });
    await bg.POST('/branches/{id}/writes', { params: { path: { id: 'feature' } }, body: { ops: [{ op: 'update', table: 'Person', values: { id: 'ada', name: 'Ada L.' } }] } });
    const merged = await bg.POST('/branches/{id}/merge', { params: { path: { id: 'feature' } }, body: {} });
    expect(merged.response.status).toBe(409);
    expect(isErrorEnvelope(merged.error)).toBe(false);
    const report = merged.error && 'report' in merged.error ? merged.error.report : undefined;
    expect(report?.items.map((c) => [c.kind, c.key, c.property])).toEqual([['DivergentInsert', 'ada', null]]);

    const page = await bg.GET('/tables/{table}/rows', { params: { path: { table: 'Person' }, query: { at: 'main', limit: 100 } } });
    expect(page.data?.items).toEqual([{ key: 'ada', row: { id: 'ada', name: 'A' } }]);
  });

  it('returns error envelopes with the stable code, and sends the token', async () => {
    const reader = createBranchgraphClient({ baseUrl: s.url, token: 'ci-reader-token' });
    const refused = await reader.POST('/branches', { body: { name: 'x' } });
    expect(refused.response.status).toBe(403);
    expect(isErrorEnvelope(refused.error) && refused.error.error.code).toBe('forbidden');
    const anonymous = await createBranchgraphClient({ baseUrl: s.url }).GET('/branches');
    expect(isErrorEnvelope(anonymous.error) && anonymous.error.error.code).toBe('unauthorized');
    const missing = await reader.GET('/branches/{id}', { params: { path: { id: 'nope' } } });
    expect(missing.response.status).toBe(404);
    expect(isErrorEnvelope(missing.error) && missing.error.error.code).toBe('not_found');
  });
});
