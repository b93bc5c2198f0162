/**
 * Two processes on one store: each a service (or graph host) of its own, with its own caches, as
 * two servers on one bucket are. Every per-process cache of state the other process can change is
 * tested here: a change one process makes is never contradicted by what the other acknowledges or
 * serves (docs/architecture.md, "Caches across processes").
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { GraphHost } from '../src/service/graph-host.js';
import { BranchgraphService, type RequestContext } from '../src/service/service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import type { ObjectStore } from '../src/store/object-store.js';

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
  await pair[0].applySchema('main', { schema: SCHEMA }, ctx);
  return pair;
}

async function hosts(): Promise<{ store: MemoryStore; a: GraphHost; b: GraphHost }> {
  const store = new MemoryStore();
  const host = async (shard: string) => new GraphHost(await service(store, shard), store, (s) => service(s, shard));
  return { store, a: await host('a'), b: await host('b') };
}

async function* lines(...ls: string[]): AsyncIterable<Uint8Array> {
  for (const l of ls) yield new TextEncoder().encode(`${l}\n`);
}

describe('a hosted graph deleted by one process', () => {
  it('regression: is not_found in the other for writes, ingests and reads, and a graph created again under the name is a new graph there too', async () => {
    const { a, b } = await hosts();
    await a.create('crm');
    await (await a.service('crm')).applySchema('main', { schema: SCHEMA }, ctx);
    const held = await b.service('crm');
    await held.write('main', put('x', 1), ctx);
    await a.delete('crm');
    // Every request reads the registry entry first.
    await expect(b.service('crm')).rejects.toMatchObject({ code: 'not_found' });
    // A request already holding the old service publishes, and is refused before it is acknowledged.
    await expect(held.write('main', put('y', 2), ctx)).rejects.toMatchObject({ code: 'not_found' });
    await expect(held.ingest('main', [{ op: 'upsert', table: 'P', values: { id: 'z', v: 3 } }], ctx)).rejects.toMatchObject({ code: 'not_found' });
    await expect(held.ingestNdjson('main', lines(JSON.stringify({ op: 'upsert', table: 'P', values: { id: 'w', v: 4 } })), ctx)).rejects.toMatchObject({ code: 'not_found' });
    await expect(held.createBranch('late', undefined, ctx)).rejects.toMatchObject({ code: 'not_found' });

    // Created again: B serves the new graph, never the old lineage.
    await a.create('crm');
    const fresh = await b.service('crm');
    expect(fresh).not.toBe(held);
    expect((await fresh.listBranches({}, ctx)).branches.map((x) => x.name)).toEqual(['main']);
    await expect(fresh.getRow({ branch: 'main' }, 'P', 'x', ctx)).rejects.toMatchObject({ code: expect.stringMatching(/not_found|invalid_input/) });
    // The old service's late writes are refused and invisible to the new graph.
    await expect(held.createBranch('late2', undefined, ctx)).rejects.toMatchObject({ code: 'not_found' });
    expect((await (await a.service('crm')).listBranches({}, ctx)).branches.map((x) => x.name)).toEqual(['main']);
    // Both processes now agree on one graph.
    await (await b.service('crm')).applySchema('main', { schema: SCHEMA }, ctx);
    await (await b.service('crm')).write('main', put('n', 9), ctx);
    expect(await (await a.service('crm')).getRow({ branch: 'main' }, 'P', 'n', ctx)).toMatchObject({ id: 'n', v: 9 });
    await Promise.all([a.close(), b.close()]);
  });
});

describe('caches across processes', () => {
  it('a branch deleted (and created again) by one process: the other refuses writes to the old one and writes to the new one', async () => {
    const [a, b] = await services();
    await a.createBranch('f', undefined, ctx);
    await b.write('f', put('x', 1), ctx);
    await a.deleteBranch('f', ctx);
    await expect(b.write('f', put('y', 2), ctx)).rejects.toMatchObject({ code: 'not_found' });
    await expect(b.getRow({ branch: 'f' }, 'P', 'x', ctx)).rejects.toMatchObject({ code: 'not_found' });
    await a.createBranch('f', undefined, ctx);
    await b.write('f', put('z', 3), ctx);
    // The new f forked from main: it has z, not the old f's x.
    await expect(a.getRow({ branch: 'f' }, 'P', 'x', ctx)).rejects.toMatchObject({ code: 'not_found' });
    expect(await a.getRow({ branch: 'f' }, 'P', 'z', ctx)).toMatchObject({ v: 3 });
  });

  it('a head moved by one process is seen by the other at its next read, and its next write lands on top of it', async () => {
    const [a, b] = await services();
    await b.write('main', put('x', 1), ctx);
    await a.write('main', put('x', 2), ctx);
    expect(await b.getRow({ branch: 'main' }, 'P', 'x', ctx)).toMatchObject({ v: 2 });
    await b.write('main', put('y', 1), ctx);
    expect(await a.getRow({ branch: 'main' }, 'P', 'x', ctx)).toMatchObject({ v: 2 });
  });

  it('a tag deleted and created again by one process is read afresh by the other', async () => {
    const [a, b] = await services();
    const first = await a.createTag('v1', undefined, undefined, ctx);
    expect((await b.getTag('v1', ctx)).commit).toBe(first.commit);
    await a.deleteTag('v1', ctx);
    await expect(b.getTag('v1', ctx)).rejects.toMatchObject({ code: 'not_found' });
    await a.write('main', put('x', 1), ctx);
    const second = await a.createTag('v1', undefined, undefined, ctx);
    expect((await b.getTag('v1', ctx)).commit).toBe(second.commit);
    expect(await b.getRow({ tag: 'v1' }, 'P', 'x', ctx)).toMatchObject({ v: 1 });
  });

  it("a schema applied by one process governs the other process's next write", async () => {
    const [a, b] = await services();
    await b.write('main', put('x', 1), ctx);
    await a.applySchema('main', { schema: 'node P { id: string @key\n v: int?\n w: string? }' }, ctx);
    await b.write('main', { ops: [{ op: 'upsert', table: 'P', values: { id: 'y', v: 1, w: 'new' } }] }, ctx);
    await a.applySchema('main', { schema: SCHEMA, migration: { drop: ['P.w'] } }, ctx);
    await expect(b.write('main', { ops: [{ op: 'upsert', table: 'P', values: { id: 'z', v: 1, w: 'gone' } }] }, ctx)).rejects.toMatchObject({ code: 'constraint_violation' });
  });
});
