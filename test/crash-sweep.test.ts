/**
 * Crash sweeps: for each operation, crash the process at every store call in
 * turn (with the crashing call's effect landing or not), restart from the
 * store, and check the state is exactly the state before or exactly the
 * state after, never in between; then retry the operation to success.
 */
import { describe, expect, it } from 'vitest';
import { Graph } from '../src/graph/graph.js';
import { mergeBranches, mergeSpec } from '../src/merge/merge.js';
import type { Manifest, ManifestRef } from '../src/graph/manifest.js';
import { MAX_PUBLICATION_MS } from '../src/graph/gc.js';
import { FaultStore } from '../src/store/fault-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll, type ObjectStore } from '../src/store/object-store.js';
import { mergeOk, mustWrite, PEOPLE_SCHEMA, person, rowsOf, seededStore } from './support/fixtures.js';
import { storedText } from '../src/model/compress-stored.js';
import { observe, sameContents, type Observed } from './support/observe.js';
import { cloneMemoryStore as clone } from './support/stores.js';
import { WaveStore } from './support/wave-store.js';
import { WalWriter } from '../src/wal/wal-writer.js';
import { catchUp } from '../src/wal/catch-up.js';

/** Manifests split into many parts even for these small graphs, so every sweep crosses part writes too. */
// Small parts and run lists of one run inline: every sweep also crashes around run-list parts.
const SMALL_PARTS = { partBytes: 96, inlineRuns: 1 };

type Op = (store: ObjectStore) => Promise<unknown>;

interface SweepReport {
  crashPoints: number;
  sawBefore: number;
  sawAfter: number;
}

/**
 * Run `op` on `inner` with the process crashing at store call `k`. It fails
 * with the crash, unless the crash struck best-effort work started after
 * the operation completed (a head hint), which does not fail it.
 */
async function crashAt(
  op: (store: ObjectStore) => Promise<unknown>,
  inner: MemoryStore,
  k: number,
  crashEffect: 'before' | 'after',
): Promise<void> {
  const outcome = await op(new FaultStore(inner, { crashAtCall: k, crashEffect })).then(
    () => 'completed',
    (e: unknown) => e,
  );
  if (outcome !== 'completed') expect(outcome).toMatchObject({ code: 'store_crashed' });
}

async function sweep(setup: () => Promise<MemoryStore>, op: Op, check?: (o: Observed) => void): Promise<SweepReport> {
  const initial = await setup();
  const before = await observe(initial);
  // A clean run: how many calls the operation makes, and the state after it.
  const cleanInner = await clone(initial);
  const counter = new FaultStore(cleanInner);
  await op(counter);
  const calls = counter.callCount;
  const after = await observe(cleanInner);
  expect(sameContents(before, after), 'the operation must change something').toBe(false);
  const report: SweepReport = { crashPoints: 0, sawBefore: 0, sawAfter: 0 };
  for (let k = 1; k <= calls; k++) {
    for (const crashEffect of ['before', 'after'] as const) {
      const inner = await clone(initial);
      await crashAt(op, inner, k, crashEffect);
      report.crashPoints++;
      // Restart: a new process on what the store holds.
      const seen = await observe(inner);
      const isBefore = sameContents(seen, before) && JSON.stringify(seen.heads) === JSON.stringify(before.heads);
      const isAfter = sameContents(seen, after);
      expect(isBefore || isAfter, `crash at call ${k} (${crashEffect}) left a state that is neither before nor after`).toBe(true);
      if (isBefore) {
        report.sawBefore++;
        // The operation can be retried to success.
        await op(inner);
        expect(sameContents(await observe(inner), after), `retry after crash at ${k}`).toBe(true);
      } else report.sawAfter++;
      check?.(seen);
    }
  }
  return report;
}

/**
 * For an operation that changes no row (catch-up, compaction): at every
 * crash point the rows read as before, and a retry succeeds with the rows
 * still as before; `retried` checks what else the retry must leave.
 */
async function sweepPreserving<R>(
  initial: MemoryStore,
  op: (store: ObjectStore) => Promise<R>,
  retried: (store: MemoryStore, result: R) => Promise<void>,
): Promise<{ points: number; clean: R }> {
  const before = await observe(initial);
  const counter = new FaultStore(await clone(initial));
  const clean = await op(counter);
  let points = 0;
  for (let k = 1; k <= counter.callCount; k++) {
    for (const crashEffect of ['before', 'after'] as const) {
      const inner = await clone(initial);
      await crashAt(op, inner, k, crashEffect);
      points++;
      // Restart: readers see exactly what they saw before the operation began.
      expect(sameContents(await observe(inner), before), `crash at call ${k} (${crashEffect})`).toBe(true);
      await retried(inner, await op(inner));
      expect(sameContents(await observe(inner), before), `retry after crash at ${k}`).toBe(true);
    }
  }
  return { points, clean };
}

/** How many versions each manifest object published at once (1 for a version alone, more for a batch's first). */
async function batchesIn(store: MemoryStore): Promise<number[]> {
  const keys = (await listAll(store, 'manifests/')).map((o) => o.key);
  return Promise.all(
    keys.map(async (key) => {
      const stored = JSON.parse(storedText(await store.get(key))) as { later?: unknown[] };
      return 1 + (stored.later?.length ?? 0);
    }),
  );
}

/**
 * `n` branches, each adding two people, to be merged into main at once by one process (`run`), and
 * the check of what a restarted process finds (`restart`): each merge landed whole or not at all,
 * every acknowledged one landed, main's versions form one chain, one event per landed merge in commit
 * order; then the merges not acknowledged are retried, and every branch is merged once.
 */
async function manyMerges(n: number) {
  let now = Date.parse('2026-12-01T00:00:00Z');
  const clock = () => now;
  const initial = new MemoryStore(clock);
  const setup = await Graph.open(initial, { clock, ...SMALL_PARTS });
  await setup.applySchema('main', PEOPLE_SCHEMA);
  await mustWrite(setup, 'main', [person('a')]);
  const sources = Array.from({ length: n }, (_, i) => `m${i + 1}`);
  for (const b of sources) {
    await setup.createBranch(b, { branch: 'main' });
    await mustWrite(setup, b, [person(`${b}-x`), person(`${b}-y`)]);
  }
  await mustWrite(setup, 'main', [person('b')]);
  const eventsBefore = (await setup.events({ after: 0, limit: 1000 })).events.length;
  /**
   * Every merge at once, each planned on the manifest the one before it built. The store answers in
   * round trips (waves), as a remote store would, and a manifest's publication last, once the others
   * have gone as far as they can: merges ready by then publish together in a batch.
   */
  const run = async (store: ObjectStore, failure: string): Promise<boolean[]> => {
    // Round trips need not be counted exactly here, only answered together: two quiet turns will do.
    const waves = new WaveStore(store, 2);
    const g = await Graph.open(waves, { clock, ...SMALL_PARTS }).catch((e: unknown) => {
      expect(e).toMatchObject({ code: failure });
      return undefined;
    });
    if (g === undefined) return sources.map(() => false);
    for (const b of ['main', ...sources]) await g.branchHead(b).catch(() => undefined);
    const { value: results } = await waves.waves(
      () => Promise.allSettled(sources.map((source) => mergeBranches(g.ports, mergeSpec({ source })))),
      { last: (c) => c.op === 'putIfAbsent' && c.key.startsWith('manifests/') },
    );
    await g.idle();
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: failure });
    return results.map((r) => r.status === 'fulfilled' && r.value.status === 'success');
  };
  const restart = async (inner: MemoryStore, acked: boolean[], at: string): Promise<number> => {
    // Restart once a publication's deadline has passed by the store's clock, so the feed decides every event.
    now += MAX_PUBLICATION_MS + 1000;
    const g = await Graph.open(inner, { clock, ...SMALL_PARTS });
    const rows = Object.keys(await rowsOf(g, 'main', 'Person'));
    const landed = sources.map((b) => {
      expect(rows.includes(`${b}-y`), `${at}: merge of ${b} landed in part`).toBe(rows.includes(`${b}-x`));
      return rows.includes(`${b}-x`);
    });
    landed.forEach((l, i) => {
      if (acked[i]) expect(l, `${at}: acknowledged merge of ${sources[i]} is missing`).toBe(true);
    });
    // main's versions form one chain: each names the version below it as its first parent.
    const merges: string[] = [];
    for (let m: Manifest | undefined = (await g.branchHead('main')).manifest; m !== undefined && m.commit.kind === 'merge'; ) {
      merges.push(m.commit.id);
      const parent: ManifestRef | undefined = m.commit.parents[0];
      expect(parent?.version, at).toBe(m.version - 1);
      m = parent === undefined ? undefined : await g.ports.manifests.readManifest(parent);
    }
    expect(merges, at).toHaveLength(landed.filter(Boolean).length);
    const events = (await g.events({ after: 0, limit: 1000 })).events.slice(eventsBefore).filter((e) => e.kind === 'commit');
    expect(
      events.map((e) => e.commit),
      `${at}: one event per landed merge, in commit order`,
    ).toEqual([...merges].reverse());
    // A restarted client retries what was not acknowledged; then every branch is merged once.
    for (const [i, source] of sources.entries()) if (!acked[i]) await mergeBranches(g.ports, mergeSpec({ source }));
    expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(
      ['a', 'b', ...sources.flatMap((b) => [`${b}-x`, `${b}-y`])].sort(),
    );
    now -= MAX_PUBLICATION_MS + 1000;
    return landed.filter(Boolean).length;
  };
  return { initial, clock, sources, run, restart };
}

async function mergeSetup(): Promise<MemoryStore> {
  const store = new MemoryStore();
  const g = await Graph.open(store, SMALL_PARTS);
  // `L` is an edge table, so the merge also maintains an index (incoming edges) through every crash point.
  await g.applySchema(
    'main',
    `${['A', 'B', 'C', 'D', 'E'].map((t) => `node ${t} { id: string @key\n a: int\n b: int }`).join('\n')}\nedge L: A -> B {}`,
  );
  for (const t of ['A', 'B', 'C', 'D', 'E'])
    await mustWrite(
      g,
      'main',
      [1, 2, 3].map((i) => ({ op: 'insert' as const, table: t, values: { id: `r${i}`, a: 0, b: 0 } })),
    );
  await mustWrite(g, 'main', [{ op: 'insert', table: 'L', values: { from: 'r1', to: 'r1' } }]);
  await g.createBranch('f', { branch: 'main' });
  await mustWrite(g, 'f', [{ op: 'insert', table: 'L', values: { from: 'r2', to: 'r3' } }]);
  await mustWrite(g, 'main', [{ op: 'delete', table: 'L', values: { from: 'r1', to: 'r1' } }]);
  for (const t of ['A', 'B', 'C', 'D', 'E']) {
    await mustWrite(g, 'f', [
      { op: 'update', table: t, values: { id: 'r1', a: 1 } },
      { op: 'update', table: t, values: { id: 'r3', a: 5 } },
    ]);
    await mustWrite(g, 'main', [
      { op: 'update', table: t, values: { id: 'r2', b: 2 } },
      { op: 'update', table: t, values: { id: 'r3', b: 6 } },
    ]);
  }
  return store;
}

describe('crash sweeps', () => {
  for (const width of [1, 4] as const) {
    it(`a merge of five tables and an edge table at width ${width}`, async () => {
      const r = await sweep(mergeSetup, async (store) => {
        const res = await mergeBranches((await Graph.open(store, SMALL_PARTS)).ports, mergeSpec({ source: 'f', width }));
        if (res.status !== 'success') throw new Error('expected a clean merge');
      });
      expect(r.crashPoints).toBeGreaterThan(20);
      expect(r.sawBefore).toBeGreaterThan(0);
      expect(r.sawAfter).toBeGreaterThan(0);
    }, 120_000);
  }

  it('a merge that writes its ancestry leaf as a delta over the leaf last written whole', async () => {
    // Parts of 256 bytes: a dozen merged lineages split the ancestry, and a delta holds up to two entries.
    const parts = { partBytes: 256 };
    const setup = async (): Promise<MemoryStore> => {
      const store = new MemoryStore();
      const g = await Graph.open(store, parts);
      await g.applySchema('main', PEOPLE_SCHEMA);
      for (let i = 0; i < 14; i++) {
        await g.createBranch(`b${i}`, { branch: 'main' });
        await mustWrite(g, `b${i}`, [person(`p${i}`)]);
        await mergeOk(g, `b${i}`, { deleteBranch: true });
      }
      await g.createBranch('last', { branch: 'main' });
      await mustWrite(g, 'last', [person('last')]);
      return store;
    };
    const deltas = async (store: MemoryStore): Promise<number> => {
      let n = 0;
      for (const o of await listAll(store, 'parts/')) if (/"kind":"ancestry".*"b":/.test(storedText(await store.get(o.key)))) n++;
      return n;
    };
    // Which leaf the merged lineage lands in is random (lineages are ULIDs), and a leaf whose delta is
    // full is written whole: take a graph where this merge writes a delta (nearly always the first).
    let initial: MemoryStore | undefined;
    for (let attempt = 0; attempt < 10 && initial === undefined; attempt++) {
      const candidate = await setup();
      const probe = await clone(candidate);
      const before = await deltas(probe);
      await mergeOk(await Graph.open(probe, parts), 'last');
      if ((await deltas(probe)) > before) initial = candidate;
    }
    expect(initial).toBeDefined();
    const r = await sweep(
      async () => initial as MemoryStore,
      async (store) => {
        const res = await mergeBranches((await Graph.open(store, parts)).ports, mergeSpec({ source: 'last' }));
        if (res.status !== 'success') throw new Error('expected a clean merge');
      },
    );
    expect(r.crashPoints).toBeGreaterThan(10);
    expect(r.sawBefore).toBeGreaterThan(0);
    expect(r.sawAfter).toBeGreaterThan(0);
  }, 60_000);

  it('a write batch', async () => {
    const setup = () => seededStore(PEOPLE_SCHEMA, [person('a'), person('b')]);
    const r = await sweep(setup, async (store) => {
      await (await Graph.open(store, SMALL_PARTS)).write('main', [
        person('c'),
        { op: 'delete', table: 'Person', values: { id: 'a' } },
        { op: 'insert', table: 'Knows', values: { from: 'b', to: 'c' } },
      ]);
    });
    expect(r.crashPoints).toBeGreaterThan(5);
  }, 60_000);

  it('a write of more rows than a segment holds, its run stored aside as segments and an index at once: before or after', async () => {
    const setup = () => seededStore(PEOPLE_SCHEMA, [person('a')]);
    const batch = Array.from({ length: 1100 }, (_, i) => person(`p${String(i).padStart(4, '0')}`));
    const r = await sweep(setup, async (store) => {
      await (await Graph.open(store, SMALL_PARTS)).write('main', batch);
    });
    expect(r.sawBefore).toBeGreaterThan(0);
    expect(r.sawAfter).toBeGreaterThan(0);
    // The clean run's table holds a run of two segments.
    const after = await setup();
    await (await Graph.open(after, SMALL_PARTS)).write('main', batch);
    const runs = (await (await Graph.open(after)).branchHead('main')).manifest.tables.Person?.runs ?? [];
    expect(runs.some((x) => x.segmented === true)).toBe(true);
  }, 120_000);

  for (const format of ['csv', 'ndjson'] as const)
    it(`a bulk load of ${format} streamed in chunks, its table and @unique index written as segmented runs: before or after`, async () => {
      const setup = () => seededStore(PEOPLE_SCHEMA, [{ op: 'insert', table: 'Company', values: { id: 'acme', name: 'Acme' } }]);
      const ids = Array.from({ length: 1100 }, (_, i) => `p${String((i * 7) % 1100).padStart(4, '0')}`);
      const text =
        format === 'csv'
          ? ['id,name,email', ...ids.map((id) => `${id},${id.toUpperCase()},${id}@x`)].join('\n')
          : ids
              .map((id) => JSON.stringify({ op: 'insert', table: 'Person', values: { id, name: id.toUpperCase(), email: `${id}@x` } }))
              .join('\n');
      // The body streams, as a file or a request does, so the load takes the bulk path in chunks.
      async function* body(): AsyncGenerator<Uint8Array> {
        for (let at = 0; at < text.length; at += 4096) yield Buffer.from(text.slice(at, at + 4096));
      }
      const source = format === 'csv' ? { format, body: body(), table: 'Person', op: 'insert' as const } : { format, body: body() };
      const r = await sweep(setup, async (store) => {
        await (await Graph.open(store, SMALL_PARTS)).load('main', { ...source, body: body() }, { chunkRows: 400 });
      });
      expect(r.sawBefore).toBeGreaterThan(0);
      expect(r.sawAfter).toBeGreaterThan(0);
      // The clean load wrote its table as a segmented run: the sweep crossed segment and index writes.
      const after = await setup();
      await (await Graph.open(after, SMALL_PARTS)).load('main', source, { chunkRows: 400 });
      const runs = (await (await Graph.open(after)).branchHead('main')).manifest.tables.Person?.runs ?? [];
      expect(runs.some((x) => x.segmented === true)).toBe(true);
    }, 120_000);

  it("a write that folds the table's piled-up newest runs inline: before or after, indexes true, the fold retried", async () => {
    const setup = async () => {
      const store = await seededStore(PEOPLE_SCHEMA, [person('a', { email: 'a@x' })]);
      // Runs pile up as they do when no compaction keeps up: one per write, a delete among them.
      const seed = await Graph.open(store, { ...SMALL_PARTS, inlineCompaction: false });
      for (const id of ['b', 'c', 'd', 'e', 'f', 'g']) await mustWrite(seed, 'main', [person(id, { email: `${id}@x` })]);
      await mustWrite(seed, 'main', [{ op: 'delete', table: 'Person', values: { id: 'c' } }]);
      return store;
    };
    const runsOf = async (store: ObjectStore) => (await (await Graph.open(store)).branchHead('main')).manifest.tables.Person?.runs ?? [];
    const piled = (await runsOf(await setup())).length;
    const r = await sweep(
      setup,
      async (store) => {
        await (await Graph.open(store, SMALL_PARTS)).write('main', [person('h', { email: 'h@x' })]);
      },
      (seen) => {
        // Before: a, b, d-g; after: h too. The deleted c never comes back through the fold.
        const ids = Object.values(seen.contents.main?.Person ?? {}).map((p) => (p as { id: string }).id);
        expect(ids.filter((id) => id !== 'h').sort()).toEqual(['a', 'b', 'd', 'e', 'f', 'g']);
      },
    );
    expect(r.sawBefore).toBeGreaterThan(0);
    expect(r.sawAfter).toBeGreaterThan(0);
    // The clean run folded: fewer runs than the pile plus the write's own.
    const after = await setup();
    await (await Graph.open(after, SMALL_PARTS)).write('main', [person('h', { email: 'h@x' })]);
    const runs = await runsOf(after);
    expect(runs.length).toBeLessThan(piled);
    expect(runs.some((x) => x.compacted === true)).toBe(true);
    // The @unique index still answers for a folded row: a clash with it is refused.
    const clash = await (await Graph.open(after)).write('main', [person('z', { email: 'd@x' })]).catch((e: unknown) => e);
    expect(clash).toMatchObject({ code: 'constraint_violation' });
  }, 60_000);

  it('a group commit of three concurrent writes: each lands whole, in arrival order, and every acknowledged one survives', async () => {
    const initial = await seededStore(PEOPLE_SCHEMA, [person('a')]);
    const writes = ['w1', 'w2', 'w3'].map((w) => [person(`${w}-x`), person(`${w}-y`)]);
    const run = async (store: ObjectStore): Promise<boolean[]> => {
      // Opening may be where the process crashes: then nothing was written, nothing acknowledged.
      const g = await Graph.open(store, SMALL_PARTS).catch((e: unknown) => {
        expect(e).toMatchObject({ code: 'store_crashed' });
        return undefined;
      });
      if (g === undefined) return writes.map(() => false);
      const results = await Promise.allSettled(writes.map((ops) => g.write('main', ops)));
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'store_crashed' });
      return results.map((r) => r.status === 'fulfilled');
    };
    const counter = new FaultStore(await clone(initial));
    expect(await run(counter)).toEqual([true, true, true]);
    let points = 0;
    const seenLanded = new Set<number>();
    for (let k = 1; k <= counter.callCount; k++) {
      for (const crashEffect of ['before', 'after'] as const) {
        const inner = await clone(initial);
        const acked = await run(new FaultStore(inner, { crashAtCall: k, crashEffect }));
        points++;
        const rows = Object.keys(await rowsOf(await Graph.open(inner, SMALL_PARTS), 'main', 'Person'));
        const landed = writes.map((_, i) => {
          const x = rows.includes(`w${i + 1}-x`);
          expect(rows.includes(`w${i + 1}-y`), `crash at ${k} (${crashEffect}): write ${i + 1} landed in part`).toBe(x);
          return x;
        });
        landed.forEach((l, i) => {
          if (acked[i]) expect(l, `crash at ${k} (${crashEffect}): acknowledged write ${i + 1} is missing`).toBe(true);
          if (l && i > 0) expect(landed[i - 1], `crash at ${k} (${crashEffect}): write ${i + 1} landed before write ${i}`).toBe(true);
        });
        seenLanded.add(landed.filter(Boolean).length);
        // A restarted client retries what was not acknowledged; then everything is there once.
        const g = await Graph.open(inner, SMALL_PARTS);
        for (const [i, ops] of writes.entries())
          if (!acked[i])
            await g.write(
              'main',
              ops.map((o) => ({ ...o, op: 'upsert' as const })),
            );
        expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(
          ['a', ...writes.flatMap((_, i) => [`w${i + 1}-x`, `w${i + 1}-y`])].sort(),
        );
      }
    }
    expect(points).toBeGreaterThan(5);
    // Crashes struck before anything landed, between the groups, and after all of them.
    expect([...seenLanded].sort()).toEqual([0, 1, 3]);
  }, 60_000);

  // Six: the first publishes alone and the others land in batches, so the sweep crosses single
  // versions and batches both.
  it.each([6])(
    '%i concurrent merges into one branch: each lands whole, the lineage stays a chain, one event per landed merge',
    async (n) => {
      const t = await manyMerges(n);
      const cleanInner = await clone(t.initial, t.clock);
      const counter = new FaultStore(cleanInner);
      expect(await t.run(counter, 'store_crashed')).toEqual(t.sources.map(() => true));
      // Merges ready while the one below them lands are published in one batch (format 4): the sweep crosses it.
      expect(Math.max(0, ...(await batchesIn(cleanInner))), 'the clean run published a batch').toBeGreaterThan(1);
      const seenLanded = new Set<number>();
      // Crash points after a batch landed and before its later versions were at their own keys.
      let unwritten = 0;
      let points = 0;
      for (let k = 1; k <= counter.callCount; k++) {
        for (const crashEffect of ['before', 'after'] as const) {
          const inner = await clone(t.initial, t.clock);
          const acked = await t.run(new FaultStore(inner, { crashAtCall: k, crashEffect }), 'store_crashed');
          points++;
          if ((await batchesIn(inner)).reduce((a, b) => a + b, 0) > (await listAll(inner, 'manifests/')).length) unwritten++;
          seenLanded.add(await t.restart(inner, acked, `crash at ${k} (${crashEffect})`));
        }
      }
      expect(points).toBeGreaterThan(20);
      // Crashes struck before anything landed, between the merges, and after all of them.
      expect(seenLanded.has(0) && seenLanded.has(n) && [...seenLanded].some((l) => l > 0 && l < n)).toBe(true);
      expect(unwritten, 'crashes before a batch was written out version by version').toBeGreaterThan(0);
    },
    240_000,
  );

  it('6 concurrent merges into one branch under transient failures and lost responses, over 40 seeds: the same holds', async () => {
    const t = await manyMerges(6);
    let batched = 0;
    let failed = 0;
    for (let seed = 1; seed <= 40; seed++) {
      const inner = await clone(t.initial, t.clock);
      const acked = await t.run(new FaultStore(inner, { seed, transientRate: 0.04, lostResponseRate: 0.08 }), 'store_unavailable');
      failed += acked.filter((a) => !a).length;
      if (Math.max(0, ...(await batchesIn(inner))) > 1) batched++;
      await t.restart(inner, acked, `seed ${seed}`);
    }
    // Faults struck publications, and batches were published through them.
    expect(failed).toBeGreaterThan(0);
    expect(batched).toBeGreaterThan(6);
  }, 240_000);

  it('a compaction: every crash point leaves the rows as they were, and a retry compacts', async () => {
    const initial = await seededStore(PEOPLE_SCHEMA, [person('a')]);
    const seed = await Graph.open(initial, SMALL_PARTS);
    for (const id of ['b', 'c', 'd', 'e']) await mustWrite(seed, 'main', [person(id)]);
    await mustWrite(seed, 'main', [{ op: 'delete', table: 'Person', values: { id: 'b' } }]);
    const compact = async (store: ObjectStore) => (await Graph.open(store, SMALL_PARTS)).compact('main', { mode: 'full' });
    const runsOf = async (store: ObjectStore) =>
      (await (await Graph.open(store, SMALL_PARTS)).branchHead('main')).manifest.tables.Person?.runs.length;
    const { points, clean } = await sweepPreserving(initial, compact, async (inner) => {
      // Wherever it stopped, a retry leaves one run.
      expect(await runsOf(inner)).toBe(1);
    });
    expect(clean.status).toBe('published');
    expect(points).toBeGreaterThan(4);
  }, 60_000);

  it('a compaction taking its turn among two concurrent writes: no row lost or doubled, every acknowledged write survives', async () => {
    const initial = await seededStore(PEOPLE_SCHEMA, [person('a')]);
    const seed = await Graph.open(initial, SMALL_PARTS);
    for (const id of ['b', 'c']) await mustWrite(seed, 'main', [person(id)]);
    const writes = ['w1', 'w2'].map((w) => [person(`${w}-x`), person(`${w}-y`)]);
    const run = async (store: ObjectStore): Promise<boolean[]> => {
      const g = await Graph.open(store, SMALL_PARTS).catch((e: unknown) => {
        expect(e).toMatchObject({ code: 'store_crashed' });
        return undefined;
      });
      if (g === undefined) return writes.map(() => false);
      const results = await Promise.allSettled([...writes.map((ops) => g.write('main', ops)), g.compact('main', { mode: 'full' })]);
      for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ code: 'store_crashed' });
      return results.slice(0, writes.length).map((r) => r.status === 'fulfilled');
    };
    // A compaction re-lays a commit and adds none: counted by the versions of main that re-lay one.
    const compactions = async (g: Graph): Promise<number> => {
      let n = 0;
      const head = (await g.branchHead('main')).manifest;
      for (let c = head.commit; c.parentIds.length > 0; ) {
        expect(c.kind).not.toBe('compact');
        c = (await g.commitSnapshot(c.parentIds[0] as string)).manifest.commit;
      }
      for (let v = head.version; v >= 1; v--) {
        if ((await g.ports.manifests.readManifest({ lineage: head.lineage, version: v })).layout !== undefined) n++;
      }
      return n;
    };
    const counter = new FaultStore(await clone(initial));
    expect(await run(counter)).toEqual([true, true]);
    expect(await compactions(await Graph.open(counter, SMALL_PARTS))).toBe(1);
    const seen = new Set<string>();
    for (let k = 1; k <= counter.callCount; k++) {
      for (const crashEffect of ['before', 'after'] as const) {
        const inner = await clone(initial);
        const acked = await run(new FaultStore(inner, { crashAtCall: k, crashEffect }));
        const g = await Graph.open(inner, SMALL_PARTS);
        const rows = Object.keys(await rowsOf(g, 'main', 'Person'));
        const where = `crash at ${k} (${crashEffect})`;
        // What was there before is there still: a compaction that landed (or did not) changed no row.
        expect(rows.filter((r) => r.length === 1).sort(), where).toEqual(['a', 'b', 'c']);
        const landed = writes.map((_, i) => {
          const x = rows.includes(`w${i + 1}-x`);
          expect(rows.includes(`w${i + 1}-y`), `${where}: write ${i + 1} landed in part`).toBe(x);
          if (acked[i]) expect(x, `${where}: acknowledged write ${i + 1} is missing`).toBe(true);
          return x;
        });
        seen.add(`${landed.filter(Boolean).length}/${await compactions(g)}`);
        // A restarted client retries what was not acknowledged; then everything is there once.
        for (const [i, ops] of writes.entries())
          if (!acked[i])
            await g.write(
              'main',
              ops.map((o) => ({ ...o, op: 'upsert' as const })),
            );
        expect(Object.keys(await rowsOf(g, 'main', 'Person')).sort()).toEqual(['a', 'b', 'c', 'w1-x', 'w1-y', 'w2-x', 'w2-y']);
      }
    }
    // Crashes struck with no write landed and with both, with and without the compaction.
    for (const state of ['0/0', '2/1'])
      expect(seen.has(state), `no crash point left ${state} (writes/compactions): ${[...seen]}`).toBe(true);
  }, 60_000);

  it('a schema apply with a migration that rewrites a table', async () => {
    const setup = () =>
      seededStore('node P { id: string @key\n name: string }', [{ op: 'insert', table: 'P', values: { id: 'a', name: 'A' } }]);
    await sweep(setup, async (store) => {
      await (await Graph.open(store, SMALL_PARTS)).applySchema('main', 'node P { id: string @key\n name: string\n level: int }', {
        migration: { defaults: { 'P.level': 1 } },
      });
    });
  }, 60_000);

  it('WAL ingest of one generation: a crash leaves it either absent or whole', async () => {
    const setup = async () => {
      const store = await seededStore(PEOPLE_SCHEMA, [person('a')]);
      await new WalWriter((await Graph.open(store, SMALL_PARTS)).ports, { shard: 's1' }).ingest('main', [person('w0')]);
      return store;
    };
    const r = await sweep(setup, async (store) => {
      await new WalWriter((await Graph.open(store, SMALL_PARTS)).ports, { shard: 's1' }).ingest('main', [
        person('w1'),
        person('w2'),
        { op: 'upsert', table: 'Person', values: { id: 'a', name: 'new' } },
      ]);
    });
    expect(r.crashPoints).toBeGreaterThan(5);
    console.log(`ingest: ${r.crashPoints} crash points`);
  }, 60_000);

  for (const pipeline of [true, false]) {
    it(`a catch-up of three shards in several batches (${pipeline ? 'pipelined' : 'serial'}): every acknowledged row stays, exactly once, newest value`, async () => {
      const setup = async () => {
        const store = await seededStore(PEOPLE_SCHEMA, [person('a')]);
        const g = await Graph.open(store, SMALL_PARTS);
        let t = 1_000;
        const writers = ['s1', 's2', 's3'].map((shard) => new WalWriter(g.ports, { shard, now: () => t }));
        for (let i = 0; i < 9; i++) {
          t += 1;
          // Overlapping keys across shards: the newest stamp must win before and after folding.
          await (writers[i % 3] as WalWriter).ingest('main', [
            { op: 'upsert', table: 'Person', values: { id: `k${i % 4}`, name: `v${i}` } },
            person(`u${i}`),
          ]);
        }
        return store;
      };
      const initial = await setup();
      const run = async (store: ObjectStore) =>
        catchUp((await Graph.open(store, SMALL_PARTS)).ports, 'main', { maxGenerations: 3, pipeline });
      const { points, clean } = await sweepPreserving(initial, run, async (inner, retried) => {
        expect(retried.pendingAfter).toBe(0);
        expect((await listAll(inner, 'wal/')).length).toBe(0);
      });
      expect(clean.batches).toBeGreaterThan(1);
      expect(points).toBeGreaterThan(20);
      console.log(`catch-up (${pipeline ? 'pipelined' : 'serial'}): ${points} crash points, ${clean.batches} batches`);
    }, 120_000);
  }

  it('garbage collection never loses reachable data', async () => {
    const setup = async () => {
      const store = await seededStore(PEOPLE_SCHEMA, [person('a')]);
      const g = await Graph.open(store, SMALL_PARTS);
      await g.createBranch('tmp', { branch: 'main' });
      await mustWrite(g, 'tmp', [person('t')]);
      await g.deleteBranch('tmp');
      return store;
    };
    const later = Date.now() + 3 * 60 * 60 * 1000;
    // GC changes no observable content, so compare contents stay equal at every crash point.
    const initial = await setup();
    const before = await observe(initial);
    const gc = async (store: ObjectStore) => (await Graph.open(store, SMALL_PARTS)).gc({ now: later });
    const counter = new FaultStore(await clone(initial));
    const report = await gc(counter);
    expect(report.deleted.runs).toBeGreaterThan(0);
    for (let k = 1; k <= counter.callCount; k++) {
      for (const crashEffect of ['before', 'after'] as const) {
        const inner = await clone(initial);
        await expect(gc(new FaultStore(inner, { crashAtCall: k, crashEffect }))).rejects.toMatchObject({ code: 'store_crashed' });
        expect(await observe(inner)).toEqual(before);
        await gc(inner);
        expect(await observe(inner)).toEqual(before);
      }
    }
  }, 60_000);
});
