/**
 * `mergeBase`: the newest commits two refs both reach, the same over the
 * embedded API, REST and GraphQL; several after a criss-cross, none for
 * refs that share no history. It reads no table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { testServer, type TestServer } from './support/test-server.js';

let s: TestServer;
let api: BranchgraphApi;
const put = (branch: string, id: string) => api.write({ branch, ops: [{ op: 'upsert', table: 'P', values: { id } }] });

beforeAll(async () => {
  s = await testServer();
  api = embeddedApi(s.service, { transport: 'embedded' });
  await api.applySchema({ branch: 'main', schema: 'node P { id: string @key }' });
  await api.createBranch({ name: 'side' });
});
afterAll(() => s.close());

describe('mergeBase', () => {
  it('is the fork point of a branch and main, whichever way round', async () => {
    const fork = (await api.getBranch({ name: 'main' })).head.id;
    await put('main', 'm1');
    await put('side', 's1');
    const r = await api.mergeBase({ from: 'main', to: 'side' });
    expect(r.bases).toEqual([fork]);
    expect(r.from).toBe((await api.getBranch({ name: 'main' })).head.id);
    expect(r.to).toBe((await api.getBranch({ name: 'side' })).head.id);
    expect((await api.mergeBase({ from: 'side', to: 'main' })).bases).toEqual([fork]);
  });

  it('of a ref and its own ancestor is the ancestor', async () => {
    const head = (await api.getBranch({ name: 'main' })).head.id;
    expect((await api.mergeBase({ from: 'main', to: 'main~1' })).bases).toEqual([
      (await api.log({ at: 'main~1', limit: 1 })).commits[0]?.id,
    ]);
    expect((await api.mergeBase({ from: 'main', to: 'main' })).bases).toEqual([head]);
  });

  it('after a criss-cross gives every best base', async () => {
    await api.createBranch({ name: 'x' });
    await api.createBranch({ name: 'y' });
    await put('x', 'x1');
    await put('y', 'y1');
    const x1 = (await api.getBranch({ name: 'x' })).head.id;
    const y1 = (await api.getBranch({ name: 'y' })).head.id;
    // Each merges the other's first commit: two best common ancestors, neither reaching the other.
    await api.createBranch({ name: 'x2', from: 'x' });
    await api.mergeBranch({ source: 'y', into: 'x' });
    await api.mergeBranch({ source: 'x2', into: 'y' });
    const r = await api.mergeBase({ from: 'x', to: 'y' });
    expect([...r.bases].sort()).toEqual([x1, y1].sort());
  });

  it('answers the same over REST and GraphQL', async () => {
    const embedded = await api.mergeBase({ from: 'main', to: 'side' });
    const rest = await fetch(`${s.url}/merge-base?from=main&to=side`).then((r) => r.json());
    expect(rest).toEqual(embedded);
    const gql = await fetch(`${s.url}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ mergeBase(from: "main", to: "side") { from to bases } }' }),
    }).then((r) => r.json());
    expect(gql).toEqual({ data: { mergeBase: embedded } });
  });

  it('refuses a ref that does not exist with not_found, on every transport', async () => {
    await expect(api.mergeBase({ from: 'main', to: 'nope' })).rejects.toMatchObject({ code: 'not_found' });
    const rest = await fetch(`${s.url}/merge-base?from=main&to=nope`);
    expect(rest.status).toBe(404);
    expect(await rest.json()).toMatchObject({ error: { code: 'not_found' } });
  });
});
