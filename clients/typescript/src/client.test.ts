import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
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
    await bg.POST('/branches/{id}/writes', {
      params: { path: { id: 'main' } },
      body: { ops: [{ op: 'upsert', table: 'Person', values: { id: 'ada', name: 'A' } }] },
    });
    await bg.POST('/branches/{id}/writes', {
      params: { path: { id: 'feature' } },
      body: { ops: [{ op: 'update', table: 'Person', values: { id: 'ada', name: 'Ada L.' } }] },
    });
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

describe('typed client README', () => {
  it('compiles the calls the READMEs show', () => {
    // Every ```ts block that imports the client, with the package name pointed at this source.
    const blocks = ['clients/typescript/README.md', 'README.md'].flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/```ts\n([\s\S]*?)```/g)]
        .map((m) => m[1] as string)
        .filter((code) => code.includes("from '@branchgraph/client'")),
    );
    expect(blocks.length).toBe(2);
    const dir = mkdtempSync(path.join(tmpdir(), 'bg-readme-'));
    const files = blocks.map((code, i) => {
      const file = path.join(dir, `readme-${i}.mts`);
      writeFileSync(
        file,
        `${code.replace("from '@branchgraph/client'", `from ${JSON.stringify(path.resolve('clients/typescript/src/index.js'))}`)}\nexport {};\n`,
      );
      return file;
    });
    const tsc = path.resolve('node_modules/typescript/bin/tsc');
    const args = [
      tsc,
      '--ignoreConfig',
      '--noEmit',
      '--strict',
      '--target',
      'ES2022',
      '--module',
      'NodeNext',
      '--moduleResolution',
      'NodeNext',
      '--skipLibCheck',
      '--types',
      'node',
      '--typeRoots',
      path.resolve('node_modules/@types'),
      ...files,
    ];
    const r = spawnSync(process.execPath, args, { encoding: 'utf8' });
    expect(r.stdout + r.stderr).toBe('');
    expect(r.status).toBe(0);
  }, 60_000);
});
