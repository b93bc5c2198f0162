/**
 * Entity history and blame against a walk of every commit: seeded programs
 * of writes, deletes, ingest and catch-up, merges both ways (criss-cross
 * included), fast-forwards, cherry-picks, reverts, resets, compaction
 * (tiered and full) and schema changes, then, for every key on every
 * branch, the jumping walk must list exactly the versions that examining
 * every commit finds, and blame must name the same commit per property.
 *
 * The reference walk reads the entity's row at every commit it reaches and
 * applies Git's history simplification: a commit equal to a parent (the
 * first such) passes to that parent; one that differs from every parent is
 * a version and passes to all. HIST_SEEDS (default 30; CI runs seeds 31-200 besides),
 * HIST_FIRST_SEED and HIST_OPS tune a run; a failure names its seed.
 */
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/model/canonical.js';
import { isBranchgraphError } from '../src/model/errors.js';
import { Prng } from '../src/model/prng.js';
import { findType } from '../src/model/schema.js';
import type { Row } from '../src/model/values.js';
import { getRow } from '../src/graph/reads.js';
import type { Snapshot } from '../src/graph/snapshot.js';
import { embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import type { BranchgraphService } from '../src/service/service.js';
import { MemoryStore } from '../src/store/memory-store.js';

const SEEDS = Number(process.env.HIST_SEEDS ?? 30);
const FIRST = Number(process.env.HIST_FIRST_SEED ?? 1);
const OPS = Number(process.env.HIST_OPS ?? 40);
const SCHEMA = 'node P { id: string @key\n n: int?\n s: string? }';
const WIDER = 'node P { id: string @key\n n: int?\n s: string?\n t: string? }';
const KEYS = ['a', 'b', 'c'];
const BRANCHES = ['main', 'dev'];
const CTX = { transport: 'embedded' as const, actor: 'sim' };

const same = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);
/** Rows are the same when every property is: a property a row lacks is null. */
const sameRow = (a: Row | null, b: Row | null): boolean =>
  a === null || b === null ? a === b : [...Object.keys(a), ...Object.keys(b)].every((p) => same(a[p], b[p]));

/** Every commit reachable from `head`, examined highest generation first, each once. */
async function walkEvery(
  service: BranchgraphService,
  head: Snapshot,
  visit: (c: Snapshot, parents: Snapshot[]) => Promise<Snapshot[]>,
): Promise<void> {
  const waiting = new Map<string, Snapshot>([[head.manifest.commit.id, head]]);
  while (waiting.size > 0) {
    const c = [...waiting.values()].reduce((a, b) => (newer(b, a) ? b : a));
    waiting.delete(c.manifest.commit.id);
    const parents = await Promise.all(c.manifest.commit.parents.map((p) => service.graph.ports.heads.snapshotAt(p)));
    for (const p of await visit(c, parents)) waiting.set(p.manifest.commit.id, p);
  }
}

function newer(a: Snapshot, b: Snapshot): boolean {
  const [x, y] = [a.manifest, b.manifest];
  if (x.generation !== y.generation) return x.generation > y.generation;
  if (x.commit.time !== y.commit.time) return x.commit.time > y.commit.time;
  return x.commit.id > y.commit.id;
}

function rowAt(service: BranchgraphService, snap: Snapshot, key: string): Promise<Row | null> {
  if (findType(snap.schema, 'P') === undefined) return Promise.resolve(null);
  return getRow({ tables: service.graph.ports.tables, snap, table: 'P', key });
}

/** The versions a walk of every commit finds, as `<commit> <change> <changed>`. */
async function everyCommitHistory(
  service: BranchgraphService,
  at: { head: Snapshot; key: string; firstParent: boolean },
): Promise<string[]> {
  const out: string[] = [];
  await walkEvery(service, at.head, async (c, all) => {
    const parents = at.firstParent ? all.slice(0, 1) : all;
    const row = await rowAt(service, c, at.key);
    const rows = await Promise.all(parents.map((p) => rowAt(service, p, at.key)));
    const i = rows.findIndex((r) => sameRow(r, row));
    if (i >= 0) return [parents[i] as Snapshot];
    const before = rows[0] ?? null;
    if (parents.length > 0 || row !== null) {
      const props = [...new Set([...Object.keys(before ?? {}), ...Object.keys(row ?? {})])].sort();
      const change = before === null ? 'inserted' : row === null ? 'deleted' : 'updated';
      out.push(`${c.manifest.commit.id} ${change} ${props.filter((p) => !same(before?.[p], row?.[p])).join(',')}`);
    }
    return parents;
  });
  return out;
}

/** Per property, the commit a walk of every commit blames, following the first parent that has the value. */
async function everyCommitBlame(service: BranchgraphService, head: Snapshot, key: string): Promise<Record<string, string>> {
  const row = (await rowAt(service, head, key)) as Row;
  const out: Record<string, string> = {};
  for (const p of Object.keys(row)) {
    let c = head;
    for (;;) {
      const parents = await Promise.all(c.manifest.commit.parents.map((r) => service.graph.ports.heads.snapshotAt(r)));
      const rows = await Promise.all(parents.map((s) => rowAt(service, s, key)));
      const i = rows.findIndex((r) => r !== null && same(r[p], row[p]));
      if (i < 0) break;
      c = parents[i] as Snapshot;
    }
    out[p] = c.manifest.commit.id;
  }
  return out;
}

async function pagedHistory(api: BranchgraphApi, at: { commit: string; key: string; firstParent: boolean }): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await api.entityHistory({
      table: 'P',
      key: at.key,
      at: `commit:${at.commit}`,
      limit: 2,
      firstParent: at.firstParent,
      ...(cursor ? { cursor } : {}),
    });
    out.push(...page.versions.map((v) => `${v.commit.id} ${v.change} ${v.changed.join(',')}`));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}

/** One seeded program; every failure a step meets is the engine refusing it, which changes nothing. */
async function runProgram(api: BranchgraphApi, seed: number): Promise<void> {
  const rng = new Prng(seed);
  let n = 0;
  const branch = (): string => rng.pick(BRANCHES);
  const commits = async (b: string): Promise<string[]> =>
    (await api.log({ at: b, limit: 40 })).commits.filter((c) => c.parents.length > 0).map((c) => c.id);
  const steps: [number, () => Promise<unknown>][] = [
    [
      30,
      () =>
        api.write({
          branch: branch(),
          ops: [{ op: 'upsert', table: 'P', values: { id: rng.pick(KEYS), n: ++n, ...(rng.chance(0.5) ? { s: `s${n}` } : {}) } }],
        }),
    ],
    [6, () => api.write({ branch: branch(), ops: [{ op: 'update', table: 'P', values: { id: rng.pick(KEYS), s: `u${++n}` } }] })],
    [10, () => api.write({ branch: branch(), ops: [{ op: 'delete', table: 'P', values: { id: rng.pick(KEYS) } }] })],
    [
      8,
      async () => {
        await api.ingest({ branch: branch(), ops: [{ op: 'upsert', table: 'P', values: { id: rng.pick(KEYS), n: ++n } }] });
        for (const b of BRANCHES) await api.catchUp({ branch: b });
      },
    ],
    [
      14,
      () => {
        const into = branch();
        return api.mergeBranch({
          source: into === 'main' ? 'dev' : 'main',
          into,
          resolutions: { strategy: rng.pick(['source-wins', 'target-wins'] as const) },
        });
      },
    ],
    [8, () => api.compact({ branch: branch(), mode: rng.pick(['tiered', 'full'] as const) })],
    [
      6,
      async () =>
        api.revert({ branch: 'main', commit: `commit:${rng.pick(await commits('main'))}`, resolutions: { strategy: 'source-wins' } }),
    ],
    [
      6,
      async () =>
        api.cherryPick({ branch: 'main', commit: `commit:${rng.pick(await commits('dev'))}`, resolutions: { strategy: 'source-wins' } }),
    ],
    [
      4,
      async () => {
        const b = branch();
        const head = await api.getBranch({ name: b });
        return api.resetBranch({ name: b, to: `commit:${rng.pick(await commits(b))}`, expectedHead: head.head.id });
      },
    ],
    [2, () => api.applySchema({ branch: branch(), schema: rng.chance(0.5) ? WIDER : SCHEMA })],
  ];
  const total = steps.reduce((a, [w]) => a + w, 0);
  for (let i = 0; i < OPS; i++) {
    const r = rng.int(total);
    let below = 0;
    const step = steps.find(([w]) => {
      below += w;
      return r < below;
    }) as [number, () => Promise<unknown>];
    try {
      await step[1]();
    } catch (e) {
      if (!isBranchgraphError(e)) throw e;
    }
  }
}

describe('entity history against every commit', () => {
  it(
    `${SEEDS} seeded programs: history (both walks, paged) and blame match`,
    async () => {
      for (let seed = FIRST; seed < FIRST + SEEDS; seed++) {
        const service = await serviceOnStore(new MemoryStore(), { actor: 'sim', shard: 'sim' });
        const api = embeddedApi(service, CTX);
        await api.applySchema({ branch: 'main', schema: SCHEMA });
        await api.write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: 'a', n: 0 } }] });
        await api.createBranch({ name: 'dev' });
        await runProgram(api, seed);
        for (const b of BRANCHES) {
          const head = await service.graph.ports.heads.snapshotAt((await service.graph.branchHead(b)).ref);
          const commit = head.manifest.commit.id;
          for (const key of KEYS) {
            for (const firstParent of [false, true]) {
              const expected = await everyCommitHistory(service, { head, key, firstParent });
              expect(await pagedHistory(api, { commit, key, firstParent }), `seed ${seed} ${b} ${key} firstParent=${firstParent}`).toEqual(
                expected,
              );
            }
            if ((await rowAt(service, head, key)) === null) continue;
            const blame = await api.blame({ table: 'P', key, at: `commit:${commit}` });
            expect(blame.complete).toBe(true);
            const got = Object.fromEntries(blame.properties.map((p) => [p.property, p.commit?.id]));
            expect(got, `seed ${seed} ${b} ${key} blame`).toEqual(await everyCommitBlame(service, head, key));
          }
        }
        await service.close();
      }
    },
    Math.max(60_000, SEEDS * 4_000),
  );
});
