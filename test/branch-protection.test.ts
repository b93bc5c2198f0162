/**
 * Protected branches: every path that changes a branch honours the rule,
 * one test each (writes, loads, ingest, schema changes, merges, cherry-picks,
 * reverts, resets, deletion), over REST with real tokens; previews, folds of
 * rows acknowledged before the rule, compaction and tags stay allowed; an
 * admin's bypass lands only when the rule allows it and is recorded on the
 * commit; a refused change leaves the store as it was; and a rule set
 * through one server binds a second server on the same store.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { RestClient } from '../src/http/rest-client.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { testServer, type TestServer } from './support/test-server.js';
import { gql } from './support/test-server.js';

const SCHEMA = 'node P { id: string @key\n v: int? }';
const TOKENS = 'admin:admin-token-1:alice,write:writer-token-1:bob';
const put = (id: string, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'P', values: { id, v } }] });
const refused = { code: 'branch_protected' };

describe('protected branches', () => {
  let s: TestServer;
  let admin: RestClient;
  let writer: RestClient;
  let feature: string;
  let onMain: string;
  beforeAll(async () => {
    s = await testServer({ tokens: TOKENS });
    admin = new RestClient(s.url, 'admin-token-1');
    writer = new RestClient(s.url, 'writer-token-1');
    await admin.applySchema({ branch: 'main', schema: SCHEMA });
    onMain = (await writer.write({ branch: 'main', ...put('a', 1) })).commit?.id as string;
    await writer.createBranch({ name: 'f' });
    feature = (await writer.write({ branch: 'f', ...put('b', 1) })).commit?.id as string;
    // Rows acknowledged before the rule: folding them later is no new change.
    await writer.ingest({ branch: 'main', ndjson: JSON.stringify(put('w', 1).ops[0]) });
    const createdAt = (await admin.getBranch({ name: 'main' })).createdAt;
    const b = await admin.protectBranch({ name: 'main', requiredApprovals: 1 });
    expect(b.createdAt).toBe(createdAt);
    expect(b.protection).toMatchObject({ requiredApprovals: 1, allowAdminBypass: false, staleApprovals: 'result_change', setBy: 'alice' });
  });
  afterAll(() => s.close());

  let headBefore: string;
  beforeEach(async () => {
    headBefore = (await writer.getBranch({ name: 'main' })).head.id;
  });
  const unchanged = async () => expect((await writer.getBranch({ name: 'main' })).head.id).toBe(headBefore);

  it('refuses a direct write, naming the rule, and changes nothing', async () => {
    const e = await writer.write({ branch: 'main', ...put('a', 2) }).catch((x: unknown) => x);
    expect(e).toMatchObject({ code: 'branch_protected', message: 'branch main is protected: writes are refused; merge a request instead' });
    await unchanged();
  });

  it('refuses a bulk load', async () => {
    await expect(writer.load({ branch: 'main', ndjson: JSON.stringify(put('a', 3).ops[0]) })).rejects.toMatchObject(refused);
    await unchanged();
  });

  it('refuses an ingest before acknowledging anything', async () => {
    await expect(writer.ingest({ branch: 'main', ndjson: JSON.stringify(put('i', 1).ops[0]) })).rejects.toMatchObject(refused);
    // The REST route carries NDJSON only: operations given as a list are refused, not dropped.
    await expect(writer.ingest({ branch: 'f', ops: put('i', 1).ops })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await writer.walStatus({ branch: 'main' })).pendingGenerations).toBe(1);
  });

  it('refuses a schema change', async () => {
    await expect(admin.applySchema({ branch: 'main', schema: `${SCHEMA}\nnode Q { id: string @key }` })).rejects.toMatchObject(refused);
    await unchanged();
  });

  it('refuses a direct merge, but previews it', async () => {
    await expect(writer.mergeBranch({ source: 'f', into: 'main' })).rejects.toMatchObject({
      code: 'branch_protected',
      message: 'branch main is protected: merges land through a merge request with 1 approval',
    });
    const preview = await writer.mergeBranch({ source: 'f', into: 'main', dryRun: true });
    expect(preview).toMatchObject({ status: 'success', dryRun: true });
    await unchanged();
  });

  it('refuses a cherry-pick and a revert', async () => {
    await expect(writer.cherryPick({ branch: 'main', commit: `commit:${feature}` })).rejects.toMatchObject(refused);
    await expect(writer.revert({ branch: 'main', commit: `commit:${onMain}` })).rejects.toMatchObject(refused);
    await unchanged();
  });

  it('refuses a reset and a deletion, even by an admin without a bypass', async () => {
    await expect(admin.resetBranch({ name: 'main', to: 'main~1', expectedHead: headBefore })).rejects.toMatchObject(refused);
    await expect(admin.deleteBranch({ name: 'main' })).rejects.toMatchObject(refused);
    await unchanged();
  });

  it('still folds rows acknowledged before the rule, compacts and tags', async () => {
    const r = await writer.catchUp({ branch: 'main' });
    expect(r.outcome).not.toBe('failed');
    expect((await writer.getRow({ table: 'P', key: 'w' })).row).toEqual({ id: 'w', v: 1 });
    await admin.compact({ branch: 'main', mode: 'full' });
    await writer.createTag({ name: 'before-bypass' });
  });

  it('refuses a bypass the rule does not allow, and a bypass by a writer', async () => {
    await expect(admin.write({ branch: 'main', ...put('a', 4), bypassProtection: true })).rejects.toMatchObject({
      code: 'branch_protected',
      message: 'branch main is protected and its rule allows no bypass',
    });
    await expect(writer.write({ branch: 'main', ...put('a', 4), bypassProtection: true })).rejects.toMatchObject({ code: 'forbidden' });
    await unchanged();
  });

  it("lands an admin's bypass when the rule allows it, recorded on the commit, and a bypassed reset keeps the rule", async () => {
    await admin.protectBranch({ name: 'main', requiredApprovals: 2, allowAdminBypass: true });
    const w = await admin.write({ branch: 'main', ...put('a', 5), bypassProtection: true });
    expect(w.commit).toMatchObject({ actor: 'alice', bypass: true });
    const m = await admin.mergeBranch({ source: 'f', into: 'main', bypassProtection: true });
    expect(m).toMatchObject({ status: 'success', commit: { bypass: true } });
    const head = (await writer.getBranch({ name: 'main' })).head.id;
    const reset = await admin.resetBranch({ name: 'main', to: 'main~1', expectedHead: head, bypassProtection: true });
    expect(reset.protection).toMatchObject({ requiredApprovals: 2, allowAdminBypass: true });
    await expect(writer.write({ branch: 'main', ...put('a', 6) })).rejects.toMatchObject(refused);
    const log = (await writer.log({ at: 'main', limit: 5 })).commits;
    expect(log[0]).toMatchObject({ kind: 'write', bypass: true });
  });

  it('answers over GraphQL: the rule on the branch, the refusal as a typed error', async () => {
    const r = await gql(
      s.url,
      '{ branch(name: "main") { protection { requiredApprovals allowAdminBypass setBy } } }',
      {},
      'writer-token-1',
    );
    expect(r.body.data).toEqual({ branch: { protection: { requiredApprovals: 2, allowAdminBypass: true, setBy: 'alice' } } });
    const w = await gql(
      s.url,
      'mutation { write(branch: "main", input: { ops: [{ op: "upsert", table: "P", values: { id: "g", v: 1 } }] }) { inserted } }',
      {},
      'writer-token-1',
    );
    expect(w.body.errors?.[0]?.extensions?.code).toBe('branch_protected');
    const p = await gql(s.url, 'mutation { unprotectBranch(name: "main") { protection { setBy } } }', {}, 'writer-token-1');
    expect(p.body.errors?.[0]?.extensions?.code).toBe('forbidden');
  });

  it('takes direct changes again once unprotected', async () => {
    expect((await admin.unprotectBranch({ name: 'main' })).protection).toBeNull();
    expect((await writer.write({ branch: 'main', ...put('a', 7) })).commit).not.toBeNull();
  });
});

describe('protection across servers', () => {
  it('a rule set through one server binds the next change through another on the same store', async () => {
    const store = new MemoryStore();
    const one = await serviceOnStore(store, { actor: 'one', shard: 'one' });
    const two = await serviceOnStore(store, { actor: 'two', shard: 'two' });
    const a: BranchgraphApi = embeddedApi(one, { transport: 'embedded' });
    const b: BranchgraphApi = embeddedApi(two, { transport: 'embedded' });
    await a.applySchema({ branch: 'main', schema: SCHEMA });
    await b.write({ branch: 'main', ...put('x', 1) });
    await a.protectBranch({ name: 'main' });
    await expect(b.write({ branch: 'main', ...put('x', 2) })).rejects.toMatchObject(refused);
    await expect(b.ingest({ branch: 'main', ops: put('x', 3).ops })).rejects.toMatchObject(refused);
    expect((await b.getBranch({ name: 'main' })).protection).toMatchObject({ requiredApprovals: 1 });
    await a.unprotectBranch({ name: 'main' });
    expect((await b.write({ branch: 'main', ...put('x', 4) })).commit).not.toBeNull();
    await one.close();
    await two.close();
  });
});
