/**
 * Corrupted or truncated stored objects surface as typed errors, never as
 * crashes or untyped exceptions, and never change other data.
 */
import { innermostStore } from '../src/store/store-wrapper.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { allRows } from '../src/graph/reads.js';
import { BranchgraphError } from '../src/model/errors.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll } from '../src/store/object-store.js';
import { mustWrite, peopleGraph, person, knows } from './support/fixtures.js';
import { storedText } from '../src/model/compress-stored.js';

async function readEverything(store: MemoryStore): Promise<void> {
  const g = await Graph.open(store);
  for (const b of (await g.listBranches()).branches) {
    const snap = await g.branchHead(b.record.name);
    for (const t of snap.schema.types) await allRows({ tables: g.ports.tables, snap, table: t.name });
  }
}

describe('corrupted stored objects', () => {
  it('every truncation or byte flip of any object reads back or fails with a typed error, never a crash', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a'), person('b'), knows('a', 'b')]);
    await g.createBranch('f', { branch: 'main' });
    const keys = (await listAll(store, '')).map((o) => o.key);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...keys),
        fc.nat(),
        fc.integer({ min: 0, max: 255 }),
        fc.boolean(),
        async (key, at, byte, truncate) => {
          const copy = new MemoryStore();
          for (const k of keys) await copy.putIfAbsent(k, await store.get(k));
          const original = await copy.get(key);
          let bad: Uint8Array;
          if (truncate) bad = original.slice(0, original.length === 0 ? 0 : at % original.length);
          else {
            bad = original.slice();
            if (bad.length > 0) bad[at % bad.length] = byte;
          }
          copy.corrupt(key, bad);
          try {
            // A corrupted object must never hang a read.
            let timer: NodeJS.Timeout | undefined;
            const hang = new Promise<never>((_, reject) => {
              timer = setTimeout(
                () =>
                  reject(
                    new Error(`reading after corrupting ${key} (${truncate ? 'truncated' : 'byte flip'} at ${at}) did not finish in 10 s`),
                  ),
                10_000,
              );
            });
            await Promise.race([readEverything(copy), hang]).finally(() => clearTimeout(timer));
          } catch (e) {
            if (String(e).includes('did not finish')) throw e;
            expect(e, `${key}: ${String(e)}`).toBeInstanceOf(BranchgraphError);
            expect(['corrupt_object', 'not_found', 'object_not_found']).toContain((e as BranchgraphError).code);
          }
          // Nothing else was touched.
          for (const k of keys) if (k !== key) expect(Buffer.from(await copy.get(k)).equals(Buffer.from(await store.get(k)))).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  }, 120_000);

  it('a corrupt manifest is corrupt_object over HTTP too (500, typed), not a crash', async () => {
    const { testServer } = await import('./support/test-server.js');
    const s = await testServer();
    await s.graph.applySchema('main', 'node P { id: string @key }');
    const key = (await listAll(s.store, 'manifests/')).map((o) => o.key).pop() as string;
    (innermostStore(s.store) as MemoryStore).corrupt(key, new TextEncoder().encode('{"format": 99}'));
    // The branch's head hint carries a copy of its head manifest; without it the object itself is read.
    await s.graph.idle();
    await s.store.deleteMany(['hints/branches/main.json']);
    s.graph.dropCaches();
    const res = await fetch(`${s.url}/tables/P/rows`);
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('corrupt_object');
    await s.close();
  });
});

describe('a damaged branch stays local', () => {
  it('regression: one corrupt branch record and a foreign file under branches/ leave listings and GC working; an admin can delete the branch and use the name again', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await g.createBranch('bad', { branch: 'main' });
    await g.createBranch('good', { branch: 'main' });
    await store.putOverwrite('branches/bad/00000001.json', new TextEncoder().encode('{"format":1,"name":"bad"'));
    await store.putIfAbsent('branches/%E0%A4%A/00000001.json', new TextEncoder().encode('{}'));
    const fresh = await Graph.open(store);
    const listed = await fresh.listBranches();
    expect(listed.branches.map((b) => b.record.name)).toEqual(['good', 'main']);
    expect(listed.damaged.map((d) => [d.name, d.key])).toEqual([['bad', 'branches/bad/00000001.json']]);
    const gc = await fresh.gc({ now: Date.now() + 3 * 3600_000 });
    expect(gc).toMatchObject({ dryRun: true, damagedBranches: ['bad'] });
    await fresh.deleteBranch('bad');
    expect((await fresh.listBranches()).damaged).toEqual([]);
    await fresh.createBranch('bad', { branch: 'main' });
    expect((await fresh.listBranches()).branches.map((b) => b.record.name)).toEqual(['bad', 'good', 'main']);
    expect((await fresh.gc()).damagedBranches).toEqual([]);
  });
});

describe('checksums on stored JSON', () => {
  it('regression: a manifest, branch record or commit index edited into other valid JSON is corrupt_object; objects written before checksums still read', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await mustWrite(g, 'main', [person('a')]);
    // The head's version may still be on its way to its own key: the newest manifest key is listed once it is there.
    await g.idle();
    const keys = (await listAll(store, '')).map((o) => o.key);
    const manifestKey = keys
      .filter((k) => k.startsWith('manifests/'))
      .sort()
      .at(-1) as string;
    for (const key of [
      manifestKey,
      keys.find((k) => k.startsWith('branches/')) as string,
      keys.find((k) => k.startsWith('commits/')) as string,
    ]) {
      const original = storedText(await store.get(key));
      const edited = original.includes('"version":')
        ? original.replace(/"version":(\d+)/, (_m, v: string) => `"version":${Number(v) + 0}0`)
        : original.replace('"actor":"test"', '"actor":"mallory"');
      expect(edited).not.toBe(original);
      expect(() => JSON.parse(edited)).not.toThrow();
      await store.putOverwrite(key, new TextEncoder().encode(edited));
      // The head hint's copy of the head manifest would answer instead of the edited object.
      await g.idle();
      await store.deleteMany(['hints/branches/main.json']);
      const fresh = await Graph.open(store).catch((e: unknown) => e);
      const reading = (gr: Graph) =>
        key.startsWith('commits/') ? gr.commitSnapshot(key.slice('commits/'.length, -'.json'.length)) : gr.branchHead('main');
      const read =
        fresh instanceof Graph
          ? await reading(fresh).then(
              () => `read ${key}`,
              (e: unknown) => e,
            )
          : fresh;
      expect(read).toMatchObject({ code: 'corrupt_object' });
      await store.putOverwrite(key, new TextEncoder().encode(original));
    }
    // The same manifest without its checksum, as written before checksums existed, reads as it is.
    const legacy = JSON.parse(storedText(await store.get(manifestKey))) as Record<string, unknown>;
    delete legacy.$checksum;
    await store.putOverwrite(manifestKey, new TextEncoder().encode(JSON.stringify(legacy)));
    expect(
      Object.keys(
        Object.fromEntries(
          (
            await allRows({
              tables: (await Graph.open(store)).ports.tables,
              snap: await (await Graph.open(store)).branchHead('main'),
              table: 'Person',
            })
          ).map((r) => [r.key, r]),
        ),
      ),
    ).toEqual(['a']);
  });
});
