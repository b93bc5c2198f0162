/**
 * The entity history benchmark, in a fresh process: a graph of COMMITS
 * commits on main, of which TOUCHING change one entity and the rest change
 * two other rows each whose keys straddle it (so every run's key range
 * holds the entity's key), with the size-tiered compaction a server runs
 * every 16 commits. Then, on a cold server over a counting store, the
 * entity's whole history and its blame, against the walk that examines
 * every commit along first parents (one manifest and one point lookup
 * each), which is how history was read before runs recorded their origin.
 * Prints one JSON line: store calls and milliseconds per arm, and the
 * versions each found.
 *
 *   tsx bench/entity.ts COMMITS TOUCHING
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { getRow } from '../src/graph/reads.js';
import { embeddedApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import type { BranchgraphService } from '../src/service/service.js';
import { CountingStore } from '../src/store/counting-store.js';
import { FsStore } from '../src/store/fs-store.js';

const COMMITS = Number(process.argv[2] ?? 1000);
const TOUCHING = Number(process.argv[3] ?? 10);
const SCHEMA = 'node Item { id: string @key\n v: int }';
const id = (i: number): string => `item${String(i).padStart(7, '0')}`;
const TARGET = id(5_000_000);
const CTX = { transport: 'embedded' as const };

async function build(dir: string): Promise<void> {
  const service = await serviceOnStore(new FsStore(dir), { actor: 'bench', shard: 'bench' });
  const api = embeddedApi(service, CTX);
  await api.applySchema({ branch: 'main', schema: SCHEMA });
  const every = Math.floor(COMMITS / TOUCHING);
  for (let i = 0; i < COMMITS; i++) {
    const ops =
      i % every === 0
        ? [{ op: 'upsert' as const, table: 'Item', values: { id: TARGET, v: i } }]
        : [
            { op: 'upsert' as const, table: 'Item', values: { id: id(i), v: i } },
            { op: 'upsert' as const, table: 'Item', values: { id: id(9_999_999 - i), v: i } },
          ];
    await api.write({ branch: 'main', ops });
    if (i % 16 === 15) await api.compact({ branch: 'main', mode: 'tiered' });
  }
  await service.close();
}

/** The walk of every commit along first parents: a version wherever the row differs from the parent's. */
async function everyCommit(service: BranchgraphService): Promise<number> {
  const { heads, tables } = service.graph.ports;
  let snap = await heads.snapshotAt((await service.graph.branchHead('main')).ref);
  let row = await getRow({ tables, snap, table: 'Item', key: TARGET });
  let versions = 0;
  for (;;) {
    const parent = snap.manifest.commit.parents[0];
    if (parent === undefined) return versions + (row === null ? 0 : 1);
    const p = await heads.snapshotAt(parent);
    const before = p.schema.types.some((t) => t.name === 'Item') ? await getRow({ tables, snap: p, table: 'Item', key: TARGET }) : null;
    if (JSON.stringify(before) !== JSON.stringify(row)) versions++;
    [snap, row] = [p, before];
  }
}

async function measure(dir: string, read: (s: BranchgraphService) => Promise<number>) {
  const store = new CountingStore(new FsStore(dir));
  const service = await serviceOnStore(store, { actor: 'reader', shard: 'reader' });
  store.reset();
  const t0 = performance.now();
  const versions = await read(service);
  const ms = performance.now() - t0;
  const calls = store.snapshot().total.calls;
  await service.close();
  return { versions, calls, ms: Math.round(ms * 10) / 10 };
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-entity-'));
  try {
    const t0 = performance.now();
    await build(dir);
    const buildS = (performance.now() - t0) / 1000;
    const history = await measure(dir, async (s) => {
      const api = embeddedApi(s, CTX);
      let n = 0;
      let cursor: string | undefined;
      do {
        const page = await api.entityHistory({ table: 'Item', key: TARGET, limit: 1000, ...(cursor ? { cursor } : {}) });
        n += page.versions.length;
        cursor = page.nextCursor ?? undefined;
      } while (cursor !== undefined);
      return n;
    });
    const blame = await measure(dir, async (s) => (await embeddedApi(s, CTX).blame({ table: 'Item', key: TARGET })).properties.length);
    const walk = await measure(dir, everyCommit);
    process.stdout.write(
      `${JSON.stringify({
        commits: COMMITS,
        touching: TOUCHING,
        build_s: Math.round(buildS * 10) / 10,
        history_versions: history.versions,
        history_calls: history.calls,
        history_ms: history.ms,
        blame_calls: blame.calls,
        blame_ms: blame.ms,
        every_commit_versions: walk.versions,
        every_commit_calls: walk.calls,
        every_commit_ms: walk.ms,
        peakRssMiB: Math.round(process.resourceUsage().maxRSS / 1024),
      })}\n`,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
