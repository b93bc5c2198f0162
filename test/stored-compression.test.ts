/**
 * Stored objects are compressed (model/compress-stored.ts): a graph written
 * before that, all plain JSON, keeps reading, keeps taking writes and
 * merges, and a store that holds both kinds reads as one graph.
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { allRows } from '../src/graph/reads.js';
import { decompressStored, isCompressed } from '../src/model/compress-stored.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll, type CallOptions } from '../src/store/object-store.js';
import { StoreWrapper, type CallContext } from '../src/store/store-wrapper.js';
import { knows, mergeOk, mustWrite, peopleGraph, person, rowsOf } from './support/fixtures.js';

/**
 * Writes every object as a release before compression did: plain text. Runs
 * stay as written, since their checksums in the manifest cover the stored
 * bytes (plain compact runs are read in table/run.test.ts).
 */
class PlainWriter extends StoreWrapper {
  protected around<T>(_ctx: CallContext, call: () => Promise<T>): Promise<T> {
    return call();
  }
  override putIfAbsent(key: string, body: Uint8Array, opts?: CallOptions): Promise<void> {
    return super.putIfAbsent(key, key.startsWith('runs/') ? body : decompressStored(body, key), opts);
  }
  override putOverwrite(key: string, body: Uint8Array, opts?: CallOptions): Promise<void> {
    return super.putOverwrite(key, key.startsWith('runs/') ? body : decompressStored(body, key), opts);
  }
}

async function kinds(store: MemoryStore): Promise<{ plain: number; compressed: number }> {
  let plain = 0;
  let compressed = 0;
  for (const o of await listAll(store, '')) {
    if (o.key.startsWith('runs/')) continue;
    if (isCompressed(await store.get(o.key))) compressed++;
    else plain++;
  }
  return { plain, compressed };
}

describe('compressed stored objects beside plain ones', () => {
  it('a graph written plain reads, writes, merges and collects garbage with compression on, and the mixed store reads as one graph', async () => {
    let now = Date.UTC(2026, 0, 1);
    const store = new MemoryStore(() => now);
    const old = await peopleGraph(new PlainWriter(store));
    await mustWrite(old, 'main', [person('a'), person('b'), knows('a', 'b')]);
    await old.createBranch('feature', { branch: 'main' });
    await mustWrite(old, 'feature', [person('c')]);
    await mustWrite(old, 'main', [{ ...person('a', { age: 41 }), op: 'upsert' }]);
    await mergeOk(old, 'feature');
    await old.compact('main', { mode: 'full' });
    await old.createTag('v1', { branch: 'main' });
    const oldHead = (await old.branchHead('main')).manifest.commit.id;
    const oldEvents = (await old.events({ after: 0, limit: 1000 })).events;
    expect(await kinds(store)).toMatchObject({ compressed: 0 });

    const g = await Graph.open(store, { clock: () => now });
    expect(Object.keys(await rowsOf(g, 'main', 'Person'))).toEqual(['a', 'b', 'c']);
    expect((await rowsOf(g, 'main', 'Person')).a).toMatchObject({ age: 41 });
    expect((await g.tag('v1')).commit).toBe(oldHead);
    expect((await g.commitSnapshot(oldHead)).manifest.commit.id).toBe(oldHead);
    // As after a crash between publishing and confirming: each event is decided by reading its
    // source, and every plain source must still match the hash its event recorded.
    const confirmed = (await listAll(store, 'events/')).map((o) => o.key).filter((k) => k.endsWith('.ok'));
    expect(confirmed.length).toBe(oldEvents.length);
    await store.deleteMany(confirmed);
    expect((await g.events({ after: 0, limit: 1000 })).events).toEqual(oldEvents);

    await g.createBranch('next', { branch: 'main' });
    await mustWrite(g, 'next', [person('d'), knows('d', 'a')]);
    await mustWrite(g, 'main', [{ ...person('b', { age: 7 }), op: 'upsert' }]);
    await mergeOk(g, 'next', { deleteBranch: true });
    await g.createTag('v2', { branch: 'main' });
    const mixed = await kinds(store);
    expect(mixed.plain).toBeGreaterThan(0);
    expect(mixed.compressed).toBeGreaterThan(0);

    now += 3 * 60 * 60 * 1000;
    await g.gc({ now });
    const cold = await Graph.open(store);
    expect(await rowsOf(cold, 'main', 'Person')).toEqual(await rowsOf(g, 'main', 'Person'));
    expect(Object.keys(await rowsOf(cold, 'main', 'Person'))).toEqual(['a', 'b', 'c', 'd']);
    expect(Object.keys(await rowsOf(cold, 'main', 'Knows'))).toHaveLength(2);
    const v1 = await allRows({ tables: cold.ports.tables, snap: await cold.resolve({ tag: 'v1' }), table: 'Person' });
    expect(v1.map((r) => r.key)).toEqual(['a', 'b', 'c']);
    const events = (await cold.events({ after: 0, limit: 1000 })).events;
    expect(events.slice(0, oldEvents.length)).toEqual(oldEvents);
    expect(events.length).toBeGreaterThan(oldEvents.length);
  });
});
