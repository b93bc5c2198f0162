/**
 * Refs into history (model/ref-grammar.ts, graph/ref-resolver.ts): `~N`
 * first parents, `^N` the parents of a merge, chains of both, a branch as it
 * stood at a time, and commit-id prefixes (one commit, or a typed error
 * listing the candidates), the same embedded, over REST and over both
 * GraphQL endpoints.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { RestClient } from '../src/http/rest-client.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n v: int }';
const put = (id: string, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'P', values: { id, v } }] });
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('refs into history', () => {
  let s: TestServer;
  let apis: [string, BranchgraphApi][];
  const ids: Record<string, string> = {};
  let between = '';
  beforeAll(async () => {
    s = await testServer();
    const api = embeddedApi(s.service, { transport: 'embedded' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    ids.one = (await api.write({ branch: 'main', ...put('a', 1) })).commit?.id as string;
    await pause(5);
    // main@{between} is main as it stood after the first write.
    between = new Date().toISOString();
    await pause(5);
    ids.two = (await api.write({ branch: 'main', ...put('a', 2) })).commit?.id as string;
    await api.createBranch({ name: 'f', from: { branch: 'main' } });
    ids.side = (await api.write({ branch: 'f', ...put('b', 7) })).commit?.id as string;
    ids.three = (await api.write({ branch: 'main', ...put('a', 3) })).commit?.id as string;
    const merged = await api.mergeBranch({ source: 'f', into: 'main' });
    if (merged.status !== 'success') throw new Error('the merge conflicted');
    ids.merge = merged.commit?.id as string;
    apis = [
      ['embedded', api],
      ['rest', new RestClient(s.url)],
    ];
  });
  afterAll(() => s.close());

  const commitAt = async (api: BranchgraphApi, at: string) => (await api.log({ at, limit: 1 })).commits[0]?.id;

  it('walks first parents with ~N, a merge parent with ^N, and chains of both', async () => {
    for (const [name, api] of apis) {
      const cases: [string, string | undefined][] = [
        ['main~0', ids.merge],
        ['main^0', ids.merge],
        ['main~', ids.three],
        ['main~1', ids.three],
        ['main^1', ids.three],
        ['main~2', ids.two],
        ['main^2', ids.side],
        ['main^2~1', ids.two],
        ['main~3', ids.one],
        [`commit:${ids.three}~1`, ids.two],
        ['f~1', ids.two],
      ];
      for (const [ref, want] of cases) expect({ name, ref, commit: await commitAt(api, ref) }).toEqual({ name, ref, commit: want });
      expect((await api.getRow({ table: 'P', key: 'a', at: 'main~2' })).row).toEqual({ id: 'a', v: 2 });
      await expect(api.getRow({ table: 'P', key: 'b', at: 'main~1' })).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('reads a branch as it stood at a time, by its own history of heads', async () => {
    for (const [name, api] of apis) {
      expect({ name, commit: await commitAt(api, `main@{${between}}`) }).toEqual({ name, commit: ids.one });
      expect({ name, commit: await commitAt(api, `main@{${new Date().toISOString()}}~1`) }).toEqual({ name, commit: ids.three });
      await expect(commitAt(api, 'main@{2001-01-01T00:00:00Z}')).rejects.toMatchObject({ code: 'not_found', details: { branch: 'main' } });
    }
  });

  it('takes a commit-id prefix that names one commit, and lists the candidates of one that names several', async () => {
    const all = Object.values(ids);
    // Every commit there is (the schema's and the first one's too): a prefix is unique among them all.
    const api = apis[0]?.[1];
    if (api === undefined) throw new Error('no transport');
    const every = [
      ...new Set(
        [...(await api.log({ at: 'main', limit: 1000 })).commits, ...(await api.log({ at: 'f', limit: 1000 })).commits].map((c) => c.id),
      ),
    ];
    // Ids begin with their time: commits made moments apart share their first characters.
    const shared = (a: string, b: string) => {
      let n = 0;
      while (n < a.length && a[n] === b[n]) n++;
      return n;
    };
    for (const [name, api] of apis) {
      for (const id of all) {
        const unique = Math.max(8, ...every.filter((o) => o !== id).map((o) => shared(id, o) + 1));
        expect({ name, commit: await commitAt(api, `commit:${id.slice(0, unique)}`) }).toEqual({ name, commit: id });
      }
      const pair = every.flatMap((a) => every.filter((b) => b !== a && shared(a, b) >= 8).map((b) => [a, b]))[0];
      if (pair !== undefined) {
        const prefix = (pair[0] as string).slice(0, shared(pair[0] as string, pair[1] as string));
        const refused = await commitAt(api, `commit:${prefix}`).catch((e: unknown) => e);
        expect(refused).toMatchObject({ code: 'ambiguous_ref', details: { prefix } });
        expect((refused as { details: { candidates: string[] } }).details.candidates).toEqual(expect.arrayContaining(pair));
      }
      await expect(commitAt(api, 'commit:ZZZZZZZZZZ')).rejects.toMatchObject({ code: 'not_found' });
      // A bare prefix, where no branch has that name. Commits made in one millisecond differ only in
      // their last characters (ids increase within it), so the prefix is as long as uniqueness needs.
      const merge = ids.merge as string;
      const bare = Math.max(20, ...every.filter((o) => o !== merge).map((o) => shared(merge, o) + 1));
      expect(await commitAt(api, merge.slice(0, bare))).toBe(merge);
    }
  });

  it('answers refs that name no commit, or are not refs, with typed errors', async () => {
    for (const [, api] of apis) {
      await expect(commitAt(api, 'main~9')).rejects.toMatchObject({ code: 'not_found' });
      // A missing branch that could be an id prefix, but is none, is the branch's not_found.
      await expect(commitAt(api, 'ZZZZZZZZZZ')).rejects.toMatchObject({ code: 'not_found', details: { branch: 'ZZZZZZZZZZ' } });
      await expect(commitAt(api, 'main^3')).rejects.toMatchObject({ code: 'not_found' });
      for (const bad of ['main~x', 'main@{yesterday}', 'commit:01M8W', `commit:${ids.one}@{2026-01-01T00:00:00Z}`])
        await expect(commitAt(api, bad)).rejects.toMatchObject({ code: 'invalid_input' });
    }
    const res = await fetch(`${s.url}/tables/P/rows/a?at=${encodeURIComponent('main~x')}`);
    expect(res.status).toBe(400);
  });

  it('reads history refs through GraphQL, and the typed endpoint names the commit each ref read', async () => {
    const admin = await gql(s.url, '{ row(table: "P", key: "a", at: "main~2") }');
    expect(admin.body.data).toEqual({ row: { id: 'a', v: 2 } });
    const res = await fetch(`${s.url}/branches/main/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ a: getP(id: "a", at: "main~2") { v } b: getP(id: "b", at: "main^2") { v } }' }),
    });
    const body = (await res.json()) as { data: unknown; extensions: { branchgraph: { commits: Record<string, string> } } };
    expect(body.data).toEqual({ a: { v: 2 }, b: { v: 7 } });
    expect(body.extensions.branchgraph.commits).toMatchObject({ 'main~2': ids.two, 'main^2': ids.side });
  });
});

describe('branch reset', () => {
  it('moves a branch to any commit, the same embedded, over REST and over GraphQL, and writes build on it', async () => {
    const s = await testServer({ tokens: 'admin:admin-token,write:writer-token' });
    try {
      const api = embeddedApi(s.service, { transport: 'embedded' });
      await api.applySchema({ branch: 'main', schema: SCHEMA });
      const heads: string[] = [];
      for (let v = 1; v <= 4; v++) heads.push((await api.write({ branch: 'main', ...put('a', v) })).commit?.id as string);
      const head = () => api.getBranch({ name: 'main' }).then((b) => b.head.id);
      // Embedded: back two commits.
      expect((await api.resetBranch({ name: 'main', to: 'main~2', expectedHead: heads[3] as string })).head.id).toBe(heads[1]);
      expect((await api.getRow({ table: 'P', key: 'a' })).row).toEqual({ id: 'a', v: 2 });
      // REST, with an admin token: forward again, to a commit the branch no longer reaches.
      const rest = new RestClient(s.url, 'admin-token');
      expect((await rest.resetBranch({ name: 'main', to: `commit:${heads[3]}`, expectedHead: heads[1] as string })).head.id).toBe(heads[3]);
      // GraphQL.
      const g = await gql(
        s.url,
        `mutation { resetBranch(name: "main", to: "main~3", expectedHead: "${heads[3]}") { head { id } } }`,
        {},
        'admin-token',
      );
      expect(g.body.data).toEqual({ resetBranch: { head: { id: heads[0] } } });
      // A write lands on the commit the branch was moved to.
      const next = await api.write({ branch: 'main', ...put('a', 9) });
      expect(next.commit?.parents).toEqual([heads[0]]);
      expect(await head()).toBe(next.commit?.id);
    } finally {
      await s.close();
    }
  });

  it('refuses a stale expected head, a caller who is not an admin, and what names no branch or commit, changing nothing', async () => {
    const s = await testServer({ tokens: 'admin:admin-token,write:writer-token' });
    try {
      const api = embeddedApi(s.service, { transport: 'embedded' });
      await api.applySchema({ branch: 'main', schema: SCHEMA });
      const one = (await api.write({ branch: 'main', ...put('a', 1) })).commit?.id as string;
      const two = (await api.write({ branch: 'main', ...put('a', 2) })).commit?.id as string;
      await expect(api.resetBranch({ name: 'main', to: 'main~1', expectedHead: one })).rejects.toMatchObject({
        code: 'head_moved',
        details: { branch: 'main', expected: one, actual: two },
      });
      await expect(
        new RestClient(s.url, 'writer-token').resetBranch({ name: 'main', to: 'main~1', expectedHead: two }),
      ).rejects.toMatchObject({
        code: 'forbidden',
      });
      await expect(api.resetBranch({ name: 'nope', to: 'main~1', expectedHead: two })).rejects.toMatchObject({ code: 'not_found' });
      await expect(api.resetBranch({ name: 'main', to: 'main~5', expectedHead: two })).rejects.toMatchObject({ code: 'not_found' });
      await expect(api.resetBranch({ name: 'main', to: 'main~x', expectedHead: two })).rejects.toMatchObject({ code: 'invalid_input' });
      expect((await api.getBranch({ name: 'main' })).head.id).toBe(two);
    } finally {
      await s.close();
    }
  });

  it('regression: a branch with pending WAL rows resets with the head the caller read, and a refused reset folds nothing', async () => {
    // No catch-up but the reset's own: the rows stay pending until it folds them.
    const s = await testServer({ env: { CATCHUP_INTERVAL_MS: '3600000', CATCHUP_TRIGGER_GENERATIONS: '1000000' } });
    try {
      const api = embeddedApi(s.service, { transport: 'embedded' });
      await api.applySchema({ branch: 'main', schema: SCHEMA });
      const one = (await api.write({ branch: 'main', ...put('a', 1) })).commit?.id as string;
      const two = (await api.write({ branch: 'main', ...put('a', 2) })).commit?.id as string;
      await api.ingest({ branch: 'main', ops: put('w', 1).ops });
      const read = (await api.getBranch({ name: 'main' })).head.id;
      expect(read).toBe(two);
      const log = async () => (await api.log({ limit: 100 })).commits.map((c) => c.id);
      const before = await log();
      // A stale expected head is refused before the pending rows are folded: nothing is published.
      await expect(api.resetBranch({ name: 'main', to: 'main~1', expectedHead: one })).rejects.toMatchObject({ code: 'head_moved' });
      expect(await log()).toEqual(before);
      expect((await api.walStatus({ branch: 'main' })).pendingGenerations).toBe(1);
      // The head the caller read: the rows are folded into the old lineage, then the branch moves.
      expect((await api.resetBranch({ name: 'main', to: 'main~1', expectedHead: read })).head.id).toBe(one);
      expect((await api.getRow({ table: 'P', key: 'a' })).row).toMatchObject({ v: 1 });
    } finally {
      await s.close();
    }
  });

  it('keeps the head it moved away from readable as <branch>@{time} and by id, and GC keeps it for its grace', async () => {
    const s = await testServer();
    try {
      const api = embeddedApi(s.service, { transport: 'embedded' });
      await api.applySchema({ branch: 'main', schema: SCHEMA });
      await api.write({ branch: 'main', ...put('a', 1) });
      const old = (await api.write({ branch: 'main', ...put('a', 2) })).commit?.id as string;
      await pause(5);
      const before = new Date().toISOString();
      await pause(5);
      await api.resetBranch({ name: 'main', to: 'main~1', expectedHead: old });
      expect((await api.log({ at: `main@{${before}}`, limit: 1 })).commits[0]?.id).toBe(old);
      expect((await api.getRow({ table: 'P', key: 'a', at: `main@{${before}}` })).row).toEqual({ id: 'a', v: 2 });
      await s.graph.gc({ now: Date.now() + 60_000 });
      expect((await api.getRow({ table: 'P', key: 'a', at: `commit:${old}` })).row).toEqual({ id: 'a', v: 2 });
      // Past the grace, nothing reaches it any more.
      await s.graph.gc({ now: Date.now() + 3 * 3600_000 });
      await expect(api.getRow({ table: 'P', key: 'a', at: `commit:${old}` })).rejects.toMatchObject({ code: 'not_found' });
      expect((await api.getRow({ table: 'P', key: 'a' })).row).toEqual({ id: 'a', v: 1 });
    } finally {
      await s.close();
    }
  });
});

describe('refs in cherry-pick and revert', () => {
  it('applies and undoes the commit any ref names', async () => {
    const s = await testServer();
    try {
      const api = embeddedApi(s.service, { transport: 'embedded' });
      await api.applySchema({ branch: 'main', schema: SCHEMA });
      await api.write({ branch: 'main', ...put('a', 1) });
      await api.createBranch({ name: 'f', from: { branch: 'main' } });
      await api.write({ branch: 'f', ...put('b', 1) });
      await api.write({ branch: 'f', ...put('c', 1) });
      for (const [name, client] of [
        ['embedded', api],
        ['rest', new RestClient(s.url)],
      ] as const) {
        // f~1 is the commit that wrote b.
        const picked = await client.cherryPick({ branch: 'main', commit: 'f~1' });
        expect({ name, status: picked.status }).toEqual({ name, status: 'success' });
        expect((await client.getRow({ table: 'P', key: 'b' })).row).toEqual({ id: 'b', v: 1 });
        await expect(client.getRow({ table: 'P', key: 'c' })).rejects.toMatchObject({ code: 'not_found' });
        const reverted = await client.revert({ branch: 'main', commit: 'main' });
        expect({ name, status: reverted.status }).toEqual({ name, status: 'success' });
        await expect(client.getRow({ table: 'P', key: 'b' })).rejects.toMatchObject({ code: 'not_found' });
      }
      await expect(api.cherryPick({ branch: 'main', commit: 'f~9' })).rejects.toMatchObject({ code: 'not_found' });
    } finally {
      await s.close();
    }
  });
});
