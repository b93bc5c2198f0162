/**
 * Catch-up under load: several shards ingest continuously, with keys they
 * share and keys of their own, while catch-up and merges run on the same
 * branch. What users rely on: every acknowledged row is present once, each
 * shard's own keys hold its last acknowledged value, folding never changes
 * what readers see, and nothing stays pending or behind in the store.
 */
import { describe, expect, it } from 'vitest';
import type { Graph } from '../src/graph/graph.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll } from '../src/store/object-store.js';
import { catchUp, type CatchUpReport } from '../src/wal/catch-up.js';
import { WalWriter } from '../src/wal/wal-writer.js';
import { mergeOk, peopleGraph, rowsOf } from './support/fixtures.js';
import type { WriteOp } from '../src/graph/write-batch.js';

const upsert = (id: string, name: string): WriteOp => ({ op: 'upsert', table: 'Person', values: { id, name } });

async function ingestLoad(g: Graph, branch: string, shards: string[], rounds: number): Promise<Map<string, string>> {
  const last = new Map<string, string>();
  await Promise.all(
    shards.map(async (shard) => {
      const w = new WalWriter(g.ports, { shard, maxGenerationRows: 3 });
      for (let i = 0; i < rounds; i++) {
        const own = `${shard}-own-${i % 5}`;
        const value = `${shard}:${i}`;
        await w.ingest(branch, [upsert(own, value), upsert(`shared-${i % 3}`, value), upsert(`${shard}-new-${i}`, value)]);
        last.set(own, value);
        last.set(`${shard}-new-${i}`, value);
        await new Promise((r) => setImmediate(r));
      }
    }),
  );
  return last;
}

describe('catch-up with continuous ingestion', () => {
  // Budgets: below one generation (every batch alone), about one batch, and ample.
  for (const budgetBytes of [1, 4_000, 64 * 1024 * 1024]) {
    it(`three shards with overlapping keys, budget ${budgetBytes} bytes`, async () => {
      const store = new MemoryStore();
      const g = await peopleGraph(store);
      let ingesting = true;
      const reports: CatchUpReport[] = [];
      const catching = (async () => {
        while (ingesting) {
          reports.push(await catchUp(g.ports, 'main', { maxGenerations: 4, budgetBytes }));
          await new Promise((r) => setTimeout(r, 2));
        }
      })();
      const last = await ingestLoad(g, 'main', ['s1', 's2', 's3'], 24);
      ingesting = false;
      await catching;
      const beforeFinal = await rowsOf(g, 'main', 'Person');
      const final = await catchUp(g.ports, 'main', { budgetBytes });
      expect(final.pendingAfter).toBe(0);
      g.dropCaches();
      const rows = await rowsOf(g, 'main', 'Person');
      expect(rows).toEqual(beforeFinal);
      for (const [key, value] of last) expect(rows[key]?.name, key).toBe(value);
      // Shared keys hold a value some shard wrote last for that key's round.
      for (let k = 0; k < 3; k++) expect(rows[`shared-${k}`]?.name).toMatch(/^s[123]:\d+$/);
      expect(Object.keys(rows)).toHaveLength(3 * 5 + 3 * 24 + 3);
      expect(await listAll(store, 'wal/')).toEqual([]);
      expect(reports.reduce((n, r) => n + r.generations, 0) + final.generations).toBeGreaterThan(0);
      if (budgetBytes === 1) expect(reports.every((r) => r.maxAlive <= 2)).toBe(true);
    }, 60_000);
  }

  it('catch-up interleaved with merges of the same branch in both directions', async () => {
    const store = new MemoryStore();
    const g = await peopleGraph(store);
    await g.createBranch('feature', { branch: 'main' });
    let ingesting = true;
    const background = (async () => {
      let n = 0;
      while (ingesting) {
        await catchUp(g.ports, 'feature', { maxGenerations: 2 });
        if (n++ % 2 === 0) await mergeOk(g, 'feature');
        else await g.write('main', [upsert(`main-${n}`, 'm')]).then(() => mergeOk(g, 'main', { into: 'feature' }));
        // The memory store answers in microtasks; give the writers' turns a chance to run.
        await new Promise((r) => setTimeout(r, 2));
      }
    })();
    const last = await ingestLoad(g, 'feature', ['f1', 'f2'], 16);
    ingesting = false;
    await background;
    await catchUp(g.ports, 'feature');
    await mergeOk(g, 'feature');
    const feature = await rowsOf(g, 'feature', 'Person');
    const main = await rowsOf(g, 'main', 'Person');
    for (const [key, value] of last) {
      expect(feature[key]?.name, key).toBe(value);
      expect(main[key]?.name, key).toBe(value);
    }
    expect(await listAll(store, 'wal/')).toEqual([]);
  }, 60_000);
});
