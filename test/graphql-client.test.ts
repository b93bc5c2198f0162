/**
 * The GraphQL client derived from the operation table answers what the
 * embedded API answers, operation by operation, reshaped fields read back
 * (a merge's union, a page's items, a delete's true); a refusal comes back
 * as the same typed error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { graphqlClient } from '../src/http/graphql-client.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { testServer, type TestServer } from './support/test-server.js';

let s: TestServer;
let api: BranchgraphApi;
let gql: BranchgraphApi;

beforeAll(async () => {
  s = await testServer();
  api = embeddedApi(s.service, { transport: 'embedded' });
  gql = graphqlClient(`${s.url}/graphql`);
  await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int? }' });
  await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: 'a', v: 1 } }] });
  await api.createBranch({ name: 'side' });
  await api.write({ branch: 'side', ops: [{ op: 'update', table: 'P', values: { id: 'a', v: 2 } }] });
  await api.write({ branch: 'main', ops: [{ op: 'update', table: 'P', values: { id: 'a', v: 3 } }] });
  await api.createTag({ name: 't1', from: 'main' });
});
afterAll(() => s.close());

describe('the GraphQL client', () => {
  it('reads as the embedded API does', async () => {
    expect(await gql.getBranch({ name: 'side' })).toEqual(await api.getBranch({ name: 'side' }));
    expect(await gql.listTables({ at: { tag: 't1' } })).toEqual(await api.listTables({ at: { tag: 't1' } }));
    expect(await gql.log({ at: 'main', limit: 2 })).toEqual(await api.log({ at: 'main', limit: 2 }));
    expect(await gql.diff({ from: 'main', to: 'side', mode: 'three-dot' })).toEqual(
      await api.diff({ from: 'main', to: 'side', mode: 'three-dot' }),
    );
    expect(await gql.listTags({})).toEqual(await api.listTags({}));
    expect(await gql.mergeBase({ from: 'main', to: 'side' })).toEqual(await api.mergeBase({ from: 'main', to: 'side' }));
    const { branches, damaged, nextCursor } = await api.listBranches({});
    expect(await gql.listBranches({})).toEqual({ branches, damaged, nextCursor });
  });

  it('reads a merge union back as the merge result, conflicts and all', async () => {
    const viaGraphql = await gql.mergeBranch({ source: 'side', dryRun: true });
    const embedded = await api.mergeBranch({ source: 'side', dryRun: true });
    expect(viaGraphql.status).toBe('conflicts');
    if (viaGraphql.status !== 'conflicts' || embedded.status !== 'conflicts') throw new Error('expected conflicts');
    expect(viaGraphql.report).toEqual(embedded.report);
    expect([viaGraphql.sourceHead, viaGraphql.targetHead, viaGraphql.base]).toEqual([
      embedded.sourceHead,
      embedded.targetHead,
      embedded.base,
    ]);
  });

  it('reads a delete back as the deleted name, and a refusal as the typed error', async () => {
    await api.createBranch({ name: 'gone' });
    expect(await gql.deleteBranch({ name: 'gone' })).toEqual({ deleted: 'gone' });
    await expect(gql.getBranch({ name: 'gone' })).rejects.toMatchObject({ code: 'not_found' });
  });
});
