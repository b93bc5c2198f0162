/**
 * Run lists stored as a shared base and an inline tail.
 *
 * A table written one row at a time gains a run per write, and until
 * compaction catches up its manifest entry names every one of them: each
 * one-row commit used to copy the whole list (about 250 bytes a run), so a
 * table with a hundred runs cost 25 KB of metadata per write.
 *
 * A list longer than `inline` runs is stored as a *base*, an immutable
 * run-list part (`parts/<id>.json`) holding its oldest runs, and a *tail*,
 * the newest runs, inline in the entry. Runs are appended at the end of a
 * list, so the next commit keeps the same base and adds one run to the
 * tail. When the tail passes `tailLimit(n)` runs, or a change (a compaction)
 * touched a run inside the base, the commit writes a new base holding the
 * whole list and an empty tail.
 *
 * Cost. With `t` the tail limit and `n` runs of `a` bytes, a commit stores
 * on average `a·t/2` bytes of tail plus `a·n/t` bytes of base (one base of
 * `a·n` every `t` commits); `t = √(2n)` minimizes the sum, so a commit costs
 * about `a·√(2n)` bytes instead of `a·n`. A cold reader pays one more read
 * per table with a base (in parallel across tables); the base is immutable,
 * so a process reads it once for every manifest that shares it.
 *
 * Reuse: a new entry may name only the base its table's entry names in the
 * manifest the publication builds on (its parent), when that base holds the
 * first runs of the new list (the same refs, or equal ones: a publication
 * restamps refs it carries), or a base it writes itself. The parent is in
 * the new manifest's history, so whatever it names lives as long as the new
 * manifest does; a base remembered from anywhere else (a lost publication,
 * a branch since deleted, another graph holding the same runs) might be
 * gone by the time it is named. Each graph's `RunListParts` records which
 * layout each entry it read or wrote has (see `layoutOf` and the codec).
 * Decisions here are pure apart from that record; reading and writing parts
 * is the codec's and the repository's.
 */
import { canonicalJson } from '../model/canonical.js';
import type { StoredTableEntry, TableEntry } from './manifest.js';
import type { RunRef } from '../table/run.js';

/** Longest run list a manifest keeps wholly inline: most tables, compacted, stay one object. */
export const INLINE_RUNS = 8;

/** The most runs a tail over a base may hold for a list of `n`: √(2n), at least 4 (see the header). */
export function tailLimit(n: number): number {
  return Math.max(4, Math.round(Math.sqrt(2 * n)));
}

/** A run-list part: the oldest runs of a list, under `parts/<id>.json`. */
export interface RunListPart {
  readonly id: string;
  readonly refs: readonly RunRef[];
  /** Whether the part is known to be written. */
  stored: boolean;
}

/** How an entry's runs are stored: all inline, or a base part and the tail after it. */
export interface RunLayout {
  base?: RunListPart;
  tail: readonly RunRef[];
}

/** The same run ref: one object, or the same run with the same stamps (a ref is what the base stores of it). */
function sameRef(a: RunRef, b: RunRef): boolean {
  return a === b || (a.key === b.key && canonicalJson(a) === canonicalJson(b));
}

/** Whether `base` holds exactly the first runs of `runs`. */
function isPrefix(base: RunListPart, runs: readonly RunRef[]): boolean {
  if (base.refs.length > runs.length) return false;
  for (let i = 0; i < base.refs.length; i++) if (!sameRef(base.refs[i] as RunRef, runs[i] as RunRef)) return false;
  return true;
}

/** The stored form of `entry` under `layout`: its tail inline, the base named. */
export function storedEntry(entry: TableEntry, layout: RunLayout): StoredTableEntry {
  const { base, tail } = layout;
  if (base === undefined) return entry;
  return { ...entry, runs: [...tail], runBase: { part: base.id, count: base.refs.length, last: (base.refs.at(-1) as RunRef).key } };
}

/** The run-list parts one graph read or wrote: the layout each of its stored or storing entries has. */
export class RunListParts {
  /** The layout chosen for an entry (or read with it), so the parts written and the manifest encoded agree. */
  private readonly layouts = new WeakMap<TableEntry, RunLayout>();

  /**
   * How `entry`'s runs are stored, decided once per entry object: inline when
   * short; else the base `parent` (the same table's entry in the manifest
   * this one builds on) names, if it holds the list's first runs and the tail
   * after it stays within `tailLimit`; else a new base holding the whole list
   * (named by `newId`, not yet stored).
   */
  layoutOf(entry: TableEntry, o: { inline: number; newId: () => string; parent?: TableEntry | undefined }): RunLayout {
    const known = this.layouts.get(entry);
    if (known !== undefined) return known;
    const runs = entry.runs;
    const inherited = o.parent === undefined ? undefined : this.layouts.get(o.parent)?.base;
    let layout: RunLayout;
    if (runs.length <= o.inline) layout = { tail: runs };
    else if (inherited !== undefined && runs.length - inherited.refs.length <= tailLimit(runs.length) && isPrefix(inherited, runs))
      layout = { base: inherited, tail: runs.slice(inherited.refs.length) };
    else layout = { base: { id: o.newId(), refs: runs, stored: false }, tail: [] };
    this.layouts.set(entry, layout);
    return layout;
  }

  /**
   * The layout a publication chose for `entry` (see `layoutOf`). A manifest
   * is written after its parts, so with `stored` its base must be written by
   * now; a tree part may be written beside the base it names.
   */
  chosen(entry: TableEntry, o: { stored: boolean }): RunLayout {
    const layout = this.layouts.get(entry);
    if (layout === undefined) throw new Error('run list encoded before its layout was chosen');
    if (o.stored && layout.base !== undefined && !layout.base.stored) throw new Error('run list names a part that is not written');
    return layout;
  }

  /**
   * The entry a stored one stands for: its base's runs, then its own. Returns
   * a problem (a string) when the base does not hold what the entry says.
   */
  expand(stored: StoredTableEntry, base: RunListPart | undefined): TableEntry | string {
    const { runBase, ...rest } = stored;
    if (runBase === undefined) return rest;
    if (base === undefined) return `names run-list part ${runBase.part}, which was not read`;
    if (base.refs.length !== runBase.count || base.refs.at(-1)?.key !== runBase.last)
      return `names ${runBase.count} runs ending at ${runBase.last} in part ${runBase.part}, which holds ${base.refs.length}`;
    const entry: TableEntry = { ...rest, runs: [...base.refs, ...rest.runs] };
    // The entry as stored: re-publishing it unchanged, or building on it, names the same base.
    this.layouts.set(entry, { base, tail: rest.runs });
    return entry;
  }

  /**
   * The run-list part an entry's stored form names, for an entry that was
   * read or published (undefined for one never stored, or stored inline): GC
   * keeps the part as long as a manifest holding the entry.
   */
  namedBy(entry: TableEntry): string | undefined {
    return this.layouts.get(entry)?.base?.id;
  }
}
