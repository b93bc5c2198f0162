/**
 * Transfer: the objects of some commits sent from one store to another,
 * exactly those the destination lacks, so that it can then point a ref at
 * them. Fetch, push and clone are transfers followed by a ref move.
 *
 * Negotiation. The caller names what it `wants` sent (manifests: remote
 * heads, tags) and what the destination is known to `have` (manifests the
 * destination holds, such as its tracking refs or the head a push moves).
 * The walk goes from the wants through parents and stops where a have's
 * ancestry contains a manifest (an O(1) look-up, graph/ancestry.ts), so
 * it reads only the manifests the haves do not contain: its cost follows
 * the change, never the history. A lineage's versions are read at once
 * down to what the haves contain, since each is published on the one
 * before. The objects to send are those the new manifests name less those
 * the haves name (their closure is at the destination already), and less
 * those of manifests the destination already holds (`holds`: a resumed
 * transfer).
 *
 * Order, and why a cut transfer is safe. Content objects (runs, parts,
 * commit index entries, schemas) go first, then the manifests, all at once.
 * So a manifest is at the destination only once its own content is, and
 * nothing names a manifest until the transfer is done: the caller moves a
 * ref (a tracking ref, a branch) only then, so readers never see a gap. A
 * cut transfer is finished by running it again: the walk reaches what the
 * cut left behind and sends only what is missing.
 *
 * Every object is checked as it arrives (object-check.ts; a run against
 * the checksum its manifest records) and written create-only, at most
 * `width` at a time. Lineages are written by the store that created them
 * only (a fetched branch is moved by a new record on a lineage of the
 * destination's own), so a key held at both ends holds the same object; one
 * of another size is refused as another graph's.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { mapLimit } from '../model/map-limit.js';
import type { ObjectStore } from '../store/object-store.js';
import { keys } from './keys.js';
import { refOf, type Manifest, type ManifestRef } from './manifest.js';
import { objectsOf } from './manifest-objects.js';
import { checkObject } from './object-check.js';
import { verifyChecksum } from '../table/run.js';
import type { Repository } from './repository.js';
import type { RunStore } from './run-store.js';

/** Where a transfer reads from: the source graph's store, repository and runs. */
export interface TransferSource {
  store: ObjectStore;
  repo: Repository;
  runs: RunStore;
}

/** What a transfer sends: content keys, then manifests (`writeLevels`). */
export interface TransferPlan {
  content: string[];
  manifests: Manifest[];
}

export interface TransferReport {
  /** Objects and bytes written at the destination. */
  objects: number;
  bytes: number;
  /** Objects the plan named that the destination held already (a resumed transfer). */
  present: number;
  /** Manifests (commits and their layouts) sent. */
  manifests: number;
}

export type TransferProgress = (p: { objects: number; bytes: number; total: number }) => void;

/** Objects in flight at once, read and written, unless the caller says otherwise. */
const DEFAULT_WIDTH = 8;
/** Manifests the walk reads at once. */
const WALK_WIDTH = 16;

const refKey = (r: ManifestRef): string => `${r.lineage}/${r.version}`;

/**
 * What the destination lacks of `wants`, given manifests it `haves` (a have the source does not
 * hold is ignored) and `holds` (whether the destination holds a manifest; checked per manifest
 * the walk reaches that no have contains).
 */
export async function planTransfer(
  src: TransferSource,
  a: {
    wants: readonly ManifestRef[];
    haves: readonly ManifestRef[];
    holds: (ref: ManifestRef) => Promise<boolean>;
    signal?: AbortSignal | undefined;
  },
): Promise<TransferPlan> {
  const { signal } = a;
  const read = (r: ManifestRef): Promise<Manifest | undefined> =>
    src.repo.manifests.read(r, signal).catch((e: unknown) => {
      if (isBranchgraphError(e, 'not_found') || isBranchgraphError(e, 'object_not_found')) return undefined;
      throw e;
    });
  const boundary = (await Promise.all(a.haves.map(read))).filter((m): m is Manifest => m !== undefined);
  const haves = [...boundary];
  /** The highest version of `lineage` a have contains: every version up to it is at the destination. */
  const floor = (lineage: string): number => Math.max(0, ...haves.map((h) => h.ancestry.get(lineage)));
  const seen = new Set<string>();
  const fresh: Manifest[] = [];
  let frontier = [...a.wants];
  while (frontier.length > 0) {
    const next: ManifestRef[] = [];
    for (const r of frontier)
      if (r.version > floor(r.lineage) && !seen.has(refKey(r))) {
        seen.add(refKey(r));
        next.push(r);
      }
    // A ref that names no manifest (a want no one has) is not_found: nothing is taken on trust.
    const found = await mapLimit(next, WALK_WIDTH, async (r) => {
      const m = await src.repo.manifests.read(r, signal);
      return { m, held: await a.holds(r) };
    });
    // A held manifest is not sent again, nor is its content; its parents may still be missing (a cut
    // transfer writes manifests in any order), so the walk goes on through it.
    for (const { m, held } of found) (held ? boundary : fresh).push(m);
    frontier = [];
    for (const { m } of found) {
      // Every version of a lineage below one read is its ancestor (each version is published on the
      // one before): all of them down to what a have contains go in the next round at once, not one a round.
      for (let v = m.version - 1; v > floor(m.lineage) && !seen.has(refKey({ lineage: m.lineage, version: v })); v--)
        frontier.push({ lineage: m.lineage, version: v });
      // A re-laid version keeps the version that published its commit readable (`commit:<id>` names that one).
      frontier.push(...m.commit.parents, ...(m.layout === undefined ? [] : [m.layout.of]));
    }
  }
  const [wanted, held] = await Promise.all([objectsOf(src, fresh, signal), objectsOf(src, boundary, signal)]);
  return { content: [...wanted].filter((k) => !held.has(k)).sort(), manifests: fresh };
}

/** Send a plan's objects to `destination`: the content first, then the manifests, each checked as it arrives. */
export async function sendTransfer(
  src: TransferSource,
  a: {
    plan: TransferPlan;
    destination: ObjectStore;
    width?: number | undefined;
    signal?: AbortSignal | undefined;
    progress?: TransferProgress | undefined;
  },
): Promise<TransferReport> {
  const { plan, signal } = a;
  const checksums = runChecksums(plan.manifests);
  async function* checked(): AsyncGenerator<{ key: string; level: number; bytes: Uint8Array }> {
    for await (const o of objectsInOrder(src, plan, { signal, readAhead: a.width })) {
      const run = checksums.get(o.key);
      if (run !== undefined) verifyChecksum(run, o.bytes);
      yield o;
    }
  }
  return receiveObjects(a.destination, {
    objects: checked(),
    total: plan.content.length + plan.manifests.length,
    width: a.width,
    signal,
    progress: a.progress,
  });
}

/** A plan's keys in the levels they are written in: the content, then the manifests. Within a level, any order and any width. */
const MANIFEST_LEVEL = 1;

export function writeLevels(plan: TransferPlan): string[][] {
  return [plan.content, plan.manifests.map((m) => keys.manifest(m.lineage, m.version))];
}

/** Write `bytes` at `key` unless it is there; false when it was. One of another size is another graph's. */
export async function putOnce(a: {
  destination: ObjectStore;
  key: string;
  bytes: Uint8Array;
  signal?: AbortSignal | undefined;
}): Promise<boolean> {
  try {
    await a.destination.putIfAbsent(a.key, a.bytes, { signal: a.signal });
    return true;
  } catch (e) {
    if (!isBranchgraphError(e, 'object_exists')) throw e;
    if ((await a.destination.head(a.key, { signal: a.signal }))?.size !== a.bytes.byteLength)
      throw new BranchgraphError('corrupt_object', `the destination holds another object at ${a.key}: it is not this graph`, {
        details: { key: a.key },
      });
    return false;
  }
}

/** The runs `ms` name whose bytes their entries checksum (a segmented run's segments are checked as they are read). */
export function runChecksums(ms: readonly Manifest[]): Map<string, { key: string; checksum: string }> {
  const out = new Map<string, { key: string; checksum: string }>();
  for (const m of ms) for (const t of Object.values(m.tables)) for (const r of t.runs) if (r.segmented !== true) out.set(r.key, r);
  return out;
}

/** A plan's objects in write order with their level, read from `store` a few ahead of the consumer (a socket). */
export async function* objectsInOrder(
  src: Pick<TransferSource, 'store' | 'repo'>,
  plan: TransferPlan,
  opts: { signal?: AbortSignal | undefined; readAhead?: number | undefined } = {},
): AsyncGenerator<{ key: string; level: number; bytes: Uint8Array }> {
  const { signal } = opts;
  const readAhead = Math.max(1, opts.readAhead ?? DEFAULT_WIDTH);
  for (const [level, keys] of writeLevels(plan).entries()) {
    const ahead: Promise<Uint8Array>[] = [];
    let next = 0;
    // A manifest is read as stored wherever it is (a version of a batch may be in its first's object).
    const read = (i: number): Promise<Uint8Array> =>
      level === MANIFEST_LEVEL
        ? src.repo.manifests.storedBytes(refOf(plan.manifests[i] as Manifest), signal)
        : src.store.get(keys[i] as string, { signal });
    const fill = (): void => {
      while (ahead.length < readAhead && next < keys.length) {
        const p = read(next++);
        // Awaited in turn below; a failure of one read ahead must not go unhandled meanwhile.
        p.catch(() => undefined);
        ahead.push(p);
      }
    };
    fill();
    for (const key of keys) {
      const bytes = await (ahead.shift() as Promise<Uint8Array>);
      fill();
      yield { key, level, bytes };
    }
  }
}

/**
 * Write objects arriving in write order (a server's pack) into `destination`: each checked, at most
 * `width` at a time within a level, and a level's writes done before the next level's start, so a
 * manifest never lands before what it names.
 */
export async function receiveObjects(
  destination: ObjectStore,
  a: {
    objects: AsyncIterable<{ key: string; level: number; bytes: Uint8Array }>;
    total: number;
    width?: number | undefined;
    signal?: AbortSignal | undefined;
    progress?: TransferProgress | undefined;
  },
): Promise<TransferReport> {
  const { signal } = a;
  const report: TransferReport = { objects: 0, bytes: 0, present: 0, manifests: 0 };
  const width = Math.max(1, a.width ?? DEFAULT_WIDTH);
  const running = new Set<Promise<void>>();
  let failure: unknown;
  let level = 0;
  const settle = async (): Promise<void> => {
    await Promise.all(running);
    if (failure !== undefined) throw failure;
  };
  for await (const o of a.objects) {
    if (o.level !== level) {
      await settle();
      level = o.level;
    }
    if (o.key.startsWith('manifests/')) report.manifests++;
    checkObject(o.key, o.bytes);
    const p = putOnce({ destination, key: o.key, bytes: o.bytes, signal }).then(
      (wrote) => {
        if (wrote) {
          report.objects++;
          report.bytes += o.bytes.byteLength;
        } else report.present++;
        a.progress?.({ objects: report.objects + report.present, bytes: report.bytes, total: a.total });
      },
      (e: unknown) => {
        failure ??= e;
      },
    );
    running.add(p);
    void p.finally(() => running.delete(p));
    if (running.size >= width) await Promise.race(running);
    if (failure !== undefined) break;
  }
  await settle();
  return report;
}
