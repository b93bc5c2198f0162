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
 * group commit), kinds, a time range, a table (commits whose change to the
 * table's runs differs from their first parent's; compactions only when
 * their kind is asked for, since they rewrite runs without changing rows),
 * and first parents only. `since` also stops the walk below commits older
 * than it, as Git's does: commits are timed by their writers' clocks. A key
 * filter lists the commits of the entity's history (entity-history.ts),
 * whose cost follows the commits that touched the entity.
 */
import { sameRuns } from '../table/table-version.js';
import { entityVersions, historyStart, type EntityWalk } from './entity-history.js';
import type { Commit, Manifest, ManifestRef } from './manifest.js';
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
  if (f.author !== undefined && c.actor !== f.author && c.author !== f.author && !(c.group ?? []).some((g) => g.author === f.author))
    return false;
  if (f.kinds !== undefined && !f.kinds.includes(c.kind)) return false;
  const t = Date.parse(c.time);
  return !(f.since !== undefined && t < f.since) && !(f.until !== undefined && t > f.until);
}

function touchesTable(m: Manifest, firstParent: Manifest | undefined, f: LogFilter & { table: string }): boolean {
  if (m.commit.kind === 'compact' && f.kinds?.includes('compact') !== true) return false;
  const mine = m.tables[f.table];
  const theirs = firstParent?.tables[f.table];
  if (mine === undefined || theirs === undefined) return mine !== theirs;
  return !sameRuns(mine, theirs);
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
  const waiting = new Map<string, Manifest>(a.start.map((m) => [originText(m), m]));
  const commits: Commit[] = [];
  for (let examined = 0; waiting.size > 0 && commits.length < a.limit && examined < a.budget; examined++) {
    let m: Manifest | undefined;
    for (const w of waiting.values()) if (m === undefined || newer(w, m)) m = w;
    const c = (m as Manifest).commit;
    waiting.delete(originText(m as Manifest));
    const refs = f.firstParent === true ? c.parents.slice(0, 1) : c.parents;
    const parents = await Promise.all(refs.map((p) => a.manifests.readManifest(p, a.signal)));
    const inTable = f.table === undefined || touchesTable(m as Manifest, parents[0], { ...f, table: f.table });
    if (inTable && matches(c, f)) commits.push(c);
    if (f.since !== undefined && Date.parse(c.time) < f.since) continue;
    for (const p of parents) if (!waiting.has(originText(p))) waiting.set(originText(p), p);
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
