/**
 * Merge requests as a team runs them, over REST with real tokens: open a
 * request into a protected main, review it (the author may not approve),
 * revise it as the branches move (approvals go stale when what the merge
 * brings changes, or on any head move under that rule), resolve its
 * conflicts on the request, and merge it only when mergeable, as a commit
 * that records the request. Also: requests for changes block, closing,
 * listing by state, GraphQL, a retried merge that replays instead of
 * merging twice, and concurrent reviews through two servers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n v: int? }';
const TOKENS = 'admin:admin-token-1:alice,write:writer-token-1:bob,write:writer-token-2:carol';
const put = (id: string, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'P', values: { id, v } }] });

describe('merge requests', () => {
  let s: TestServer;
  let admin: RestClient;
  let bob: RestClient;
  let carol: RestClient;
  let id: string;
  beforeAll(async () => {
    s = await testServer({ tokens: TOKENS });
    admin = new RestClient(s.url, 'admin-token-1');
    bob = new RestClient(s.url, 'writer-token-1');
    carol = new RestClient(s.url, 'writer-token-2');
    await admin.applySchema({ branch: 'main', schema: SCHEMA });
    await admin.write({ branch: 'main', ...put('a', 1) });
    await bob.createBranch({ name: 'f' });
    await bob.write({ branch: 'f', ...put('b', 1) });
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, allowAdminBypass: true });
  });
  afterAll(() => s.close());

  it('opens a request with its first revision previewed, not yet mergeable', async () => {
    const r = await bob.openMergeRequest({ source: 'f', title: 'add b', description: 'one row' });
    id = r.id;
    expect(r).toMatchObject({ source: 'f', target: 'main', author: 'bob', state: 'open', version: 1 });
    expect(r.revisions).toHaveLength(1);
    expect(r.revisions[0]?.preview).toMatchObject({ outcome: 'fast_forward', conflicts: 0 });
    expect(r.mergeability).toEqual({
      mergeable: false,
      reasons: ['0 of 1 required approvals'],
      approvals: { required: 1, current: [] },
      changesRequestedBy: [],
      checks: { required: [], passed: [] },
    });
    await expect(bob.openMergeRequest({ source: 'nope', title: 'x' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(bob.openMergeRequest({ source: 'main', target: 'main', title: 'x' })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('lets the author comment but not approve; another reviewer approves, and it becomes mergeable', async () => {
    await expect(bob.reviewMergeRequest({ id, verdict: 'approve' })).rejects.toMatchObject({ code: 'forbidden' });
    await bob.reviewMergeRequest({ id, verdict: 'comment', body: 'please look', on: { table: 'P', key: 'b' } });
    const r = await carol.reviewMergeRequest({ id, verdict: 'approve', body: 'ok' });
    expect(r.reviews.map((x) => [x.author, x.verdict, x.revision])).toEqual([
      ['bob', 'comment', 1],
      ['carol', 'approve', 1],
    ]);
    expect(r.mergeability).toMatchObject({ mergeable: true, reasons: [], approvals: { current: ['carol'] } });
  });

  it('goes stale when the source moves; a revision pins the new heads and the approval no longer counts', async () => {
    await bob.write({ branch: 'f', ...put('c', 1) });
    const stale = await carol.getMergeRequest({ id });
    expect(stale.mergeability.reasons).toEqual(['a branch moved since the latest revision: revise the request']);
    const r = await bob.reviseMergeRequest({ id });
    expect(r.revisions.map((x) => x.n)).toEqual([1, 2]);
    expect(r.mergeability.reasons).toEqual(['0 of 1 required approvals']);
    expect((await bob.reviseMergeRequest({ id })).revisions).toHaveLength(2);
    expect((await carol.reviewMergeRequest({ id, verdict: 'approve' })).mergeability.mergeable).toBe(true);
  });

  it('keeps an approval when only the target moves (result_change), not under head_move', async () => {
    await admin.write({ branch: 'main', ...put('z', 1), bypassProtection: true });
    const r = await bob.reviseMergeRequest({ id });
    expect(r.revisions).toHaveLength(3);
    expect(r.revisions[2]?.fingerprint).toBe(r.revisions[1]?.fingerprint);
    expect(r.mergeability.mergeable).toBe(true);
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, allowAdminBypass: true, staleApprovals: 'head_move' });
    expect((await bob.getMergeRequest({ id })).mergeability.reasons).toEqual(['0 of 1 required approvals']);
    await admin.protectBranch({ name: 'main', requiredApprovals: 1, allowAdminBypass: true });
  });

  it('blocks on a current request for changes until the reviewer approves', async () => {
    const dave = await admin.reviewMergeRequest({ id, verdict: 'request_changes', body: 'wait' });
    expect(dave.mergeability).toMatchObject({ mergeable: false, changesRequestedBy: ['alice'] });
    await expect(bob.mergeMergeRequest({ id })).rejects.toMatchObject({
      code: 'request_not_mergeable',
      details: { reasons: ['changes requested by alice'] },
    });
    expect((await admin.reviewMergeRequest({ id, verdict: 'approve' })).mergeability).toMatchObject({
      mergeable: true,
      approvals: { current: ['alice', 'carol'] },
    });
  });

  it('carries conflicts on the request until resolutions are saved, which makes approvals of the unresolved result stale', async () => {
    await admin.write({ branch: 'main', ...put('c', 5), bypassProtection: true });
    const conflicted = await bob.reviseMergeRequest({ id });
    expect(conflicted.revisions.at(-1)?.preview).toMatchObject({ outcome: 'conflicts', conflicts: 1, counts: { DivergentInsert: 1 } });
    expect(conflicted.mergeability.reasons).toContain('1 conflicts are unresolved');
    await expect(
      bob.setMergeRequestResolutions({ id, resolutions: { conflicts: [{ table: 'P', key: 'nope', take: 'source' }] } }),
    ).rejects.toMatchObject({
      code: 'invalid_input',
    });
    const resolved = await bob.setMergeRequestResolutions({ id, resolutions: { conflicts: [{ table: 'P', key: 'c', take: 'source' }] } });
    expect(resolved.revisions.at(-1)?.preview).toMatchObject({ outcome: 'merged', conflicts: 0 });
    expect(resolved.mergeability.reasons).toEqual(['0 of 1 required approvals']);
    expect((await carol.reviewMergeRequest({ id, verdict: 'approve' })).mergeability.mergeable).toBe(true);
  });

  it('merges a mergeable request as a commit recording it, then refuses to merge it again', async () => {
    const { request, result } = await bob.mergeMergeRequest({ id, message: 'land f' });
    expect(request).toMatchObject({ state: 'merged', merged: { by: 'bob', revision: request.revisions.at(-1)?.n } });
    expect(result).toMatchObject({ status: 'success', outcome: 'merged', commit: { request: id, message: 'land f', kind: 'merge' } });
    expect((await bob.getRow({ table: 'P', key: 'c' })).row).toEqual({ id: 'c', v: 1 });
    expect((await bob.log({ limit: 1 })).commits[0]).toMatchObject({ request: id });
    await expect(bob.mergeMergeRequest({ id })).rejects.toMatchObject({ code: 'request_not_mergeable' });
    await expect(carol.reviewMergeRequest({ id, verdict: 'approve' })).rejects.toMatchObject({ code: 'request_not_mergeable' });
  });

  it('closes a request, which then cannot merge; lists requests by state', async () => {
    await bob.write({ branch: 'f', ...put('d', 1) });
    const second = await bob.openMergeRequest({ source: 'f', title: 'more' });
    expect((await bob.closeMergeRequest({ id: second.id })).state).toBe('closed');
    await expect(bob.mergeMergeRequest({ id: second.id })).rejects.toMatchObject({ code: 'request_not_mergeable' });
    const third = await bob.openMergeRequest({ source: 'f', title: 'again' });
    expect((await bob.listMergeRequests({})).requests.map((r) => r.id)).toEqual([third.id]);
    expect((await bob.listMergeRequests({ state: 'all' })).requests.map((r) => r.id)).toEqual([third.id, second.id, id]);
    const page = await bob.listMergeRequests({ state: 'all', limit: 2 });
    expect(page.requests).toHaveLength(2);
    expect((await bob.listMergeRequests({ state: 'all', cursor: page.nextCursor as string })).requests.map((r) => r.id)).toEqual([id]);
    expect((await bob.listMergeRequests({ state: 'merged' })).requests.map((r) => r.id)).toEqual([id]);
    await expect(bob.getMergeRequest({ id: '01M8X8V392N8ZTAKTPDT42E4CB' })).rejects.toMatchObject({ code: 'not_found' });
    await expect(bob.getMergeRequest({ id: 'nope' })).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('answers over GraphQL: the request, a review, mergeability, a refused merge as a typed error', async () => {
    const open = (await bob.listMergeRequests({})).requests[0]?.id as string;
    const q = await gql(
      s.url,
      'query($id: ID!) { mergeRequest(id: $id) { title state revisions { n preview { outcome } } mergeability { mergeable reasons } } }',
      { id: open },
      'writer-token-2',
    );
    expect(q.body.data).toEqual({
      mergeRequest: {
        title: 'again',
        state: 'open',
        revisions: [{ n: 1, preview: { outcome: 'merged' } }],
        mergeability: { mergeable: false, reasons: ['0 of 1 required approvals'] },
      },
    });
    const m = await gql(s.url, 'mutation($id: ID!) { mergeMergeRequest(id: $id) { request { state } } }', { id: open }, 'writer-token-2');
    expect(m.body.errors?.[0]?.extensions?.code).toBe('request_not_mergeable');
    await gql(s.url, 'mutation($id: ID!) { reviewMergeRequest(id: $id, verdict: "approve") { version } }', { id: open }, 'writer-token-2');
    const merged = await gql(
      s.url,
      'mutation($id: ID!) { mergeMergeRequest(id: $id, deleteBranch: true) { request { state } result { __typename ... on MergeSuccess { outcome branchDeleted commit { request } } } } }',
      { id: open },
      'writer-token-2',
    );
    expect(merged.body.data).toEqual({
      mergeMergeRequest: {
        request: { state: 'merged' },
        result: { __typename: 'MergeSuccess', outcome: 'merged', branchDeleted: true, commit: { request: open } },
      },
    });
  });
});

describe('merge requests: retries and two servers', () => {
  it('a merge retried after its record was lost replays the merge instead of merging twice', async () => {
    const store = new MemoryStore();
    const service = await serviceOnStore(store, { actor: 'ann', shard: 'a' });
    const api = embeddedApi(service, { transport: 'embedded', actor: 'ann' });
    const reviewer = embeddedApi(service, { transport: 'embedded', actor: 'rev' });
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    await api.createBranch({ name: 'f' });
    await api.write({ branch: 'f', ...put('x', 1) });
    await api.protectBranch({ name: 'main' });
    const { id } = await api.openMergeRequest({ source: 'f', title: 't' });
    await reviewer.reviewMergeRequest({ id, verdict: 'approve' });
    const first = await api.mergeMergeRequest({ id });
    // As if the process died after the merge commit and before the request was marked merged.
    await service.graph.requests.update(id, async (d) => {
      const { merged: _m, ...rest } = d;
      return { ...rest, state: 'open', merging: first.request.merged?.revision as number };
    });
    const again = await api.mergeMergeRequest({ id });
    expect(again.result).toMatchObject({
      status: 'success',
      replayed: true,
      commit: { id: first.result.status === 'success' ? first.result.commit?.id : '' },
    });
    expect(again.request.state).toBe('merged');
    expect((await api.log({ kind: 'merge' })).commits).toHaveLength(1);
    await service.close();
  });

  it('reviews through two servers at once both land', async () => {
    const store = new MemoryStore();
    const one = await serviceOnStore(store, { actor: 'one', shard: 'one' });
    const two = await serviceOnStore(store, { actor: 'two', shard: 'two' });
    const a = embeddedApi(one, { transport: 'embedded', actor: 'ann' });
    await a.applySchema({ branch: 'main', schema: SCHEMA });
    await a.createBranch({ name: 'f' });
    await a.write({ branch: 'f', ...put('x', 1) });
    const { id } = await a.openMergeRequest({ source: 'f', title: 't' });
    const reviewers = ['r1', 'r2', 'r3', 'r4'].map((r, i) => embeddedApi(i % 2 === 0 ? one : two, { transport: 'embedded', actor: r }));
    await Promise.all(reviewers.map((r) => r.reviewMergeRequest({ id, verdict: 'approve' })));
    const r = await a.getMergeRequest({ id });
    expect(r.reviews.map((x) => x.author).sort()).toEqual(['r1', 'r2', 'r3', 'r4']);
    expect(r.reviews.map((x) => x.n).sort()).toEqual([1, 2, 3, 4]);
    await one.close();
    await two.close();
  });
});
