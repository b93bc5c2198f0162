/**
 * Entity history and blame: every version of one entity, newest first, with
 * the commit that made it and what changed, following merges as Git's
 * history simplification does (or first parents only), paged by cursor;
 * for each property the commit that set its value; the same embedded, over
 * REST and over GraphQL; and a cost that follows the commits that touched
 * the entity, not the length of the history.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { RestClient } from '../src/http/rest-client.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
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

describe('entity history across merges, and blame', () => {
  let s: TestServer;
  let apis: [string, BranchgraphApi][];
  const ids: Record<string, string> = {};
  beforeAll(async () => {
    s = await testServer();
    const api = embeddedApi(s.service, { transport: 'embedded' });
    const id = async (w: Promise<{ commit: { id: string } | null }>) => (await w).commit?.id as string;
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    ids.create = await id(api.write({ branch: 'main', ...put({ id: 'a', n: 1 }), message: 'create a' }));
    ids.createB = await id(api.write({ branch: 'main', ...put({ id: 'b', n: 1 }), message: 'create b' }));
    await api.createBranch({ name: 'f' });
    ids.side = await id(api.write({ branch: 'f', ...put({ id: 'a', n: 2 }), message: 'n on f' }));
    ids.sideB = await id(api.write({ branch: 'f', ...put({ id: 'b', n: 5 }), message: 'b on f' }));
    ids.main = await id(api.write({ branch: 'main', ...put({ id: 'a', n: 1, s: 'x' }), message: 's on main' }));
    const m = await api.mergeBranch({ source: 'f', into: 'main' });
    if (m.status !== 'success' || m.commit === null) throw new Error('the merge did not publish');
    ids.merge = m.commit.id;
    apis = [
      ['embedded', api],
      ['rest', new RestClient(s.url)],
    ];
  });
  afterAll(() => s.close());

  const versions = async (api: BranchgraphApi, key: string, firstParent?: boolean) =>
    (await api.entityHistory({ table: 'P', key, ...(firstParent ? { firstParent } : {}) })).versions.map((v) => [
      v.commit.id,
      v.change,
      v.changed,
    ]);

  it('a merge that combined both sides is a version, and both sides are followed', async () => {
    for (const [, api] of apis) {
      const got = await versions(api, 'a');
      expect(got[0]).toEqual([ids.merge, 'updated', ['n']]);
      // The two sides' commits come by generation, then time: both are there, then the creation.
      expect(new Set(got.slice(1, 3).map((v) => v[0]))).toEqual(new Set([ids.side, ids.main]));
      expect(got.slice(3)).toEqual([[ids.create, 'inserted', ['id', 'n']]]);
      expect(await versions(api, 'a', true)).toEqual([
        [ids.merge, 'updated', ['n']],
        [ids.main, 'updated', ['s']],
        [ids.create, 'inserted', ['id', 'n']],
      ]);
    }
  });

  it('a merge that took one side unchanged is not a version: history follows that side (or, on first parents, the merge is)', async () => {
    for (const [, api] of apis) {
      expect(await versions(api, 'b')).toEqual([
        [ids.sideB, 'updated', ['n']],
        [ids.createB, 'inserted', ['id', 'n']],
      ]);
      expect(await versions(api, 'b', true)).toEqual([
        [ids.merge, 'updated', ['n']],
        [ids.createB, 'inserted', ['id', 'n']],
      ]);
    }
  });

  it('blame names, for each property, the commit on the side its value came from', async () => {
    for (const [, api] of apis) {
      const b = await api.blame({ table: 'P', key: 'a' });
      expect(b.row).toEqual({ id: 'a', n: 2, s: 'x' });
      expect(b.complete).toBe(true);
      expect(b.properties.map((p) => [p.property, p.value, p.commit?.id])).toEqual([
        ['id', 'a', ids.create],
        ['n', 2, ids.side],
        ['s', 'x', ids.main],
      ]);
      expect((await api.blame({ table: 'P', key: 'a', at: `commit:${ids.create}` })).properties.map((p) => p.commit?.id)).toEqual([
        ids.create,
        ids.create,
        ids.create,
      ]);
      await expect(api.blame({ table: 'P', key: 'zz' })).rejects.toMatchObject({ code: 'not_found' });
    }
  });

  it('answers blame and first-parent history over GraphQL, with the commit it read', async () => {
    const r = await gql(
      s.url,
      '{ blame(table: "P", key: "a") { at row properties { property commit { id } } complete } history(table: "P", key: "b", firstParent: true) { at versions { commit { id } } } }',
    );
    const data = r.body.data as {
      blame: { at: string; properties: { property: string; commit: { id: string } }[] };
      history: { at: string; versions: { commit: { id: string } }[] };
    };
    expect(data.blame.at).toBe(ids.merge);
    expect(data.blame.properties.map((p) => p.commit.id)).toEqual([ids.create, ids.side, ids.main]);
    expect(data.history.versions.map((v) => v.commit.id)).toEqual([ids.merge, ids.createB]);
  });
});

describe('entity history cost', () => {
  /**
   * Store calls for the history of `a` on a cold service, after `commits` writes of which three touch `a`;
   * `folding`: the writes compact their table's newest runs inline, as they do by default.
   */
  async function historyCalls(commits: number, folding = false): Promise<{ calls: number; versions: number; compacted: number }> {
    const store = new CountingStore(new MemoryStore());
    const graph = folding ? {} : { inlineCompaction: false as const };
    const service = await serviceOnStore(store, { actor: 'w', shard: 'w', graph });
    const writer = embeddedApi(service, { transport: 'embedded' });
    await writer.applySchema({ branch: 'main', schema: SCHEMA });
    const touch = new Set([0, Math.floor(commits / 2), commits - 1]);
    for (let i = 0; i < commits; i++)
      await writer.write({ branch: 'main', ...put(touch.has(i) ? { id: 'a', n: i } : { id: `z${String(i).padStart(5, '0')}`, n: i }) });
    const read = async () => {
      // What the writes left to land after their answers (hints above all) has landed: a cold
      // reader finds what a writer leaves it, not what it is still writing.
      await service.idle();
      const api = embeddedApi(await serviceOnStore(store, { actor: 'r', shard: 'r' }), { transport: 'embedded' });
      store.reset();
      const h = await api.entityHistory({ table: 'P', key: 'a' });
      return { calls: store.snapshot().total.calls, versions: h.versions.length };
    };
    const before = await read();
    await writer.compact({ branch: 'main', mode: 'full' });
    const after = await read();
    expect(after.versions).toBe(before.versions);
    return { ...before, compacted: after.calls };
  }

  it('reads the same number of objects for three touching commits among 300 as among 30', async () => {
    const small = await historyCalls(30);
    const large = await historyCalls(300);
    expect(small.versions).toBe(3);
    expect(large.versions).toBe(3);
    expect(large.calls).toBeLessThanOrEqual(small.calls + 2);
    expect(large.calls).toBeLessThan(40);
    // After a full compaction the walk meets the compaction once more, then jumps as before.
    expect(large.compacted).toBeLessThanOrEqual(small.compacted + 2);
    // Writes that fold their runs are compactions a key meets too: a few jumps more per tier it
    // passed through, not one per commit (under 40 calls among 300 commits).
    const folded = await historyCalls(300, true);
    expect(folded.versions).toBe(3);
    expect(folded.calls).toBeLessThan(40);
  }, 120_000);
});
