/**
 * Entity history and blame: how one entity changed, and which commit set
 * each of its current properties, at a cost that grows with the commits that
 * touched it rather than with the length of the history.
 *
 * The jump. Every run records a commit from which it was carried with the
 * same newer runs (`origin`, run-origin.ts): a key's newest state in it is
 * the state that commit left, and no commit between changed it. So from a
 * state at X the walk goes straight to the origin C and compares C's state
 * with C's parents'. A compaction or a write that left the row as it was is
 * such a C too, and the walk jumps on from it; compaction is tiered, so a
 * key meets a few compactions, not one per commit.
 *
 * The gaps. A key no run holds was absent since the table's last
 * replacement (`replacedAt`: created, or its runs replaced by a revert, a
 * cherry-pick or a rewrite), unless a compaction of the oldest runs dropped
 * its tombstone since (such runs are marked `dropped`, and so is every
 * compaction of them); the walk goes on from the newest of these. A table
 * with no entry at all (never written, or emptied by a merge that adopted
 * a side that never wrote it) is walked one commit at a time. A table
 * published before origins were recorded is walked one commit at a time,
 * and history stops where the table did not exist.
 *
 * The order. Commits to examine wait in a frontier and leave it highest
 * generation first, so versions come newest first, and a commit reached by
 * two paths is examined once: anything reaching it later would have a
 * higher generation and would have left the frontier before it. That makes
 * the frontier alone a complete cursor.
 *
 * Merges follow Git's history simplification: a merge whose state equals
 * one parent's (the first preferred) follows that parent only and is no
 * version itself; one that differs from every parent is a version (the
 * change against its first parent) and both sides are followed. Blame
 * follows each property separately into the parent that has its value, as
 * Git's blame follows the parent a line came from. `firstParent` keeps
 * history on first parents, where a merge that brought a change is the
 * version.
 */
import { canonicalJson } from '../model/canonical.js';
import { findType } from '../model/schema.js';
import type { Row } from '../model/values.js';
import { locateState } from '../table/table-lookup.js';
import type { RunRef } from '../table/run.js';
import type { Commit, ManifestRef } from './manifest.js';
import { commitRefOf, sameRef } from './manifest.js';
import type { Heads, TableReader } from './ports.js';
import { originOf, originText, parseOrigin } from './run-origin.js';
import type { Snapshot } from './snapshot.js';

/** The entity a walk follows, and the ports it reads through. Commit snapshots only: no pending rows. */
export interface EntityWalk {
  heads: Pick<Heads, 'snapshotAt'>;
  tables: TableReader;
  table: string;
  key: string;
  signal?: AbortSignal | undefined;
}

/** One version: the commit that made it, and the change against that commit's first parent. */
export interface EntityVersion {
  commit: Commit;
  change: 'inserted' | 'updated' | 'deleted';
  before: Row | null;
  after: Row | null;
  /** The properties whose values differ, sorted. */
  changed: string[];
}

/** A commit waiting to be examined, with the entity's state there (null: absent or deleted). */
interface Pending {
  snap: Snapshot;
  row: Row | null;
}

/** A state, and the commit the walk examines for it next (undefined: nothing earlier to find). */
interface Located {
  row: Row | null;
  from: Pending | undefined;
}

/** The entity's state at `snap`, and the commit that set it (or from which to keep looking). */
export async function locateEntity(w: EntityWalk, snap: Snapshot): Promise<Located> {
  if (findType(snap.schema, w.table) === undefined) return { row: null, from: undefined };
  const t = w.tables.table(snap, w.table, w.signal);
  const found = await locateState(t.version, w.key, t.load);
  if (found === undefined) return { row: null, from: await absenceFrom(w, snap, t.version.runs) };
  const row = found.state.tomb ? null : (found.state.props as Row);
  return { row, from: { snap: await originSnapshot(w, snap, found.run), row } };
}

/** Where a state found in `run` at `snap` was set: the run's origin, or `snap` itself for a run without one. */
function originSnapshot(w: EntityWalk, snap: Snapshot, run: RunRef): Promise<Snapshot> | Snapshot {
  const o = originOf(run);
  return o === undefined || sameRef(o, snap.ref) ? snap : w.heads.snapshotAt(o, { signal: w.signal });
}

/**
 * Where the entity's absence at `snap` was set, as far as the runs tell: the newest of the table's
 * last replacement and the compactions that dropped tombstones (`dropped` runs: one may have been
 * its deletion's); `snap` itself when the runs do not tell (a table without an entry, which a merge
 * adopting a side that never wrote it leaves too, or one that predates origins).
 */
async function absenceFrom(w: EntityWalk, snap: Snapshot, runs: readonly RunRef[]): Promise<Pending | undefined> {
  const entry = snap.manifest.tables[w.table];
  if (entry?.replacedAt === undefined || runs.some((r) => r.origin === undefined)) return { snap, row: null };
  const refs = [parseOrigin(entry.replacedAt), ...runs.filter((r) => r.dropped === true).map(originOf)];
  const snaps = await Promise.all(
    refs
      .filter((r): r is ManifestRef => r !== undefined)
      .map((r) => (sameRef(r, snap.ref) ? snap : w.heads.snapshotAt(r, { signal: w.signal }))),
  );
  const newest = snaps.reduce<Snapshot | undefined>((a, b) => (a === undefined || before(b, a) ? b : a), undefined);
  return newest === undefined ? undefined : { snap: newest, row: null };
}

/** Whether two states are the same: both absent, or the same value for every property (a missing property is null, as a row read before a schema added it). */
function sameRow(a: Row | null, b: Row | null): boolean {
  if (a === null || b === null) return a === b;
  return [...Object.keys(a), ...Object.keys(b)].every((p) => sameValue(a[p], b[p]));
}

function sameValue(a: unknown, b: unknown): boolean {
  return canonicalJson(a ?? null) === canonicalJson(b ?? null);
}

/** The entity's state at each parent the walk considers. */
async function parentStates(w: EntityWalk, c: Snapshot, firstParent: boolean): Promise<Located[]> {
  const parents = c.manifest.commit.parents;
  const considered = firstParent ? parents.slice(0, 1) : parents;
  return Promise.all(considered.map(async (p) => locateEntity(w, await w.heads.snapshotAt(p, { signal: w.signal }))));
}

/** Commits to examine, highest generation first (then newest), each once. */
class Frontier<T extends Pending> {
  private readonly items = new Map<string, T>();

  get size(): number {
    return this.items.size;
  }

  /** Add `item` unless its commit waits already; `merge` combines it with the one waiting. */
  add(item: T, merge?: (waiting: T, item: T) => void): void {
    // By the version that published the commit: a re-laid version (a compaction's origin) is its commit.
    const k = originText(commitRefOf(item.snap.manifest));
    const waiting = this.items.get(k);
    if (waiting === undefined) this.items.set(k, item);
    else merge?.(waiting, item);
  }

  pop(): T | undefined {
    let best: T | undefined;
    for (const it of this.items.values()) if (best === undefined || before(it.snap, best.snap)) best = it;
    if (best !== undefined) this.items.delete(originText(commitRefOf(best.snap.manifest)));
    return best;
  }

  refs(): ManifestRef[] {
    return [...this.items.values()].map((i) => i.snap.ref);
  }
}

function before(a: Snapshot, b: Snapshot): boolean {
  const ma = a.manifest;
  const mb = b.manifest;
  if (ma.generation !== mb.generation) return ma.generation > mb.generation;
  if (ma.commit.time !== mb.commit.time) return ma.commit.time > mb.commit.time;
  return ma.commit.id > mb.commit.id;
}

function versionOf(c: Snapshot, before: Row | null, after: Row | null): EntityVersion {
  const change = before === null ? 'inserted' : after === null ? 'deleted' : 'updated';
  const props = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
  const changed = props.filter((p) => !sameValue(before?.[p], after?.[p]));
  return { commit: c.manifest.commit, change, before, after, changed };
}

/** Where a history walk starts: the commit that set the entity's state at `head`, or where a previous page stopped. */
export async function historyStart(w: EntityWalk, from: { head: Snapshot } | { frontier: readonly ManifestRef[] }): Promise<Snapshot[]> {
  if ('head' in from) {
    const l = await locateEntity(w, from.head);
    return l.from === undefined ? [] : [l.from.snap];
  }
  return Promise.all(from.frontier.map((r) => w.heads.snapshotAt(r, { signal: w.signal })));
}

/**
 * The next versions of the entity, newest first: at most `limit`, after examining at most `budget`
 * commits. `frontier` is where to go on (empty when the history is done).
 */
export async function entityVersions(a: {
  walk: EntityWalk;
  start: readonly Snapshot[];
  limit: number;
  budget: number;
  firstParent?: boolean | undefined;
}): Promise<{ versions: EntityVersion[]; frontier: ManifestRef[] }> {
  const { walk: w, limit, budget } = a;
  const frontier = new Frontier<Pending>();
  for (const snap of a.start) frontier.add({ snap, row: (await locateEntity(w, snap)).row });
  const versions: EntityVersion[] = [];
  for (let examined = 0; frontier.size > 0 && versions.length < limit && examined < budget; examined++) {
    const c = frontier.pop() as Pending;
    const parents = await parentStates(w, c.snap, a.firstParent === true);
    const same = parents.find((p) => sameRow(p.row, c.row));
    const follow = same !== undefined ? [same] : parents;
    if (same === undefined && !(parents.length === 0 && c.row === null)) versions.push(versionOf(c.snap, parents[0]?.row ?? null, c.row));
    for (const p of follow) if (p.from !== undefined) frontier.add(p.from);
  }
  return { versions, frontier: frontier.refs() };
}

/** Who set one property's current value. */
export interface PropertyBlame {
  property: string;
  value: unknown;
  /** The commit that set the value; null when the walk stopped (`budget`) before finding it. */
  commit: Commit | null;
}

interface Blaming extends Pending {
  props: Set<string>;
}

/**
 * For each property of the entity's row at `head`, the commit that last set its current value,
 * following each property into the parent of a merge that had the value. Undefined when the entity
 * does not exist at `head`.
 */
export async function entityBlame(a: {
  walk: EntityWalk;
  head: Snapshot;
  budget: number;
}): Promise<{ row: Row; properties: PropertyBlame[]; complete: boolean } | undefined> {
  const { walk: w } = a;
  const at = await locateEntity(w, a.head);
  if (at.row === null || at.from === undefined) return undefined;
  const row = at.row;
  const blamed = new Map<string, Commit | null>();
  const frontier = new Frontier<Blaming>();
  const union = (waiting: Blaming, item: Blaming): void => {
    for (const p of item.props) waiting.props.add(p);
  };
  frontier.add({ ...at.from, props: new Set(Object.keys(row)) });
  for (let examined = 0; frontier.size > 0 && examined < a.budget; examined++) {
    const c = frontier.pop() as Blaming;
    const parents = await parentStates(w, c.snap, false);
    for (const p of c.props) {
      const source = parents.find((l) => l.row !== null && sameValue(l.row[p], row[p]));
      if (source?.from === undefined) blamed.set(p, c.snap.manifest.commit);
      else frontier.add({ ...source.from, props: new Set([p]) }, union);
    }
  }
  const properties = Object.keys(row)
    .sort()
    .map((p) => ({ property: p, value: row[p], commit: blamed.get(p) ?? null }));
  return { row, properties, complete: frontier.size === 0 };
}
