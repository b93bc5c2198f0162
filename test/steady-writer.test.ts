/**
 * Work that must wait its turn waits, under a steady writer. Branches and
 * tags created from a branch whose rows are being ingested fold what is
 * pending when they publish instead of giving up; a merge request into a
 * target that keeps moving re-plans, re-checks and lands, as a plain merge
 * does. The writer stops by itself once the work under test is done.
 */
import { describe, expect, it } from 'vitest';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { DEFAULT_CATCHUP_SETTINGS } from '../src/wal/catch-up-manager.js';
import { LatencyStore } from '../src/store/latency-store.js';

const SCHEMA = 'node P { id: string @key\n v: int? }';
const row = (id: string, v: number) => ({ op: 'upsert' as const, table: 'P', values: { id, v } });

/** Runs `step` over and over until `work` settles; resolves to how many steps ran. */
async function whileWriting(step: (i: number) => Promise<unknown>, work: () => Promise<void>): Promise<number> {
  let done = false;
  let steps = 0;
  // Each step after a turn of the event loop, as a writer over a network would come: one that never
  // yields would starve every timer of the process (a backoff, a deadline), the engine's included.
  const writer = (async () => {
    while (!done) {
      await new Promise((r) => setImmediate(r));
      await step(steps++);
    }
  })();
  try {
    await work();
  } finally {
    done = true;
    await writer;
  }
  return steps;
}

/** Two servers on one store one millisecond away per call, so their calls interleave as over a network. */
async function open(): Promise<{ api: BranchgraphApi; other: BranchgraphApi; close: () => Promise<void> }> {
  const store = new LatencyStore(new MemoryStore(), 1);
  const one = await serviceOnStore(store, { actor: 'me', shard: 'one' });
  // The ingesting server folds after every second generation: its head moves under the other's folds.
  const catchUp = { ...DEFAULT_CATCHUP_SETTINGS, triggerGenerations: 2 };
  const two = await serviceOnStore(store, { actor: 'me', shard: 'two', catchUp });
  const api = embeddedApi(one, { transport: 'embedded', actor: 'me' });
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  const close = async () => {
    await one.close();
    await two.close();
  };
  return { api, other: embeddedApi(two, { transport: 'embedded', actor: 'me' }), close };
}

describe('work that must wait its turn, under a steady writer', () => {
  it('regression: branches and tags created from a branch being ingested into all land, each holding what it folded', async () => {
    const { api, other, close } = await open();
    const outcomes: string[] = [];
    // The other server ingests; this one creates.
    const writes = await whileWriting(
      (i) => other.ingest({ branch: 'main', ops: [row(`w${i}`, i)] }),
      async () => {
        for (let i = 0; i < 10; i++) {
          for (const make of [() => api.createBranch({ name: `b${i}` }), () => api.createTag({ name: `t${i}`, from: { branch: 'main' } })])
            outcomes.push(
              await make().then(
                () => 'ok',
                (e: { code: string }) => e.code,
              ),
            );
        }
      },
    );
    expect(writes).toBeGreaterThan(0);
    expect(outcomes.filter((o) => o !== 'ok')).toEqual([]);
    // A branch starts from a commit: its rows are those the fold published, nothing pending of main's.
    const b9 = (await api.queryRows({ table: 'P', at: 'b9', first: 1000 })).items.length;
    console.log(`creations under a steady ingest: ${outcomes.length} with ${writes} ingests alongside`);
    expect(b9).toBeGreaterThan(0);
    expect((await api.queryRows({ table: 'P', at: 'tag:t9', first: 1000 })).items.length).toBeGreaterThanOrEqual(b9);
    await close();
  });

  it('regression: merge requests into a target that keeps moving all merge', async () => {
    const { api, close } = await open();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      await api.createBranch({ name: `f${i}` });
      await api.write({ branch: `f${i}`, ops: [row(`f${i}`, i)] });
      ids.push((await api.openMergeRequest({ source: `f${i}`, title: `f${i}` })).id);
    }
    const outcomes: string[] = [];
    const writes = await whileWriting(
      (i) => api.write({ branch: 'main', ops: [row(`m${i}`, i)] }),
      async () => {
        for (const id of ids)
          outcomes.push(
            await api.mergeMergeRequest({ id }).then(
              (r) => r.request.state,
              (e: { code: string }) => e.code,
            ),
          );
      },
    );
    console.log(`request merges into a moving target: ${outcomes.length} with ${writes} writes alongside`);
    expect(writes).toBeGreaterThan(0);
    expect(outcomes).toEqual(['merged', 'merged', 'merged', 'merged', 'merged']);
    for (let i = 0; i < 5; i++) expect((await api.getRow({ table: 'P', key: `f${i}` })).row).toMatchObject({ v: i });
    await close();
  });
});
