/**
 * The review cannot be routed around, over REST, GraphQL and the command
 * line. Each way a hostile author or an unlucky operator could land
 * something no reviewer approved is played against a protected target:
 * - a merge that stopped after the request was marked `merging`, followed
 *   by new resolutions, a request for changes, or a raised rule: a retry
 *   lands exactly the approved revision, or nothing;
 * - a saved strategy that would decide a conflict that appeared after the
 *   approval: the approval goes stale and the preview shows the conflict;
 * - a client's Idempotency-Key that names a request's internal key: the
 *   request still merges;
 * - compaction and catch-up of the source: no approval goes stale, while a
 *   row ingested after the approval makes it stale.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Writable } from 'node:stream';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { runCli } from '../src/cli/run-cli.js';
import { gql, testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n v: int? }';
const TOKENS = 'admin:admin-token-1:alice,write:writer-token-1:bob,write:writer-token-2:carol';
const put = (id: string, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'P', values: { id, v } }] });

type Outcome = { ok: true; value: Record<string, unknown> } | { ok: false; code: string };

/** The request workflow as one transport offers it, for one user. */
interface Driver {
  open(source: string, target: string): Promise<string>;
  resolve(id: string, resolutions: unknown): Promise<Outcome>;
  review(id: string, verdict: 'approve' | 'request_changes'): Promise<Outcome>;
  merge(id: string): Promise<Outcome>;
  /** The request revised to the branches as they are now: whether it may merge, and the conflicts its resolutions decide. */
  mergeable(id: string): Promise<{ mergeable: boolean; decided: number | null }>;
}

const settle = async (p: Promise<unknown>): Promise<Outcome> => {
  try {
    return { ok: true, value: (await p) as Record<string, unknown> };
  } catch (e) {
    return { ok: false, code: (e as { code: string }).code };
  }
};

function restDriver(url: string, token: string): Driver {
  const c = new RestClient(url, token);
  return {
    open: async (source, target) => (await c.openMergeRequest({ source, target, title: 't' })).id,
    resolve: (id, resolutions) => settle(c.setMergeRequestResolutions({ id, resolutions: resolutions as never })),
    review: (id, verdict) => settle(c.reviewMergeRequest({ id, verdict })),
    merge: (id) => settle(c.mergeMergeRequest({ id })),
    mergeable: async (id) => {
      const r = await c.reviseMergeRequest({ id });
      return { mergeable: r.mergeability.mergeable, decided: r.revisions.at(-1)?.preview.decided ?? null };
    },
  };
}

function graphqlDriver(url: string, token: string): Driver {
  const call = async (query: string, variables: Record<string, unknown>): Promise<Outcome> => {
    const r = await gql(url, query, variables, token);
    const err = r.body.errors?.[0];
    if (err !== undefined) return { ok: false, code: String(err.extensions?.code) };
    return { ok: true, value: Object.values(r.body.data ?? {})[0] as Record<string, unknown> };
  };
  return {
    open: async (source, target) => {
      const r = await call('mutation($s:String!,$t:String){ openMergeRequest(source:$s, target:$t, title:"t") { id } }', {
        s: source,
        t: target,
      });
      if (!r.ok) throw new Error(r.code);
      return r.value.id as string;
    },
    resolve: (id, resolutions) =>
      call('mutation($id:ID!,$r:MergeResolutionsInput){ setMergeRequestResolutions(id:$id, resolutions:$r) { id } }', {
        id,
        r: resolutions,
      }),
    review: (id, verdict) => call('mutation($id:ID!,$v:String!){ reviewMergeRequest(id:$id, verdict:$v) { id } }', { id, v: verdict }),
    merge: (id) => call('mutation($id:ID!){ mergeMergeRequest(id:$id) { request { state } } }', { id }),
    mergeable: async (id) => {
      const r = await call(
        'mutation($id:ID!){ reviseMergeRequest(id:$id) { mergeability { mergeable } revisions { preview { decided } } } }',
        { id },
      );
      if (!r.ok) throw new Error(r.code);
      const revs = r.value.revisions as { preview: { decided: number | null } }[];
      return { mergeable: (r.value.mergeability as { mergeable: boolean }).mergeable, decided: revs.at(-1)?.preview.decided ?? null };
    },
  };
}

function cliDriver(url: string, token: string): Driver {
  const run = async (args: string[]): Promise<Outcome> => {
    let stdout = '';
    let stderr = '';
    const io = {
      stdout: (t: string) => {
        stdout += t;
      },
      stderr: (t: string) => {
        stderr += t;
      },
      stdoutStream: new Writable({ write: (_c, _e, cb) => cb() }),
    };
    const code = await runCli([...args, '--server', url, '--token', token, '--json'], io);
    if (code === 0) return { ok: true, value: JSON.parse(stdout) as Record<string, unknown> };
    // With --json the command line tells its error as the envelope every transport answers.
    const told = (() => {
      try {
        return (JSON.parse(stderr) as { error?: { code?: string } }).error?.code;
      } catch {
        return undefined;
      }
    })();
    return { ok: false, code: told ?? `exit ${code}: ${stderr}` };
  };
  return {
    open: async (source, target) => {
      const r = await run(['request', 'open', source, '--into', target, '--title', 't']);
      if (!r.ok) throw new Error(r.code);
      return r.value.id as string;
    },
    resolve: async (id, resolutions) => {
      const r = resolutions as { strategy?: string; conflicts?: unknown[] };
      const { mkdtemp, writeFile } = await import('node:fs/promises');
      const { tmpdir } = await import('node:os');
      const file = `${await mkdtemp(`${tmpdir()}/bg-res-`)}/r.json`;
      await writeFile(file, JSON.stringify(r.conflicts ?? []));
      return run([
        'request',
        'resolve',
        id,
        ...(r.strategy ? ['--strategy', r.strategy] : []),
        ...(r.conflicts ? ['--resolutions', file] : []),
      ]);
    },
    review: (id, verdict) => run(['request', 'review', id, verdict === 'approve' ? '--approve' : '--request-changes']),
    merge: (id) => run(['request', 'merge', id]),
    mergeable: async (id) => {
      const r = await run(['request', 'revise', id]);
      if (!r.ok) throw new Error(r.code);
      const revs = r.value.revisions as { preview: { decided?: number } }[];
      return { mergeable: (r.value.mergeability as { mergeable: boolean }).mergeable, decided: revs.at(-1)?.preview.decided ?? null };
    },
  };
}

const TRANSPORTS: [string, (url: string, token: string) => Driver][] = [
  ['REST', restDriver],
  ['GraphQL', graphqlDriver],
  ['CLI', cliDriver],
];

describe.each(TRANSPORTS)('the review cannot be routed around (%s)', (_name, driverFor) => {
  let s: TestServer;
  let admin: BranchgraphApi;
  let bob: Driver;
  let carol: Driver;
  let n = 0;
  beforeAll(async () => {
    s = await testServer({ tokens: TOKENS });
    admin = embeddedApi(s.service, { transport: 'embedded', actor: 'alice', role: 'admin' });
    await admin.applySchema({ branch: 'main', schema: SCHEMA });
    bob = driverFor(s.url, 'writer-token-1');
    carol = driverFor(s.url, 'writer-token-2');
  });
  afterAll(() => s.close());

  /** A protected target holding P r=0 and a source forked from it; each scenario has its own pair. */
  async function pair(): Promise<{ target: string; source: string }> {
    n++;
    const target = `t${n}`;
    const source = `s${n}`;
    await admin.createBranch({ name: target });
    await admin.write({ branch: target, ...put('r', 0) });
    await admin.createBranch({ name: source, from: { branch: target } });
    await admin.protectBranch({ name: target, requiredApprovals: 1, allowAdminBypass: true });
    return { target, source };
  }
  const valueOn = async (branch: string) => (await admin.getRow({ table: 'P', key: 'r', at: branch })).row?.v;
  const bypass = { bypassProtection: true };

  /** A request with a conflict on r, resolved to take the source, approved: mergeable. */
  async function approvedConflict() {
    const b = await pair();
    await admin.write({ branch: b.source, ...put('r', 1) });
    await admin.write({ branch: b.target, ...put('r', 2), ...bypass });
    const id = await bob.open(b.source, b.target);
    expect(await bob.resolve(id, { conflicts: [{ table: 'P', key: 'r', property: 'v', take: 'source' }] })).toMatchObject({ ok: true });
    expect(await carol.review(id, 'approve')).toMatchObject({ ok: true });
    expect((await bob.mergeable(id)).mergeable).toBe(true);
    return { ...b, id };
  }

  /** As a merge does once it marked the request and before it publishes, at `since`. */
  const startedMerge = (id: string, since: string) =>
    s.service.graph.requests.update(id, async (d) => ({ ...d, merging: d.revisions.at(-1)?.n as number, mergingSince: since }));

  it('an interrupted merge refuses new resolutions until it settles; the retry lands exactly the approved values', async () => {
    const { target, id } = await approvedConflict();
    await startedMerge(id, new Date().toISOString());
    expect(await bob.resolve(id, { conflicts: [{ table: 'P', key: 'r', property: 'v', take: 'value', value: 999 }] })).toEqual({
      ok: false,
      code: 'publish_contention',
    });
    expect(await bob.merge(id)).toMatchObject({ ok: true });
    expect(await valueOn(target)).toBe(1);
  });

  it('resolutions saved after an interrupted merge settled make the approval stale: nothing lands', async () => {
    const { target, id } = await approvedConflict();
    await startedMerge(id, new Date(Date.now() - 60 * 60 * 1000).toISOString());
    expect(await bob.resolve(id, { conflicts: [{ table: 'P', key: 'r', property: 'v', take: 'value', value: 999 }] })).toMatchObject({
      ok: true,
    });
    expect((await bob.mergeable(id)).mergeable).toBe(false);
    expect(await bob.merge(id)).toEqual({ ok: false, code: 'request_not_mergeable' });
    expect(await valueOn(target)).toBe(2);
  });

  it('a retried merge re-checks mergeability: resolutions changed behind its back, changes requested, a raised rule', async () => {
    for (const after of ['stored resolutions', 'request changes', 'raised rule'] as const) {
      const { target, id } = await approvedConflict();
      await startedMerge(id, new Date().toISOString());
      if (after === 'stored resolutions')
        // What a merge used to take from the request itself: a retry must take the approved revision's.
        await s.service.graph.requests.update(id, async (d) => ({
          ...d,
          resolutions: { conflicts: [{ table: 'P', key: 'r', property: 'v', take: 'value', value: 999 }] },
        }));
      if (after === 'request changes') expect(await carol.review(id, 'request_changes')).toMatchObject({ ok: true });
      if (after === 'raised rule') await admin.protectBranch({ name: target, requiredApprovals: 2, allowAdminBypass: true });
      expect({ after, merge: await bob.merge(id) }).toEqual({ after, merge: { ok: false, code: 'request_not_mergeable' } });
      expect(await valueOn(target)).toBe(2);
    }
  });

  it('an approval covers the conflicts its strategy decides: a new one makes it stale', async () => {
    const { target, source } = await pair();
    await admin.write({ branch: source, ...put('r', 1) });
    const id = await bob.open(source, target);
    expect(await bob.resolve(id, { strategy: 'source-wins' })).toMatchObject({ ok: true });
    expect(await carol.review(id, 'approve')).toMatchObject({ ok: true });
    expect(await bob.mergeable(id)).toEqual({ mergeable: true, decided: 0 });
    // A reviewed change lands on the target, on the same row.
    await admin.write({ branch: target, ...put('r', 5), ...bypass });
    expect(await bob.mergeable(id)).toEqual({ mergeable: false, decided: 1 });
    expect(await bob.merge(id)).toEqual({ ok: false, code: 'request_not_mergeable' });
    expect(await valueOn(target)).toBe(5);
    // Approved again, knowing the strategy decides it: then it lands.
    expect(await carol.review(id, 'approve')).toMatchObject({ ok: true });
    expect(await bob.merge(id)).toMatchObject({ ok: true });
    expect(await valueOn(target)).toBe(1);
  });

  it("a client's Idempotency-Key cannot claim a request's merge", async () => {
    const { target, source } = await pair();
    await admin.write({ branch: source, ...put('r', 1) });
    const id = await bob.open(source, target);
    expect(await carol.review(id, 'approve')).toMatchObject({ ok: true });
    // An unrelated merge under every key a request's merge was ever named by.
    await admin.createBranch({ name: `x${n}` });
    await admin.createBranch({ name: `y${n}`, from: { branch: `x${n}` } });
    await admin.write({ branch: `y${n}`, ...put('q', 1) });
    const rest = new RestClient(s.url, 'writer-token-1');
    for (const key of [`request-${id}-r1`, `merge-request-revision:${id}:1`])
      await rest.mergeBranch({ source: `y${n}`, into: `x${n}`, idempotencyKey: key });
    expect(await bob.merge(id)).toMatchObject({ ok: true });
    expect(await valueOn(target)).toBe(1);
  });

  it('compaction and catch-up of the source keep the approval; a row ingested after it does not', async () => {
    const { target, source } = await pair();
    for (let i = 0; i < 4; i++) await admin.write({ branch: source, ...put(`w${i}`, i) });
    await admin.ingest({ branch: source, ops: put('r', 1).ops });
    const id = await bob.open(source, target);
    expect(await carol.review(id, 'approve')).toMatchObject({ ok: true });
    await admin.catchUp({ branch: source });
    await admin.compact({ branch: source, mode: 'full' });
    await admin.compact({ branch: target, mode: 'full' });
    expect((await bob.mergeable(id)).mergeable).toBe(true);
    await admin.ingest({ branch: source, ops: put('r', 7).ops });
    expect((await bob.mergeable(id)).mergeable).toBe(false);
    expect(await bob.merge(id)).toEqual({ ok: false, code: 'request_not_mergeable' });
    expect(await valueOn(target)).toBe(0);
    expect(await carol.review(id, 'approve')).toMatchObject({ ok: true });
    expect(await bob.merge(id)).toMatchObject({ ok: true });
    expect(await valueOn(target)).toBe(7);
  });
});
