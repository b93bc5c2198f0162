/**
 * The commit log: every reachable commit once, newest first, paged by a
 * cursor with no depth limit, filtered by table, entity, author, kind,
 * time and first parents, the same embedded, over REST and over GraphQL;
 * bad filters and foreign cursors are refused with invalid_input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { RestClient } from '../src/http/rest-client.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n n: int? }\nnode Q { id: string @key }';
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('commit log filters and cursors', () => {
  let s: TestServer;
  let apis: [string, BranchgraphApi][];
  const ids: Record<string, string> = {};
  let middle = '';
  beforeAll(async () => {
    s = await testServer();
    const api = embeddedApi(s.service, { transport: 'embedded', actor: 'ann' });
    const bob = embeddedApi(s.service, { transport: 'embedded', actor: 'bob' });
    const id = async (w: Promise<{ commit: { id: string } | null }>) => (await w).commit?.id as string;
    const put = (table: string, values: Record<string, unknown>) => ({ branch: 'main', ops: [{ op: 'upsert' as const, table, values }] });
    ids.schema = await id(api.applySchema({ branch: 'main', schema: SCHEMA }));
    ids.p1 = await id(api.write(put('P', { id: 'a', n: 1 })));
    ids.q1 = await id(bob.write(put('Q', { id: 'q' })));
    await pause(5);
    middle = new Date().toISOString();
    await pause(5);
    await api.createBranch({ name: 'f' });
    ids.f1 = await id(bob.write({ ...put('P', { id: 'b', n: 1 }), branch: 'f' }));
    ids.p2 = await id(api.write(put('P', { id: 'a', n: 2 })));
    const m = await api.mergeBranch({ source: 'f', into: 'main', message: 'bring f' });
    ids.merge = m.status === 'success' ? (m.commit?.id as string) : '';
    await api.compact({ branch: 'main', mode: 'full' });
    apis = [
      ['embedded', api],
      ['rest', new RestClient(s.url)],
    ];
  });
  afterAll(() => s.close());

  const all = async (api: BranchgraphApi, input: Parameters<BranchgraphApi['log']>[0] = {}) => {
    const out: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.log({ ...input, limit: 2, ...(cursor ? { cursor } : {}) });
      out.push(...page.commits.map((c) => c.id));
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
    return out;
  };

  it('pages the whole log with cursors, each commit once, the same as one big page', async () => {
    for (const [, api] of apis) {
      const one = await api.log({ limit: 1000 });
      expect(one.nextCursor).toBeNull();
      expect(one.at).toBe(one.commits[0]?.id);
      expect(await all(api)).toEqual(one.commits.map((c) => c.id));
      expect(new Set(one.commits.map((c) => c.id)).size).toBe(one.commits.length);
      // The compaction after the merge re-laid the merge's tables and added no commit: the head is the merge.
      expect(one.commits.map((c) => c.kind)).toEqual(['merge', 'write', 'write', 'write', 'write', 'schema', 'init']);
      expect(one.at).toBe(ids.merge);
    }
  });

  it('filters by table (a compaction is no commit), entity, author, kind, time and first parents', async () => {
    for (const [, api] of apis) {
      const ofP = await all(api, { table: 'P' });
      expect(ofP).toEqual([ids.merge, ids.p2, ids.f1, ids.p1]);
      expect(await all(api, { table: 'P', kind: 'compaction' })).toEqual([]);
      expect(await all(api, { table: 'P', key: 'a' })).toEqual([ids.p2, ids.p1]);
      expect(await all(api, { author: 'bob' })).toEqual([ids.f1, ids.q1]);
      expect(await all(api, { kind: 'merge' })).toEqual([ids.merge]);
      expect(await all(api, { since: middle, kind: 'write' })).toEqual([ids.p2, ids.f1]);
      expect(await all(api, { until: middle, kind: 'write' })).toEqual([ids.q1, ids.p1]);
      expect(await all(api, { firstParent: true, kind: 'write' })).toEqual([ids.p2, ids.q1, ids.p1]);
    }
  });

  it('refuses a cursor of another filter, a key without its table, an unknown kind and a time that is not RFC 3339', async () => {
    for (const [, api] of apis) {
      const page = await api.log({ limit: 1 });
      await expect(api.log({ limit: 1, author: 'bob', cursor: page.nextCursor as string })).rejects.toMatchObject({
        code: 'invalid_input',
      });
      await expect(api.log({ key: 'a' })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(api.log({ kind: 'merge,squash' })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(api.log({ since: 'yesterday' })).rejects.toMatchObject({ code: 'invalid_input' });
      await expect(api.log({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ code: 'invalid_input' });
    }
  });

  it('answers over GraphQL: commits as a page, log as its list, bad filters as typed errors', async () => {
    const r = await gql(s.url, '{ commits(table: "P", key: "a", limit: 1) { at commits { id } nextCursor } log(author: "bob") { id } }');
    const data = r.body.data as { commits: { at: string; commits: { id: string }[]; nextCursor: string | null }; log: { id: string }[] };
    expect(data.commits.commits.map((c) => c.id)).toEqual([ids.p2]);
    expect(data.commits.nextCursor).not.toBeNull();
    expect(data.log.map((c) => c.id)).toEqual([ids.f1, ids.q1]);
    const next = await gql(
      s.url,
      'query($c: String) { commits(table: "P", key: "a", limit: 5, cursor: $c) { commits { id } nextCursor } }',
      {
        c: data.commits.nextCursor,
      },
    );
    expect((next.body.data as { commits: { commits: { id: string }[] } }).commits.commits.map((c) => c.id)).toEqual([ids.p1]);
    const bad = await gql(s.url, '{ log(kind: "squash") { id } }');
    expect(bad.body.errors?.[0]?.extensions?.code).toBe('invalid_input');
  });
});
