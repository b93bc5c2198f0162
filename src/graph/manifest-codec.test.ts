import { describe, expect, it } from 'vitest';
import { mergeOk, mustWrite, rowsOf } from '../../test/support/fixtures.js';
import { isBranchgraphError } from '../model/errors.js';
import { CountingStore } from '../store/counting-store.js';
import { MemoryStore } from '../store/memory-store.js';
import { listAll } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { Graph } from './graph.js';
import { keys } from './keys.js';
import { StoredManifestZ } from './manifest.js';
import { bodyOf } from '../model/part-tree.js';
import { tailLimit } from './run-list-parts.js';
import { cloneMemoryStore } from '../../test/support/stores.js';
import { storedText } from '../model/compress-stored.js';

const TABLES = 60;
const names = Array.from({ length: TABLES }, (_, i) => `T${String(i).padStart(2, '0')}`);

async function manyTables(store: MemoryStore, partBytes?: number): Promise<Graph> {
  const g = await Graph.open(store, { partBytes });
  await g.applySchema('main', names.map((n) => `node ${n} { id: string @key\n v: int }`).join('\n'));
  for (const n of names) await mustWrite(g, 'main', [{ op: 'insert', table: n, values: { id: 'a', v: 1 } }]);
  // Idle before a test tampers with the store: what the graph still writes after its last
  // acknowledged write (a batch's later versions at their own keys, hints) would land after the
  // tampering, and a test that deleted parts would read a version naming them.
  await g.idle();
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

  it('a merge writes the ancestry entries its leaf gained since it was last written whole; readers and GC see the whole leaf', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, { partBytes: 512 });
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    const parts = () => listAll(store, 'parts/').then((p) => p.map((o) => o.key));
    const ancestryParts = async (ks: string[]) =>
      (
        await Promise.all(ks.map(async (k) => JSON.parse(storedText(await store.get(k))) as { kind: string; b?: string; e?: object }))
      ).filter((p) => p.kind === 'ancestry' && p.e !== undefined);
    let before = await parts();
    const written: { delta: number; full: number; deltaEntries: number[] } = { delta: 0, full: 0, deltaEntries: [] };
    for (let i = 0; i < 60; i++) {
      await g.createBranch(`b${i}`, { branch: 'main' });
      await mustWrite(g, `b${i}`, [{ op: 'upsert', table: 'P', values: { id: `k${i}`, v: i } }]);
      await mergeOk(g, `b${i}`, { deleteBranch: true });
      const now = await parts();
      for (const leaf of await ancestryParts(now.filter((k) => !before.includes(k)))) {
        if (leaf.b === undefined) written.full++;
        else {
          written.delta++;
          written.deltaEntries.push(Object.keys(leaf.e ?? {}).length);
        }
      }
      before = now;
    }
    // Most merges wrote a delta of a few entries (a quarter of a leaf at most), not their whole leaf.
    expect(written.delta).toBeGreaterThan(written.full);
    expect(Math.max(...written.deltaEntries)).toBeLessThanOrEqual(512 / 4 / 31);
    const head = (await g.branchHead('main')).manifest;
    const whole = [...head.ancestry.entries()].sort();
    expect(whole).toHaveLength(61);
    // Collected with no grace: every base a delta names is kept, and a cold process reads every entry.
    await g.gc({ graceMs: 0, now: Date.now() + 3_600_000 });
    const cold = await Graph.open(store, { partBytes: 512 });
    expect([...(await cold.branchHead('main')).manifest.ancestry.entries()].sort()).toEqual(whole);
    await cold.createBranch('late', { branch: 'main' });
    await mustWrite(cold, 'late', [{ op: 'upsert', table: 'P', values: { id: 'late', v: 1 } }]);
    await mergeOk(cold, 'late');
    // A delta whose base is gone is a damaged graph, said plainly, not a leaf with entries missing.
    const latest = (await cold.branchHead('main')).manifest.ancestry.tree;
    const base = [...(latest.children?.values() ?? [])].find((leaf) => leaf.base !== undefined)?.base?.id;
    expect(base).toBeDefined();
    await store.deleteMany([keys.part(base as string)]);
    const damaged = await Graph.open(store, { partBytes: 512 })
      .then((x) => x.branchHead('main'))
      .then(
        () => 'read',
        (e: unknown) => (isBranchgraphError(e) ? e.code : String(e)),
      );
    expect(damaged).toBe('corrupt_object');
  });

  it('reads format 1 manifests, and the next publication writes format 3', async () => {
    const store = new MemoryStore();
    const g = await manyTables(store, 256);
    const head = (await g.branchHead('main')).manifest;
    const key = keys.manifest(head.lineage, head.version);
    const { tableTree: _t, ancestry, ...rest } = head;
    await store.deleteMany([key]);
    await store.putIfAbsent(
      key,
      encodeJson({
        format: 1,
        ...rest,
        ancestry: Object.fromEntries(ancestry.entries()),
      }),
    );
    for (const p of await partKeys(store)) await store.deleteMany([p]);
    const old = await Graph.open(store);
    expect((await rowsOf(old, 'main', 'T03')).a).toMatchObject({ v: 1 });
    await mustWrite(old, 'main', [{ op: 'update', table: 'T03', values: { id: 'a', v: 5 } }]);
    const next = (await old.branchHead('main')).manifest;
    expect(decodeJson(StoredManifestZ, await store.get(keys.manifest(next.lineage, next.version)), 'm').format).toBe(3);
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

describe('manifest format 3: run-list parts', () => {
  // Long run lists are what these tests are about: writes leave compaction to explicit calls.
  const LONG = { inlineCompaction: false } as const;
  const oneRowWrites = async (g: Graph, n: number, from = 0): Promise<void> => {
    for (let i = from; i < from + n; i++) await mustWrite(g, 'main', [{ op: 'upsert', table: 'P', values: { id: `k${i}`, v: i } }]);
  };
  const storedHead = async (g: Graph, store: MemoryStore) => {
    const head = (await g.branchHead('main')).manifest;
    const bytes = await store.get(keys.manifest(head.lineage, head.version));
    return { head, bytes: bytes.length, stored: decodeJson(StoredManifestZ, bytes, 'm') };
  };

  it('a one-row write to a table of many runs stores the newest runs, not the whole list, and reads back whole', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, LONG);
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    await oneRowWrites(g, 30);
    const at30 = await storedHead(g, store);
    await oneRowWrites(g, 90, 30);
    const at120 = await storedHead(g, store);
    expect(at120.head.tables.P?.runs).toHaveLength(120);
    const entry = (at120.stored.tables.e as Record<string, { runs: unknown[]; runBase?: { part: string; count: number } }>).P;
    expect(entry?.runBase?.count).toBeGreaterThan(100);
    expect(entry?.runs.length).toBeLessThanOrEqual(16);
    // Four times the runs, about twice the manifest (√n), where a whole list would be four times.
    expect(at120.bytes).toBeLessThan(at30.bytes * 2.5);
    const cold = await Graph.open(store, LONG);
    expect(Object.keys(await rowsOf(cold, 'main', 'P'))).toHaveLength(120);
    expect((await cold.branchHead('main')).manifest.tables.P?.runs.map((r) => r.key)).toEqual(at120.head.tables.P?.runs.map((r) => r.key));
    // A cold writer builds on the base it read rather than storing the list again (the tail has room).
    expect(tailLimit(121) - (entry?.runs.length ?? 0)).toBeGreaterThan(0);
    const counting = new CountingStore(store);
    const w = await Graph.open(counting, LONG);
    await w.branchHead('main');
    const before = counting.snapshot().putIfAbsent.bytesWritten;
    await oneRowWrites(w, 1, 500);
    const tail = (await storedHead(w, store)).stored.tables.e as Record<string, { runBase?: { part: string } }>;
    expect(tail.P?.runBase?.part).toBe(entry?.runBase?.part);
    expect(counting.snapshot().putIfAbsent.bytesWritten - before).toBeLessThan(at120.bytes * 2);
  });

  it('a compaction or a merge publishes lists that read back exactly, with small inline limits everywhere', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, { ...LONG, inlineRuns: 1, partBytes: 256 });
    await g.applySchema('main', 'node P { id: string @key\n v: int }\nnode Q { id: string @key\n v: int }');
    await oneRowWrites(g, 12);
    await g.createBranch('b', { branch: 'main' });
    for (let i = 0; i < 6; i++) await mustWrite(g, 'b', [{ op: 'upsert', table: 'Q', values: { id: `q${i}`, v: i } }]);
    await oneRowWrites(g, 6, 12);
    await mergeOk(g, 'b');
    await g.compact('main');
    await oneRowWrites(g, 3, 40);
    const head = (await g.branchHead('main')).manifest;
    const cold = await Graph.open(store, LONG);
    const coldHead = (await cold.branchHead('main')).manifest;
    for (const t of ['P', 'Q']) expect(coldHead.tables[t]?.runs).toEqual(head.tables[t]?.runs);
    expect(Object.keys(await rowsOf(cold, 'main', 'P'))).toHaveLength(21);
    expect(Object.keys(await rowsOf(cold, 'main', 'Q'))).toHaveLength(6);
  });

  it('reads format 2 manifests and parts, and the next publication writes format 3 with a run-list part', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, { ...LONG, inlineRuns: 1000, partBytes: 256 });
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    await oneRowWrites(g, 20);
    // Rewrite the head and its parts as the previous format stored them: entries whole, format 2 and 1.
    const head = (await g.branchHead('main')).manifest;
    const { tableTree, ancestry, tables: _t, ...rest } = head;
    const key = keys.manifest(head.lineage, head.version);
    await store.deleteMany([key]);
    await store.putIfAbsent(key, encodeJson({ format: 2, ...rest, tables: bodyOf(tableTree), ancestry: bodyOf(ancestry.tree) }));
    for (const p of await partKeys(store)) {
      const part = JSON.parse(new TextDecoder().decode(await store.get(p))) as Record<string, unknown>;
      const { $checksum: _c, ...body } = part;
      await store.deleteMany([p]);
      await store.putIfAbsent(p, encodeJson({ ...body, format: 1 }));
    }
    const old = await Graph.open(store, LONG);
    expect(Object.keys(await rowsOf(old, 'main', 'P'))).toHaveLength(20);
    await oneRowWrites(old, 1, 20);
    const next = await storedHead(old, store);
    expect(next.stored.format).toBe(3);
    expect((next.stored.tables.e as Record<string, { runBase?: unknown }> | undefined)?.P?.runBase).toBeDefined();
    expect(Object.keys(await rowsOf(await Graph.open(store, LONG), 'main', 'P'))).toHaveLength(21);
  });

  it('a missing or damaged run-list part is corrupt_object', async () => {
    const store = new MemoryStore();
    const g = await Graph.open(store, LONG);
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    await oneRowWrites(g, 12);
    const { stored } = await storedHead(g, store);
    const part = keys.part((stored.tables.e as Record<string, { runBase: { part: string } }>).P?.runBase.part as string);
    const bytes = await store.get(part);
    await store.deleteMany([part]);
    expect(isBranchgraphError(await (await Graph.open(store, LONG)).branchHead('main').catch((e: unknown) => e), 'corrupt_object')).toBe(
      true,
    );
    // A well-formed part holding other runs than the entry says.
    const body = JSON.parse(storedText(bytes)) as { runs: unknown[] };
    await store.putIfAbsent(part, encodeJson({ format: 1, kind: 'runs', runs: body.runs.slice(1) }));
    const err = await (await Graph.open(store, LONG)).branchHead('main').catch((e: unknown) => e);
    expect(isBranchgraphError(err, 'corrupt_object')).toBe(true);
    expect(String((err as Error).message)).toMatch(/holds/);
  });

  it('GC keeps the run-list parts retained manifests name, including ones this process published', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore(() => now);
    const g = await Graph.open(store, { clock: () => now, inlineRuns: 2 });
    await g.applySchema('main', 'node P { id: string @key\n v: int }');
    await oneRowWrites(g, 10);
    await g.createBranch('doomed', { branch: 'main' });
    for (let i = 0; i < 8; i++) await mustWrite(g, 'doomed', [{ op: 'upsert', table: 'P', values: { id: `d${i}`, v: i } }]);
    await oneRowWrites(g, 4, 10);
    await g.deleteBranch('doomed');
    now += 3 * 60 * 60 * 1000;
    // The writer's own manifests (cached, never read back) are what GC walks here.
    const report = await g.gc({ now });
    expect(report.deleted.parts).toBeGreaterThan(0);
    const cold = await Graph.open(store, LONG);
    expect(Object.keys(await rowsOf(cold, 'main', 'P'))).toHaveLength(14);
    // Every version of main still reads, from a cold process, with every run it names.
    const head = (await cold.branchHead('main')).manifest;
    for (let v = 1; v <= head.version; v++) {
      const m = await (await Graph.open(store, LONG)).ports.manifests.readManifest({ lineage: head.lineage, version: v });
      for (const r of m.tables.P?.runs ?? []) await expect(store.get(r.key)).resolves.toBeInstanceOf(Uint8Array);
    }
  });
});

describe('run-list parts across graphs', () => {
  it('a graph copied from another never names a run-list part only the other stored, though their runs are the same', async () => {
    const first = new MemoryStore();
    const a = await Graph.open(first);
    await a.applySchema('main', 'node P { id: string @key\n v: int }');
    for (let i = 0; i < 10; i++) await mustWrite(a, 'main', [{ op: 'upsert', table: 'P', values: { id: `k${i}`, v: i } }]);
    await a.createBranch('x', { branch: 'main' });
    for (let i = 0; i < 3; i++) await mustWrite(a, 'x', [{ op: 'upsert', table: 'P', values: { id: `x${i}`, v: i } }]);
    const second = await cloneMemoryStore(first);
    // The same merge in both graphs publishes the same run list, made only of runs both hold.
    await mergeOk(a, 'x');
    const b = await Graph.open(second);
    await mergeOk(b, 'x');
    const [ha, hb] = [(await a.branchHead('main')).manifest, (await b.branchHead('main')).manifest];
    expect(hb.tables.P?.runs.map((r) => r.key)).toEqual(ha.tables.P?.runs.map((r) => r.key));
    expect(Object.keys(await rowsOf(await Graph.open(second), 'main', 'P'))).toHaveLength(13);
  });
});
