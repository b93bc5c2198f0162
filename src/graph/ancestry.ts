/**
 * Ancestry: for each lineage in a snapshot's history, the highest version it
 * contains. A lineage's versions form a chain, so containing (L, v) implies
 * containing every (L, v' <= v), and "is X an ancestor of Y" and the merge
 * base candidates are answered from two ancestries without walking history.
 *
 * The map grows by one lineage per branch ever merged, so it is a part tree
 * (model/part-tree.ts) and never a vector copied into every manifest: a
 * write leaves it untouched (a manifest's own lineage and version are kept
 * beside the tree, not in it), and a merge shares every node the two sides
 * share, writing one path. Lookups are in memory: a manifest is read with
 * its whole tree, whose nodes are shared between manifests by part id.
 */
import {
  emptyTree,
  entriesOf,
  getEntry,
  mergeTrees,
  sharedEntries,
  treeOf,
  withChanges,
  type PartNode,
  type PartTreeOptions,
} from '../model/part-tree.js';
/** A published manifest's place: its lineage and version there (manifest.ts validates the stored form). */
export interface ManifestRef {
  lineage: string;
  version: number;
}

/** Leaves of the ancestry tree: about a hundred lineages each. */
export const ANCESTRY_PART_BYTES = 4096;

export const ancestryTreeOptions = (limit = ANCESTRY_PART_BYTES): PartTreeOptions<number> => ({
  limit,
  sizeOf: (k, v) => k.length + String(v).length + 4,
  // Each merge adds a lineage to one leaf: it writes the entries that leaf gained since it was last written whole.
  deltaLeaves: true,
});

export class Ancestry {
  private constructor(
    /** Every lineage but `own`'s newest entry (which may also be in the tree, lower). */
    readonly tree: PartNode<number>,
    /** The snapshot's own place, when it is a manifest (a virtual base has none). */
    readonly own: ManifestRef | undefined,
    private readonly options: PartTreeOptions<number>,
  ) {}

  /** An ancestry from a plain map (older manifests, tests). */
  static of(record: Record<string, number>, own?: ManifestRef, options = ancestryTreeOptions()): Ancestry {
    return new Ancestry(treeOf(Object.entries(record), options), own, options);
  }

  static fromTree(tree: PartNode<number>, own: ManifestRef | undefined, options = ancestryTreeOptions()): Ancestry {
    return new Ancestry(tree, own, options);
  }

  static readonly EMPTY = new Ancestry(emptyTree(), undefined, ancestryTreeOptions());

  /** The highest version of `lineage` contained (0 when none). */
  get(lineage: string): number {
    const inTree = getEntry(this.tree, lineage) ?? 0;
    return this.own?.lineage === lineage ? Math.max(inTree, this.own.version) : inTree;
  }

  /** Does this ancestry contain the manifest `ref`? */
  contains(ref: ManifestRef): boolean {
    return this.get(ref.lineage) >= ref.version;
  }

  /** Every lineage with its highest contained version. */
  *entries(): Generator<[string, number]> {
    for (const [l, v] of entriesOf(this.tree)) yield [l, l === this.own?.lineage ? Math.max(v, this.own.version) : v];
    if (this.own !== undefined && getEntry(this.tree, this.own.lineage) === undefined) yield [this.own.lineage, this.own.version];
  }

  /**
   * Every lineage both this and `other` contain, with both versions, except
   * where the two share a subtree with one of `covers` (each of whose
   * versions there is then at least as high: the caller has read it).
   */
  *sharedWith(other: Ancestry, covers: readonly Ancestry[] = []): Generator<[string, number, number]> {
    const owns = new Set([this.own?.lineage, other.own?.lineage].filter((l): l is string => l !== undefined));
    // Own lineages live beside the trees (a tree may hold a lower, stale entry for them).
    for (const [l, va, vb] of sharedEntries(
      this.tree,
      other.tree,
      covers.map((c) => c.tree),
    ))
      if (!owns.has(l)) yield [l, va, vb];
    for (const l of owns) {
      const [va, vb] = [this.get(l), other.get(l)];
      if (va > 0 && vb > 0) yield [l, va, vb];
    }
  }

  get size(): number {
    return this.tree.count + (this.own !== undefined && getEntry(this.tree, this.own.lineage) === undefined ? 1 : 0);
  }

  /** The tree with `own` folded in: what another snapshot inherits from this one. */
  private inherited(): PartNode<number> {
    if (this.own === undefined || getEntry(this.tree, this.own.lineage) === this.own.version) return this.tree;
    return withChanges(
      this.tree,
      new Map([[this.own.lineage, Math.max(this.own.version, getEntry(this.tree, this.own.lineage) ?? 0)]]),
      this.options,
    );
  }

  /**
   * The ancestry of the version `own` whose parents are `first` and maybe
   * `second`. A parent on `own`'s lineage contributes only its tree, so a
   * write on a branch reuses its parent's tree as it is.
   */
  static next(own: ManifestRef, first: Ancestry, second?: Ancestry): Ancestry {
    const fromFirst = first.own?.lineage === own.lineage ? first.tree : first.inherited();
    const tree =
      second === undefined ? fromFirst : mergeTrees({ a: fromFirst, b: second.inherited(), combine: Math.max, o: first.options });
    return new Ancestry(tree, own, first.options);
  }

  /** Everything either contains (a virtual base's ancestry). */
  static union(a: Ancestry, b: Ancestry): Ancestry {
    return new Ancestry(mergeTrees({ a: a.inherited(), b: b.inherited(), combine: Math.max, o: a.options }), undefined, a.options);
  }
}
