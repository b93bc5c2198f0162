/**
 * Maintenance is not history. A compaction, in the background or asked
 * for, moves a branch's stored version and never adds a commit: the head
 * names the same commit, and `~`/`^`, the log, entity history, blame, the
 * event feed and an expected head read the same before and after. Also the
 * log's table filter follows Git's history simplification: a merge that
 * took a table unchanged from one side is not listed for it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { COMPACTION_FANOUT } from '../src/table/compaction-policy.js';
import { testServer, type TestServer } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n v: int }\nnode Q { id: string @key }';
const put = (table: string, values: Record<string, unknown>) => ({ ops: [{ op: 'upsert' as const, table, values }] });

/** Everything a user reads about history: the log, refs through parents, an entity's versions and blame, the feed. */
async function historyView(api: BranchgraphApi) {
  const commitAt = async (at: string) => (await api.log({ at, limit: 1 })).commits[0]?.id;
  const events = (await api.listEvents({ limit: 1000 })).events.filter((e) => e.kind === 'commit');
  return {
    head: (await api.getBranch({ name: 'main' })).head.id,
    log: (await api.log({ limit: 1000 })).commits.map((c) => `${c.kind} ${c.id}`),
    firstParent: await commitAt('main~1'),
    secondParent: await commitAt('main^2'),
    twoBack: await commitAt('main~2'),
    history: (await api.entityHistory({ table: 'P', key: 'a' })).versions.map((v) => v.commit.id),
    blame: await api.blame({ table: 'P', key: 'a' }),
    events: events.map((e) => e.commit),
  };
}

describe('maintenance is not history', () => {
  let s: TestServer;
  let api: BranchgraphApi;
  beforeAll(async () => {
    s = await testServer({ compaction: true });
    api = embeddedApi(s.service, { transport: 'embedded' });
  });
  afterAll(() => s.close());

  it('regression: a compaction after a merge leaves main~1, main^2, the log, blame, history and the feed as they were', async () => {
    await api.applySchema({ branch: 'main', schema: SCHEMA });
    for (let i = 0; i < COMPACTION_FANOUT + 1; i++) await api.write({ branch: 'main', ...put('P', { id: 'a', v: i }) });
    await api.createBranch({ name: 'f' });
    for (let i = 0; i < COMPACTION_FANOUT + 1; i++) await api.write({ branch: 'f', ...put('P', { id: `b${i}`, v: i }) });
    const last = await api.write({ branch: 'main', ...put('P', { id: 'a', v: 100 }) });
    const merged = await api.mergeBranch({ source: 'f' });
    if (merged.status !== 'success' || merged.commit === null) throw new Error('the merge did not land');
    const before = await historyView(api);
    expect(before.head).toBe(merged.commit.id);
    expect(before.firstParent).toBe(last.commit?.id);
    const versionBefore = (await s.service.graph.branchHead('main')).manifest.version;

    // The background compactor runs after each publication; then a full compaction is asked for on both branches.
    await s.service.compactor.settled();
    const rest = new RestClient(s.url);
    const full = await rest.compact({ branch: 'main', mode: 'full' });
    await rest.compact({ branch: 'f', mode: 'full' });
    // Whatever the background left to do: the answer names the head's commit, unchanged, or nothing.
    expect(full.commit === null || full.commit.id === merged.commit.id).toBe(true);

    const head = await s.service.graph.branchHead('main');
    expect(head.manifest.version).toBeGreaterThan(versionBefore);
    expect(head.manifest.layout?.of).toBeDefined();
    expect(await historyView(api)).toEqual(before);
    // The commit as it was published still reads, and a caller holding the head it read may write.
    expect((await api.getRow({ table: 'P', key: 'a', at: `commit:${merged.commit.id}` })).row).toMatchObject({ v: 100 });
    const next = await api.write({ branch: 'main', ...put('P', { id: 'a', v: 101 }), expectedHead: merged.commit.id });
    expect((await api.log({ at: 'main~1', limit: 1 })).commits[0]?.id).toBe(merged.commit.id);
    expect(next.commit?.parents).toEqual([merged.commit.id]);
  });

  it("regression: the log's table filter follows history simplification through merges", async () => {
    await api.createBranch({ name: 'g' });
    const q = await api.write({ branch: 'g', ...put('Q', { id: 'q' }) });
    const p = await api.write({ branch: 'main', ...put('P', { id: 'a', v: 200 }) });
    const m = await api.mergeBranch({ source: 'g' });
    if (m.status !== 'success' || m.commit === null) throw new Error('the merge did not land');
    // The merge took Q unchanged from g and P unchanged from main: it is listed for neither.
    expect((await api.log({ table: 'Q', limit: 10 })).commits.map((c) => c.id)).toEqual([q.commit?.id]);
    expect((await api.log({ table: 'P', limit: 1 })).commits.map((c) => c.id)).toEqual([p.commit?.id]);
    expect((await api.log({ kind: 'merge', limit: 1 })).commits.map((c) => c.id)).toEqual([m.commit.id]);
  });
});
