/**
 * Garbage collection: delete objects that no live manifest references, once
 * they are older than a grace period.
 *
 * Live: every branch that exists, every branch deleted less than the
 * grace period ago, and every head a reset moved a branch away from less
 * than the grace period ago (a merge may still be publishing a manifest that refers
 * to its runs). Reachable: every manifest on a path of parents from a live
 * head, a tag or a remote-tracking ref, with the runs, parts, schemas and commit index entries they name; every
 * manifest of a live lineage is kept outright, since one may be published
 * while GC runs. Branch records and schemas are never deleted: they are
 * tiny and records number a branch name's history.
 *
 * Ages come from the store's clock, never a writer's: each object's age is
 * the store's time now (store/store-clock.ts) less the `lastModified` the
 * store stamped on it, and a deletion's age is that of its branch record.
 * Processes whose clocks disagree by any amount agree on these, so no skew
 * between hosts can make GC delete what a publication in flight names. An
 * object the store reports no time for is kept.
 *
 * Safety against publications in flight. GC decides from a snapshot of the
 * heads, so an object it finds unreferenced may still be named by a
 * manifest about to be published: the scratch runs of a change being
 * planned, or the runs of a branch deleted while a merge adopts them. Two
 * bounds close that window. A grace below MIN_GC_GRACE_MS is raised to it,
 * whatever the caller asked (the report says what was used), and a
 * publication refuses to publish when its snapshots are older than
 * MAX_PUBLICATION_MS (graph.ts). An object younger than the grace is kept,
 * and anything a publication still in time can reference is younger than
 * that. The publication's bound is elapsed time on one process's clock (a
 * monotonic one), the grace is elapsed time on the store's: neither compares
 * two hosts' clocks, and the ten minutes between them absorb clock drift.
 */
import type { ObjectInfo, ObjectStore } from '../store/object-store.js';
import { storeTime } from '../store/store-clock.js';
import type { BranchRecord } from './branch-record.js';
import type { Repository } from './repository.js';
import type { RunStore } from './run-store.js';
import type { Tags } from './tags.js';
import type { Remotes } from './remotes.js';
import { COLLECTABLE_PREFIXES, parseKey } from './keys.js';
import { IDEMPOTENCY_LIFETIME_MS, idempotencyBucketTime } from './idempotency.js';
import type { Manifest, ManifestRef } from './manifest.js';
import { objectsOf } from './manifest-objects.js';
import { parseGenerationKey } from '../pending/generation.js';
import { watermarksFor } from '../pending/pending-wal.js';

export interface GcOptions {
  /** Objects younger than this are kept even when unreferenced. Default one hour. */
  graceMs?: number;
  /** Report what would be deleted without deleting. */
  dryRun?: boolean;
  /** The store's time now (tests); read from the store when absent. */
  now?: number;
  signal?: AbortSignal;
}

export interface GcReport {
  dryRun: boolean;
  /**
   * Branches whose records cannot be read. Their lineages are unknown, so
   * GC deletes nothing while there are any (the report is then a dry run);
   * an admin deletes or repairs them first.
   */
  damagedBranches: string[];
  /** The grace period used: the one asked for, raised to MIN_GC_GRACE_MS. */
  graceMs: number;
  reachableManifests: number;
  scanned: number;
  deleted: {
    manifests: number;
    runs: number;
    commits: number;
    hints: number;
    parts: number;
    wal: number;
    idempotency: number;
    deadLetters: number;
    /** Search segments whose run is gone. */
    search: number;
  };
  bytesFreed: number;
  keys: string[];
}

export const DEFAULT_GC_GRACE_MS = 60 * 60 * 1000;
/** How long a webhook dead letter is kept before GC removes it. */
export const DEAD_LETTER_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;
/** The smallest grace GC uses, whatever it is asked. */
export const MIN_GC_GRACE_MS = 15 * 60 * 1000;
/** The longest a publication may take from reading its snapshots to its manifest PUT. */
export const MAX_PUBLICATION_MS = 5 * 60 * 1000;

async function listKeys(store: ObjectStore, prefix: string, signal?: AbortSignal): Promise<ObjectInfo[]> {
  const out: ObjectInfo[] = [];
  for await (const o of store.list(prefix, { signal })) out.push(o);
  return out;
}

/** What GC reads and deletes: every object of the graph's store, through its repository, runs and tags. */
export interface GcTarget {
  store: ObjectStore;
  repo: Repository;
  runs: RunStore;
  tags: Tags;
  remotes: Remotes;
}

/** Every manifest reachable from `roots` through parents, and the set of them as `lineage/version`. */
async function reachableFrom(
  graph: GcTarget,
  roots: ManifestRef[],
  signal?: AbortSignal,
): Promise<{ seen: Set<string>; reachable: Manifest[] }> {
  const seen = new Set<string>();
  const reachable: Manifest[] = [];
  let frontier = roots;
  while (frontier.length > 0) {
    const fresh = frontier.filter((r) => !seen.has(`${r.lineage}/${r.version}`));
    for (const r of fresh) seen.add(`${r.lineage}/${r.version}`);
    const ms = await Promise.all(fresh.map((r) => graph.repo.manifests.read(r, signal)));
    reachable.push(...ms);
    // A re-laid version keeps the version that published its commit readable (`commit:<id>` names that one).
    frontier = ms.flatMap((m) => (m.layout === undefined ? m.commit.parents : [...m.commit.parents, m.layout.of]));
  }
  return { seen, reachable };
}

/**
 * Records a newer record replaced less than the grace ago (a reset, or a deletion and creation),
 * whose lineage no newer record names: their heads stay roots for the grace, as a deleted
 * branch's do, so the head a reset moved away from stays readable (`<branch>@{time}`).
 */
async function recentlyReplaced(a: {
  graph: GcTarget;
  history: Map<string, { key: string; writtenAt: number | undefined }[]>;
  old: (t: number | undefined) => boolean;
  signal: AbortSignal | undefined;
}): Promise<BranchRecord[]> {
  const wanted: string[] = [];
  for (const records of a.history.values())
    for (let i = records.length - 2; i >= 0 && !a.old(records[i + 1]?.writtenAt); i--) wanted.push((records[i] as { key: string }).key);
  // A replaced record that cannot be read names no lineage to keep: the record over it (an admin's
  // deletion of a damaged branch) already gave up what it held.
  const read = await Promise.all(wanted.map((key) => a.graph.repo.records.read(key, a.signal).catch(() => undefined)));
  return read.filter((r): r is BranchRecord => r !== undefined && r.lineage !== '' && !r.deleted);
}

export async function collectGarbage(graph: GcTarget, opts: GcOptions = {}): Promise<GcReport> {
  const signal = opts.signal;
  const now = opts.now ?? (await storeTime(graph.store, signal));
  const grace = Math.max(opts.graceMs ?? DEFAULT_GC_GRACE_MS, MIN_GC_GRACE_MS);
  /** Written longer than the grace ago, by the store's clock; unknown is never old. */
  const old = (t: number | undefined): boolean => t !== undefined && t < now - grace;

  const [{ records, damaged: damagedBranches, writtenAt, history }, tagged, tracked] = await Promise.all([
    graph.repo.records.all(signal),
    graph.tags.all(signal),
    graph.remotes.allTrackingRefs(signal),
  ]);
  const replaced = await recentlyReplaced({ graph, history, old, signal });
  // A tag that cannot be read may be the only root of some history: like a damaged branch, it stops deletion.
  const damaged = [...damagedBranches, ...tagged.damaged.map((d) => ({ name: d.key, key: d.key, error: d.error }))];
  // A deletion that names no lineage (an admin deleting a damaged branch) keeps nothing alive.
  const deletedLongAgo = (name: string): boolean => old(writtenAt.get(name));
  const live = [...records.filter((r) => r.lineage !== '' && (!r.deleted || !deletedLongAgo(r.name))), ...replaced];
  const liveLineages = new Set(live.map((r) => r.lineage));
  const byName = new Map(records.map((r) => [r.name, r]));

  const headRefs = await Promise.all(live.map((r) => graph.repo.versions.headRef(r, signal)));
  // Tags and remote-tracking refs are roots too: a tagged commit outlives its branch, and a fetched
  // branch stays readable (and mergeable) until the next fetch moves it.
  const roots = [...headRefs, ...tagged.tags.map((t) => t.manifest), ...tracked.map((t) => t.manifest)];
  const { seen, reachable } = await reachableFrom(graph, roots, signal);

  const keep = await objectsOf(graph, reachable, signal);

  const listed = await Promise.all(Object.values(COLLECTABLE_PREFIXES).map((p) => listKeys(graph.store, p, signal)));
  const byRef = new Map(reachable.map((m) => [`${m.lineage}/${m.version}`, m]));
  const liveMarks = new Map<string, Record<string, number>>();
  live.forEach((r, i) => {
    const head = byRef.get(`${headRefs[i]?.lineage}/${headRefs[i]?.version}`);
    liveMarks.set(r.lineage, head !== undefined ? watermarksFor(head, r.lineage) : {});
  });
  const candidates = garbageAmong({ listed, keep, seen, liveLineages, liveMarks, byName, old, deletedLongAgo });

  const report: GcReport = {
    // A branch whose record cannot be read may own any of the candidates: then nothing is deleted.
    dryRun: opts.dryRun === true || damaged.length > 0,
    damagedBranches: damaged.map((d) => d.name),
    graceMs: grace,
    reachableManifests: reachable.length,
    scanned: listed.reduce((n, xs) => n + xs.length, 0),
    deleted: { manifests: 0, runs: 0, commits: 0, hints: 0, parts: 0, wal: 0, idempotency: 0, deadLetters: 0, search: 0 },
    bytesFreed: 0,
    keys: candidates.map((c) => c.key).sort(),
  };
  for (const c of candidates) {
    report.deleted[c.kind]++;
    report.bytesFreed += c.size;
  }
  if (!report.dryRun && candidates.length > 0) await graph.store.deleteMany(report.keys, { signal });
  if (!report.dryRun) await graph.store.sweepTemps?.(grace, now).catch(() => undefined);
  return report;
}

/** What GC knows when it judges keys: every key listed (by prefix), what the reachable manifests reference, and the live lineages' state. */
interface Judgement {
  listed: ObjectInfo[][];
  keep: Set<string>;
  seen: Set<string>;
  liveLineages: Set<string>;
  liveMarks: Map<string, Record<string, number>>;
  byName: Map<string, BranchRecord>;
  old: (t: number | undefined) => boolean;
  deletedLongAgo: (name: string) => boolean;
}

type Candidate = ObjectInfo & { kind: keyof GcReport['deleted'] };

/** The listed keys GC may delete: unreferenced and older than the grace, by kind. */
function garbageAmong(j: Judgement): Candidate[] {
  const { keep, seen, liveLineages, liveMarks, byName, old, deletedLongAgo } = j;
  const [manifests, runs, commits, hints, parts, wal, idempotency, deadLetters, search] = j.listed;
  const candidates: Candidate[] = [];
  // WAL generations: those of dead lineages once old, and those at or below their live head's watermark (folded).
  for (const o of wal ?? []) {
    const at = parseGenerationKey(o.key);
    if (at === undefined) continue;
    const marks = liveMarks.get(at.lineage);
    if (marks !== undefined ? at.seq <= (marks[at.shard] ?? 0) : !liveLineages.has(at.lineage) && old(o.lastModified))
      candidates.push({ ...o, kind: 'wal' });
  }
  // Keys outside the layout are never candidates: they are not ours to judge.
  for (const o of manifests ?? []) {
    const k = parseKey(o.key);
    if (k?.kind !== 'manifest' || liveLineages.has(k.lineage) || seen.has(`${k.lineage}/${k.version}`)) continue;
    if (old(o.lastModified)) candidates.push({ ...o, kind: 'manifests' });
  }
  for (const o of runs ?? []) {
    const k = parseKey(o.key);
    if (k?.kind === 'run' && !keep.has(o.key) && old(o.lastModified)) candidates.push({ ...o, kind: 'runs' });
  }
  // A search segment lives as long as its run: it is derived from it alone.
  for (const o of search ?? []) {
    const k = parseKey(o.key);
    if (k?.kind === 'searchSegment' && !keep.has(k.run) && old(o.lastModified)) candidates.push({ ...o, kind: 'search' });
  }
  for (const o of commits ?? []) {
    const k = parseKey(o.key);
    if (k?.kind === 'commit' && !keep.has(o.key) && old(o.lastModified)) candidates.push({ ...o, kind: 'commits' });
  }
  for (const o of parts ?? []) {
    const k = parseKey(o.key);
    if (k?.kind === 'part' && !keep.has(o.key) && old(o.lastModified)) candidates.push({ ...o, kind: 'parts' });
  }
  for (const o of hints ?? []) {
    const k = parseKey(o.key);
    if (k?.kind === 'hint' && !liveLineages.has(k.lineage) && old(o.lastModified)) candidates.push({ ...o, kind: 'hints' });
    // A branch's head hint goes once the branch has been deleted for longer than the grace.
    const rec = k?.kind === 'branchHint' ? byName.get(k.name) : undefined;
    if (rec?.deleted === true && deletedLongAgo(rec.name)) candidates.push({ ...o, kind: 'hints' });
  }

  // Idempotency records go by their day bucket, once a lookup can no longer reach them.
  for (const o of idempotency ?? []) {
    // A key in the layout, written longer ago than any lookup reaches (two lifetimes) and the grace, by the store's clock.
    if (idempotencyBucketTime(o.key) !== undefined && o.lastModified !== undefined && old(o.lastModified + 2 * IDEMPOTENCY_LIFETIME_MS))
      candidates.push({ ...o, kind: 'idempotency' });
  }
  // Dead letters are kept for an admin to read or redeliver for DEAD_LETTER_LIFETIME_MS, by the store's clock.
  for (const o of deadLetters ?? []) {
    if (
      /^hook-dead-letters\/[0-9A-HJKMNP-TV-Z]{26}\.json$/.test(o.key) &&
      o.lastModified !== undefined &&
      old(o.lastModified + DEAD_LETTER_LIFETIME_MS)
    )
      candidates.push({ ...o, kind: 'deadLetters' });
  }

  return candidates;
}
