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
 * Reuse: each graph's `RunListParts` remembers the bases it read or wrote
 * with the run refs they hold, and a list whose first runs are those refs
 * (the same objects, or equal ones: a publication restamps refs it carries)
 * may name one. The memory is per graph, never per process: two graphs may
 * hold the same run keys (one copied from the other), and a base stored in
 * one is not stored in the other. A base is named only once stored, or by
 * the publication storing it (see `layoutOf` and the codec). Decisions here
 * are pure apart from that memory; reading and writing parts is the codec's
 * and the repository's.
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

/** A few bases per first run are enough: each new base holds the whole list and supersedes the older ones. */
const BASES_PER_RUN = 4;
/** First runs remembered, oldest evicted first: a graph writing many tables keeps its recent bases. */
const REMEMBERED_FIRST_RUNS = 10_000;

/** The same run ref: one object, or the same run with the same stamps (a ref is what the base stores of it). */
function sameRef(a: RunRef, b: RunRef): boolean {
  return a === b || (a.key === b.key && canonicalJson(a as never) === canonicalJson(b as never));
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

/** The run-list parts one graph knows, and the layout each of its stored or storing entries has. */
export class RunListParts {
  /** Bases by their first run's key, newest last: the candidates a list starting with that run may name. */
  private readonly byFirst = new Map<string, RunListPart[]>();
  /** The layout chosen for an entry, so the parts written and the manifest encoded agree. */
  private readonly layouts = new WeakMap<TableEntry, RunLayout>();

  /** Remember `part` as a base lists starting with its runs may name. */
  remember(part: RunListPart): void {
    const first = part.refs[0];
    if (first === undefined) return;
    const known = this.byFirst.get(first.key) ?? [];
    if (known.includes(part)) return;
    known.push(part);
    if (known.length > BASES_PER_RUN) known.shift();
    this.byFirst.delete(first.key);
    this.byFirst.set(first.key, known);
    if (this.byFirst.size > REMEMBERED_FIRST_RUNS) this.byFirst.delete(this.byFirst.keys().next().value as string);
  }

  /**
   * How `entry`'s runs are stored, decided once per entry object: inline when
   * short; else the longest remembered base its list starts with, while the
   * tail after it stays within `tailLimit`; else a new base holding the whole
   * list (named by `newId`, not yet stored).
   */
  layoutOf(entry: TableEntry, o: { inline: number; newId: () => string }): RunLayout {
    const known = this.layouts.get(entry);
    if (known !== undefined) return known;
    const runs = entry.runs;
    let layout: RunLayout;
    if (runs.length <= o.inline) layout = { tail: runs };
    else {
      let best: RunListPart | undefined;
      for (const b of this.byFirst.get((runs[0] as RunRef).key) ?? [])
        if (isPrefix(b, runs) && (best === undefined || b.refs.length > best.refs.length)) best = b;
      if (best !== undefined && runs.length - best.refs.length <= tailLimit(runs.length))
        layout = { base: best, tail: runs.slice(best.refs.length) };
      else {
        const base: RunListPart = { id: o.newId(), refs: runs, stored: false };
        this.remember(base);
        layout = { base, tail: [] };
      }
    }
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
    // The entry as stored: re-publishing it unchanged names the same base.
    this.layouts.set(entry, { base, tail: rest.runs });
    this.remember(base);
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
