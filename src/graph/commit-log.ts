/**
 * The commit log: every commit reachable from a snapshot through its
 * parents, newest first, a page at a time, with filters.
 *
 * Commits wait in a frontier and leave it highest generation first (then
 * newest), so a commit reached by two paths is listed once, and the
 * frontier is the whole state of the walk: a page's cursor is its frontier,
 * so paging has no depth limit. A page ends at `limit` matches or after
 * examining `budget` commits, whichever comes first; a sparse filter
 * returns short pages with a cursor rather than walking the whole history
 * in one request.
 *
 * Filters: author (the actor, the author a client named, or any author of a
 * group commit), kinds, a time range, a table (Git's history
 * simplification, as `git log -- path`: a commit whose table equals a
 * parent's is not listed and the walk follows that parent only), and first
 * parents only. Compactions add no commits (manifest.ts `layout`); the
 * `compact` commits older versions published are listed only when their
 * kind is asked for. `since` also stops the walk below commits older
 * than it, as Git's does: commits are timed by their writers' clocks. A key
 * filter lists the commits of the entity's history (entity-history.ts),
 * whose cost follows the commits that touched the entity.
 */
import { sameRuns } from '../table/table-version.js';
import { entityVersions, historyStart, type EntityWalk } from './entity-history.js';
import { commitRefOf, type Commit, type Manifest, type ManifestRef } from './manifest.js';
import type { ManifestReader } from './ports.js';
import { originText } from './run-origin.js';
import type { Snapshot } from './snapshot.js';

export type CommitKind = Commit['kind'];

export interface LogFilter {
  author?: string | undefined;
  kinds?: readonly CommitKind[] | undefined;
  /** Milliseconds since the epoch, inclusive. */
  since?: number | undefined;
  until?: number | undefined;
  table?: string | undefined;
  firstParent?: boolean | undefined;
}

export interface LogPage {
  commits: Commit[];
  /** Where the next page starts; empty when the log is done. */
  frontier: ManifestRef[];
}

function matches(c: Commit, f: LogFilter): boolean {
  // Compactions published by older versions were commits; they are listed only when asked for by kind.
  if (c.kind === 'compact' && f.kinds?.includes('compact') !== true) return false;
  if (f.author !== undefined && c.actor !== f.author && c.author !== f.author && !(c.group ?? []).some((g) => g.author === f.author))
    return false;
  if (f.kinds !== undefined && !f.kinds.includes(c.kind)) return false;
  const t = Date.parse(c.time);
  return !(f.since !== undefined && t < f.since) && !(f.until !== undefined && t > f.until);
}

/** Whether two versions hold the same runs of `table` (or both lack it). */
function sameTable(a: Manifest, b: Manifest, table: string): boolean {
  const mine = a.tables[table];
  const theirs = b.tables[table];
  if (mine === undefined || theirs === undefined) return mine === theirs;
  return sameRuns(mine, theirs);
}

/**
 * Under a table filter, Git's history simplification: a commit whose table equals a parent's is not
 * listed and the walk follows that parent only (the first such), so a merge that took the table
 * unchanged from one side passes into that side; a commit that differs from every parent is listed
 * and all its parents are followed. A re-laid version is compared as the commit it re-lays.
 */
async function simplified(a: {
  manifests: ManifestReader;
  m: Manifest;
  parents: Manifest[];
  table: string;
  signal?: AbortSignal | undefined;
}): Promise<{ listed: boolean; follow: Manifest[] }> {
  const { m, parents, table } = a;
  const own = m.layout === undefined ? m : await a.manifests.readManifest(m.layout.of, a.signal);
  const same = parents.find((p) => sameTable(own, p, table));
  if (same !== undefined) return { listed: false, follow: [same] };
  return { listed: parents.length > 0 || own.tables[table] !== undefined, follow: parents };
}

function newer(a: Manifest, b: Manifest): boolean {
  if (a.generation !== b.generation) return a.generation > b.generation;
  if (a.commit.time !== b.commit.time) return a.commit.time > b.commit.time;
  return a.commit.id > b.commit.id;
}

/** One page of the log from `start` (a snapshot's manifest, or a previous page's frontier). */
export async function logPage(a: {
  manifests: ManifestReader;
  start: readonly Manifest[];
  filter?: LogFilter;
  limit: number;
  budget: number;
  signal?: AbortSignal | undefined;
}): Promise<LogPage> {
  const f = a.filter ?? {};
  // Keyed by the version that published each commit: a re-laid head and a path to its commit meet.
  const keyOf = (m: Manifest): string => originText(commitRefOf(m));
  const waiting = new Map<string, Manifest>(a.start.map((m) => [keyOf(m), m]));
  const commits: Commit[] = [];
  for (let examined = 0; waiting.size > 0 && commits.length < a.limit && examined < a.budget; examined++) {
    let m: Manifest | undefined;
    for (const w of waiting.values()) if (m === undefined || newer(w, m)) m = w;
    const c = (m as Manifest).commit;
    waiting.delete(keyOf(m as Manifest));
    const refs = f.firstParent === true ? c.parents.slice(0, 1) : c.parents;
    const parents = await Promise.all(refs.map((p) => a.manifests.readManifest(p, a.signal)));
    const step =
      f.table === undefined
        ? { listed: true, follow: parents }
        : await simplified({ manifests: a.manifests, m: m as Manifest, parents, table: f.table, signal: a.signal });
    if (step.listed && matches(c, f)) commits.push(c);
    if (f.since !== undefined && Date.parse(c.time) < f.since) continue;
    for (const p of step.follow) if (!waiting.has(keyOf(p))) waiting.set(keyOf(p), p);
  }
  return { commits, frontier: [...waiting.values()].map((m) => ({ lineage: m.lineage, version: m.version })) };
}

/** One page of an entity's commits (a key filter), with the log's other filters applied to them. */
export async function entityLogPage(a: {
  walk: EntityWalk;
  start: { head: Snapshot } | { frontier: readonly ManifestRef[] };
  filter?: LogFilter;
  limit: number;
  budget: number;
}): Promise<LogPage> {
  const f = a.filter ?? {};
  const page = await entityVersions({
    walk: a.walk,
    start: await historyStart(a.walk, a.start),
    limit: a.limit,
    budget: a.budget,
    firstParent: f.firstParent,
  });
  return { commits: page.versions.map((v) => v.commit).filter((c) => matches(c, f)), frontier: page.frontier };
}

/** The newest `limit` commits reachable from `snap` (every kind, every path). */
export async function commitLog(
  manifests: ManifestReader,
  snap: Snapshot,
  opts: { limit?: number; signal?: AbortSignal } = {},
): Promise<Commit[]> {
  const limit = opts.limit ?? 50;
  return (await logPage({ manifests, start: [snap.manifest], limit, budget: limit, signal: opts.signal })).commits;
}
