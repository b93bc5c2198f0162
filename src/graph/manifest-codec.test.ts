import { describe, expect, it } from 'vitest';
import { mergeOk, mustWrite, rowsOf } from '../../test/support/fixtures.js';
import { isBranchgraphError } from '../model/errors.js';
import { CountingStore } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { Graph } from './graph.js';
import { keys } from './keys.js';
import { StoredManifestZ } from './manifest.js';

const TABLES = 60;
const names = Array.from({ length: TABLES }, (_, i) => `T${String(i).padStart(2, '0')}`);

async function manyTables(store: MemoryStore, partBytes?: number): Promise<Graph> {
  const g = await Graph.open(store, { partBytes });
  await g.applySchema('main', names.map((n) => `node ${n} { id: string @key\n v: int }`).join('\n'));
  for (const n of names) await mustWrite(g, 'main', [{ op: 'insert', table: n, values: { id: 'a', v: 1 } }]);
  return g;
}

const partKeys = async (store: MemoryStore): Promise<string[]> => {
  const out: string[] = [];
  for await (const o of store.list('parts/')) out.push(o.key);
  return out;
};

describe('manifest format 2: part trees', () => {
  it('a one-row write in a graph of many tables writes its table path, not every table', async () => {
    const store = new MemoryStore();
    const g = await manyTables(store, 256);
    const counting = new CountingStore(store);
    const w = await Graph.open(counting, { partBytes: 256 });
    await w.branchHead('main');
    const before = counting.snapshot();
    await mustWrite(w, 'main', [{ op: 'update', table: 'T07', values: { id: 'a', v: 2 } }]);
    const put = counting.snapshot().putIfAbsent;
    const metaBytes = put.bytesWritten - before.putIfAbsent.bytesWritten;
    const head = (await w.branchHead('main')).manifest;
    const allTables = JSON.stringify(head.tables).length;
    // The run file, the commit index entry, the manifest and a few parts of at most 256 bytes each.
    expect(metaBytes).toBeLessThan(allTables / 2);
    // A cold process reads every table back, from the parts the manifests share.
    const cold = await Graph.open(store);
    expect((await rowsOf(cold, 'main', 'T07')).a).toMatchObject({ v: 2 });
    expect((await rowsOf(cold, 'main', 'T59')).a).toMatchObject({ v: 1 });
    expect(Object.keys((await cold.branchHead('main')).manifest.tables)).toEqual(names);
    await g.close();
  });

  it('the ancestry of many merged branches is shared, not copied into every manifest', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, { partBytes: 128 });
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    const sizes: number[] = [];
    for (let i = 0; i < 40; i++) {
      await g.createBranch(`b${i}`, { branch: 'main' });
      await mustWrite(g, `b${i}`, [{ op: 'upsert', table: 'P', values: { id: `k${i}`, v: i } }]);
      await mergeOk(g, `b${i}`, { deleteBranch: true });
      const head = (await g.branchHead('main')).manifest;
      const stored = decodeJson(StoredManifestZ, await store.get(keys.manifest(head.lineage, head.version)), 'm');
      sizes.push(JSON.stringify(stored.ancestry).length);
    }
    const head = (await g.branchHead('main')).manifest;
    expect(head.ancestry.size).toBe(41);
    // The manifest holds the ancestry tree's root: its size stops growing with the lineages merged.
    // A root has at most 16 children, whatever the number of lineages below it.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(16 * 36);
    expect(Math.max(...sizes)).toBeLessThan(JSON.stringify(Object.fromEntries(head.ancestry.entries())).length / 2);
    const cold = await Graph.open(store);
    expect(Object.keys(await rowsOf(cold, 'main', 'P'))).toHaveLength(40);
    const coldHead = (await cold.branchHead('main')).manifest;
    expect([...coldHead.ancestry.entries()].sort()).toEqual([...head.ancestry.entries()].sort());
  });

  it('reads format 1 manifests, and the next publication writes format 2', async () => {
    const store = new MemoryStore();
    const g = await manyTables(store, 256);
    const head = (await g.branchHead('main')).manifest;
    const key = keys.manifest(head.lineage, head.version);
    const { tableTree: _t, ancestry, ...rest } = head;
    await store.deleteMany([key]);
    await store.putIfAbsent(key, encodeJson({ format: 1, ...rest, ancestry: Object.fromEntries(ancestry.entries()) }));
    for (const p of await partKeys(store)) await store.deleteMany([p]);
    const old = await Graph.open(store);
    expect((await rowsOf(old, 'main', 'T03')).a).toMatchObject({ v: 1 });
    await mustWrite(old, 'main', [{ op: 'update', table: 'T03', values: { id: 'a', v: 5 } }]);
    const next = (await old.branchHead('main')).manifest;
    expect(decodeJson(StoredManifestZ, await store.get(keys.manifest(next.lineage, next.version)), 'm').format).toBe(2);
    expect((await rowsOf(await Graph.open(store), 'main', 'T03')).a).toMatchObject({ v: 5 });
  });

  it('a missing or damaged part is corrupt_object, and the graph keeps serving what it can read', async () => {
    const store = new MemoryStore();
    await manyTables(store, 256);
    const parts = await partKeys(store);
    expect(parts.length).toBeGreaterThan(4);
    const victim = parts[parts.length - 1] as string;
    const bytes = await store.get(victim);
    await store.deleteMany([victim]);
    const err = await (await Graph.open(store)).branchHead('main').catch((e: unknown) => e);
    expect(isBranchgraphError(err, 'corrupt_object')).toBe(true);
    const damaged = bytes.slice();
    damaged[damaged.length - 5] = damaged[damaged.length - 5] === 0x30 ? 0x31 : 0x30;
    await store.putIfAbsent(victim, damaged);
    const err2 = await (await Graph.open(store)).branchHead('main').catch((e: unknown) => e);
    expect(isBranchgraphError(err2, 'corrupt_object')).toBe(true);
    await store.deleteMany([victim]);
    await store.putIfAbsent(victim, bytes);
    expect((await rowsOf(await Graph.open(store), 'main', 'T00')).a).toMatchObject({ v: 1 });
  });

  it('GC keeps every part a retained manifest names and deletes the rest once old', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore(() => now);
    const g = await Graph.open(store, { partBytes: 128, clock: () => now });
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    for (let i = 0; i < 10; i++) {
      await g.createBranch(`b${i}`, { branch: 'main' });
      await mustWrite(g, `b${i}`, [{ op: 'upsert', table: 'P', values: { id: `k${i}`, v: i } }]);
      await mergeOk(g, `b${i}`, { deleteBranch: true });
    }
    await g.createBranch('doomed', { branch: 'main' });
    for (let i = 0; i < 5; i++) await mustWrite(g, 'doomed', [{ op: 'upsert', table: 'P', values: { id: `d${i}`, v: i } }]);
    const withDoomed = (await partKeys(store)).length;
    await g.deleteBranch('doomed');
    now += 3 * 60 * 60 * 1000;
    const report = await g.gc({ now });
    expect(report.deleted.parts).toBeGreaterThan(0);
    expect((await partKeys(store)).length).toBe(withDoomed - report.deleted.parts);
    const cold = await Graph.open(store);
    expect(Object.keys(await rowsOf(cold, 'main', 'P'))).toHaveLength(10);
    expect((await cold.branchHead('main')).manifest.ancestry.size).toBe(11);
  });
});
