/**
 * Two processes on one store: each a service (or graph host) of its own, with its own caches, as
 * two servers on one bucket are. Every per-process cache of state the other process can change is
 * tested here: a change one process makes is never contradicted by what the other acknowledges or
 * serves (docs/architecture.md, "Caches across processes").
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { GraphHost } from '../src/service/graph-host.js';
import { BranchgraphService } from '../src/service/service.js';
import type { RequestContext } from '../src/service/request-context.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { ObjectStore } from '../src/store/object-store.js';
import { embeddedApi } from '../src/service/api.js';

const ctx: RequestContext = { transport: 'embedded', actor: 'test' };
const SCHEMA = 'node P { id: string @key\n v: int? }';
const put = (id: string, v: number) => ({ ops: [{ op: 'upsert' as const, table: 'P', values: { id, v } }] });

async function service(store: ObjectStore, shard: string): Promise<BranchgraphService> {
  return new BranchgraphService(await Graph.open(store, { actor: shard }), { wal: { shard, sealAfterMs: 5 } });
}

/** Two processes' services on one store, the schema applied. */
async function services(): Promise<[BranchgraphService, BranchgraphService]> {
  const store = new MemoryStore();
  const pair: [BranchgraphService, BranchgraphService] = [await service(store, 'a'), await service(store, 'b')];
  await embeddedApi(pair[0], ctx).applySchema({ branch: 'main', schema: SCHEMA });
  return pair;
}

async function hosts(): Promise<{ store: MemoryStore; a: GraphHost; b: GraphHost }> {
  const store = new MemoryStore();
  const host = async (shard: string) => new GraphHost({ root: await service(store, shard), store, open: (s) => service(s, shard) });
  return { store, a: await host('a'), b: await host('b') };
}

async function* lines(...ls: string[]): AsyncIterable<Uint8Array> {
  for (const l of ls) yield new TextEncoder().encode(`${l}\n`);
}

describe('a hosted graph deleted by one process', () => {
  it('regression: is not_found in the other for writes, ingests and reads, and a graph created again under the name is a new graph there too', async () => {
    const { a, b } = await hosts();
    await a.create('crm');
    await embeddedApi(await a.service('crm'), ctx).applySchema({ branch: 'main', schema: SCHEMA });
    const held = await b.service('crm');
    await embeddedApi(held, ctx).write({ branch: 'main', ...put('x', 1) });
    await a.delete('crm');
    // Every request reads the registry entry first.
    await expect(b.service('crm')).rejects.toMatchObject({ code: 'not_found' });
    // A request already holding the old service publishes, and is refused before it is acknowledged.
    await expect(embeddedApi(held, ctx).write({ branch: 'main', ...put('y', 2) })).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      embeddedApi(held, ctx).ingest({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'z', v: 3 } }] }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(
      embeddedApi(held, ctx).ingest({
        branch: 'main',
        ndjson: lines(JSON.stringify({ op: 'upsert', table: 'P', values: { id: 'w', v: 4 } })),
      }),
    ).rejects.toMatchObject({ code: 'not_found' });
    await expect(embeddedApi(held, ctx).createBranch({ name: 'late' })).rejects.toMatchObject({ code: 'not_found' });

    // Created again: B serves the new graph, never the old lineage.
    await a.create('crm');
    const fresh = await b.service('crm');
    expect(fresh).not.toBe(held);
    expect((await embeddedApi(fresh, ctx).listBranches({})).branches.map((x) => x.name)).toEqual(['main']);
    await expect(embeddedApi(fresh, ctx).getRow({ table: 'P', key: 'x', at: { branch: 'main' } })).rejects.toMatchObject({
      code: expect.stringMatching(/not_found|invalid_input/),
    });
    // The old service's late writes are refused and invisible to the new graph.
    await expect(embeddedApi(held, ctx).createBranch({ name: 'late2' })).rejects.toMatchObject({ code: 'not_found' });
    expect((await embeddedApi(await a.service('crm'), ctx).listBranches({})).branches.map((x) => x.name)).toEqual(['main']);
    // Both processes now agree on one graph.
    await embeddedApi(await b.service('crm'), ctx).applySchema({ branch: 'main', schema: SCHEMA });
    await embeddedApi(await b.service('crm'), ctx).write({ branch: 'main', ...put('n', 9) });
    expect((await embeddedApi(await a.service('crm'), ctx).getRow({ table: 'P', key: 'n', at: { branch: 'main' } })).row).toMatchObject({
      id: 'n',
      v: 9,
    });
    await Promise.all([a.close(), b.close()]);
  });
});

describe('caches across processes', () => {
  it('a branch deleted (and created again) by one process: the other refuses writes to the old one and writes to the new one', async () => {
    const [a, b] = await services();
    await embeddedApi(a, ctx).createBranch({ name: 'f' });
    await embeddedApi(b, ctx).write({ branch: 'f', ...put('x', 1) });
    await embeddedApi(a, ctx).deleteBranch({ name: 'f' });
    await expect(embeddedApi(b, ctx).write({ branch: 'f', ...put('y', 2) })).rejects.toMatchObject({ code: 'not_found' });
    await expect(embeddedApi(b, ctx).getRow({ table: 'P', key: 'x', at: { branch: 'f' } })).rejects.toMatchObject({ code: 'not_found' });
    await embeddedApi(a, ctx).createBranch({ name: 'f' });
    await embeddedApi(b, ctx).write({ branch: 'f', ...put('z', 3) });
    // The new f forked from main: it has z, not the old f's x.
    await expect(embeddedApi(a, ctx).getRow({ table: 'P', key: 'x', at: { branch: 'f' } })).rejects.toMatchObject({ code: 'not_found' });
    expect((await embeddedApi(a, ctx).getRow({ table: 'P', key: 'z', at: { branch: 'f' } })).row).toMatchObject({ v: 3 });
  });

  it('a head moved by one process is seen by the other at its next read, and its next write lands on top of it', async () => {
    const [a, b] = await services();
    await embeddedApi(b, ctx).write({ branch: 'main', ...put('x', 1) });
    await embeddedApi(a, ctx).write({ branch: 'main', ...put('x', 2) });
    expect((await embeddedApi(b, ctx).getRow({ table: 'P', key: 'x', at: { branch: 'main' } })).row).toMatchObject({ v: 2 });
    await embeddedApi(b, ctx).write({ branch: 'main', ...put('y', 1) });
    expect((await embeddedApi(a, ctx).getRow({ table: 'P', key: 'x', at: { branch: 'main' } })).row).toMatchObject({ v: 2 });
  });

  it("a branch reset or protected by one process governs the other's next write, though the other last published its head", async () => {
    const [a, b] = await services();
    const start = await embeddedApi(b, ctx).write({ branch: 'main', ...put('x', 1) });
    await embeddedApi(b, ctx).write({ branch: 'main', ...put('y', 1) });
    // b's lane now knows main's head; a resets main under it, to before y.
    const head = (await embeddedApi(a, ctx).getBranch({ name: 'main' })).head.id;
    await embeddedApi(a, ctx).resetBranch({ name: 'main', to: { commit: start.commit?.id as string }, expectedHead: head });
    await embeddedApi(b, ctx).write({ branch: 'main', ...put('z', 1) });
    const rows = async (svc: BranchgraphService) =>
      (await embeddedApi(svc, ctx).rows({ table: 'P', at: { branch: 'main' }, limit: 10 })).items.map((r) => r.key);
    // z landed on the reset head, where both processes read it, and y stayed gone.
    expect(await rows(a)).toEqual(['x', 'z']);
    expect(await rows(b)).toEqual(['x', 'z']);
    await embeddedApi(a, ctx).protectBranch({ name: 'main', requiredApprovals: 1 });
    await expect(embeddedApi(b, ctx).write({ branch: 'main', ...put('w', 1) })).rejects.toMatchObject({ code: 'branch_protected' });
    expect(await rows(a)).toEqual(['x', 'z']);
  });

  it('a tag deleted and created again by one process is read afresh by the other', async () => {
    const [a, b] = await services();
    const first = await embeddedApi(a, ctx).createTag({ name: 'v1' });
    expect((await embeddedApi(b, ctx).getTag({ name: 'v1' })).commit).toBe(first.commit);
    await embeddedApi(a, ctx).deleteTag({ name: 'v1' });
    await expect(embeddedApi(b, ctx).getTag({ name: 'v1' })).rejects.toMatchObject({ code: 'not_found' });
    await embeddedApi(a, ctx).write({ branch: 'main', ...put('x', 1) });
    const second = await embeddedApi(a, ctx).createTag({ name: 'v1' });
    expect((await embeddedApi(b, ctx).getTag({ name: 'v1' })).commit).toBe(second.commit);
    expect((await embeddedApi(b, ctx).getRow({ table: 'P', key: 'x', at: { tag: 'v1' } })).row).toMatchObject({ v: 1 });
  });

  it("a schema applied by one process governs the other process's next write", async () => {
    const [a, b] = await services();
    await embeddedApi(b, ctx).write({ branch: 'main', ...put('x', 1) });
    await embeddedApi(a, ctx).applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int?\n w: string? }' });
    await embeddedApi(b, ctx).write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'y', v: 1, w: 'new' } }] });
    await embeddedApi(a, ctx).applySchema({ branch: 'main', schema: SCHEMA, migration: { drop: ['P.w'] } });
    await expect(
      embeddedApi(b, ctx).write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'z', v: 1, w: 'gone' } }] }),
    ).rejects.toMatchObject({ code: 'constraint_violation' });
  });
});
