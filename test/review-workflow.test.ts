/**
 * The review workflow's reads, through its ports: each action reads each
 * branch head once and runs at most one preview, before it writes; a
 * writer that gets in first makes the action start over on the request as
 * it is now, never apply a preview computed for another version.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import type { RequestContext } from '../src/service/request-context.js';
import { mergeRequestNow } from '../src/service/review/merge-request-now.js';
import { openRequest } from '../src/service/review/open-request.js';
import { setResolutions } from '../src/service/review/resolve-request.js';
import { reviewPorts, type ReviewPorts } from '../src/service/review/review-ports.js';
import { reviewRequest } from '../src/service/review/review-request.js';
import { testServer, type TestServer } from './support/test-server.js';

let s: TestServer;
let api: BranchgraphApi;
const author: RequestContext = { transport: 'embedded', actor: 'author' };
const reviewer: RequestContext = { transport: 'embedded', actor: 'reviewer' };

/** The service's ports, counting head reads by branch and merges by kind; `beforeWrite` runs once before the first write. */
function counted(beforeWrite?: () => Promise<void>) {
  const base = reviewPorts(s.service);
  const heads = new Map<string, number>();
  const merges = { dryRun: 0, keyed: 0 };
  let pending = beforeWrite;
  const ports: ReviewPorts = {
    ...base,
    branchHead: (name, signal) => {
      heads.set(name, (heads.get(name) ?? 0) + 1);
      return base.branchHead(name, signal);
    },
    merge: (spec, ctx) => {
      if (spec.dryRun) merges.dryRun++;
      return base.merge(spec, ctx);
    },
    keyedMerge: (spec, key, ctx) => {
      merges.keyed++;
      return base.keyedMerge(spec, key, ctx);
    },
    requests: {
      get: (id, signal) => base.requests.get(id, signal),
      create: (doc, signal) => base.requests.create(doc, signal),
      update: (id, change, signal) => base.requests.update(id, change, signal),
      replace: async (read, next, signal) => {
        const run = pending;
        pending = undefined;
        await run?.();
        return base.requests.replace(read, next, signal);
      },
    },
  };
  return { ports, heads, merges };
}

let n = 0;
async function branchWithChange(): Promise<string> {
  const name = `change${++n}`;
  await api.createBranch({ name });
  await api.write({ branch: name, ops: [{ op: 'upsert', table: 'P', values: { id: name, v: n } }] });
  return name;
}

beforeAll(async () => {
  s = await testServer();
  api = embeddedApi(s.service, { transport: 'embedded', actor: 'author' });
  await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int? }' });
  await api.protectBranch({ name: 'main', requiredApprovals: 1, allowAdminBypass: true });
});
afterAll(() => s.close());

describe('the review workflow', () => {
  it('opens, reviews and merges reading each head once per action, previewing before writing', async () => {
    const source = await branchWithChange();
    const open = counted();
    const { doc } = await openRequest(open.ports, { source, target: 'main', title: 't', description: '' }, author);
    expect(Object.fromEntries(open.heads)).toEqual({ [source]: 1, main: 1 });
    expect(open.merges).toEqual({ dryRun: 1, keyed: 0 });

    // main moves: the review revises, with one read of each head and one preview.
    await api.write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'm', v: 0 } }], bypassProtection: true });
    const review = counted();
    const reviewed = await reviewRequest(review.ports, { id: doc.id, verdict: 'approve', body: '' }, reviewer);
    expect(Object.fromEntries(review.heads)).toEqual({ [source]: 1, main: 1 });
    expect(review.merges).toEqual({ dryRun: 1, keyed: 0 });
    expect(reviewed.doc.revisions.map((r) => r.n)).toEqual([1, 2]);
    expect(reviewed.doc.reviews[0]?.revision).toBe(2);

    // Nothing moved since: the merge previews nothing again, reads each head once, and merges once.
    const merge = counted();
    const merged = await mergeRequestNow(merge.ports, { id: doc.id }, author);
    expect(Object.fromEntries(merge.heads)).toEqual({ [source]: 1, main: 1 });
    expect(merge.merges).toEqual({ dryRun: 0, keyed: 1 });
    expect(merged.request.state).toBe('merged');
  });

  it('starts over on the request as it now is when another writer got in first', async () => {
    const source = await branchWithChange();
    const { doc } = await openRequest(reviewPorts(s.service), { source, target: 'main', title: 't', description: '' }, author);
    // A comment lands between the resolutions' preview and their write.
    const racing = counted(async () => {
      await reviewRequest(reviewPorts(s.service), { id: doc.id, verdict: 'comment', body: 'first' }, reviewer);
    });
    const saved = await setResolutions(racing.ports, { id: doc.id, resolutions: { strategy: 'source-wins' } }, author);
    // Both changes are there: the comment the race brought, and the resolutions on a revision of their own.
    expect(saved.doc.reviews.map((r) => r.body)).toEqual(['first']);
    expect(saved.doc.resolutions).toEqual({ strategy: 'source-wins' });
    expect(saved.doc.revisions.at(-1)?.resolutions).toEqual({ strategy: 'source-wins' });
    // Read and previewed twice: once for the version that lost, once for the one that won.
    expect(racing.heads.get(source)).toBe(2);
  });
});
