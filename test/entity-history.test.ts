/**
 * Entity history: every version of one entity along first parents, newest
 * first, with the commit that made it and what changed, paged by cursor,
 * the same embedded, over REST and over GraphQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { RestClient } from '../src/http/rest-client.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n n: int?\n s: string? }';
const put = (values: Record<string, unknown>) => ({ ops: [{ op: 'upsert' as const, table: 'P', values }] });

describe('entity history', () => {
  let s: TestServer;
  let apis: [string, BranchgraphApi][];
  beforeAll(async () => {
    s = await testServer();
    const api = embeddedApi(s.service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    await api.write({ branch: 'main', ...put({ id: 'a', n: 1 }), message: 'create a' });
    await api.write({ branch: 'main', ...put({ id: 'b', n: 1 }), message: 'create b' });
    await api.write({ branch: 'main', ...put({ id: 'a', n: 2, s: 'x' }), message: 'update a' });
    await api.write({ branch: 'main', ops: [{ op: 'delete', table: 'P', values: { id: 'a' } }], message: 'delete a' });
    apis = [
      ['embedded', api],
      ['rest', new RestClient(s.url)],
    ];
  });
  afterAll(() => s.close());

  it('lists the commits that changed the entity, newest first, with before, after and the properties changed', async () => {
    for (const [, api] of apis) {
      const { versions, nextCursor } = await api.entityHistory({ table: 'P', key: 'a' });
      expect(versions.map((v) => [v.commit.message, v.change, v.changed])).toEqual([
        ['delete a', 'deleted', ['id', 'n', 's']],
        ['update a', 'updated', ['n', 's']],
        ['create a', 'inserted', ['id', 'n']],
      ]);
      expect(versions[1]).toMatchObject({ before: { id: 'a', n: 1, s: null }, after: { id: 'a', n: 2, s: 'x' } });
      expect(nextCursor).toBeNull();
    }
  });

  it('pages by cursor without skipping or repeating a version, and refuses a cursor of another entity', async () => {
    for (const [, api] of apis) {
      const first = await api.entityHistory({ table: 'P', key: 'a', limit: 2 });
      expect(first.versions.map((v) => v.change)).toEqual(['deleted', 'updated']);
      const rest = await api.entityHistory({ table: 'P', key: 'a', limit: 2, cursor: first.nextCursor as string });
      expect(rest.versions.map((v) => v.change)).toEqual(['inserted']);
      await expect(api.entityHistory({ table: 'P', key: 'b', cursor: first.nextCursor as string })).rejects.toMatchObject({
        code: 'invalid_input',
      });
    }
  });

  it('answers the same over GraphQL', async () => {
    const r = await gql(s.url, '{ history(table: "P", key: "a", limit: 2) { versions { change changed commit { message } } nextCursor } }');
    const h = r.body.data?.history as { versions: { change: string; commit: { message: string } }[]; nextCursor: string | null };
    expect(h.versions.map((v) => [v.change, v.commit.message])).toEqual([
      ['deleted', 'delete a'],
      ['updated', 'update a'],
    ]);
    expect(h.nextCursor).not.toBeNull();
  });
});
