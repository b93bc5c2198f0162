/**
 * Part trees: a persistent map from string keys to JSON values whose stored
 * form costs each change a bounded number of bytes, whatever the map's size.
 *
 * Shape. A node is a leaf holding its entries while they encode to at most
 * `limit` bytes (or while it holds one entry, which cannot be split);
 * otherwise it is an inner node with up to 16 children, one per hex digit of
 * the entry keys' hashes at the node's depth. The shape is a function of the
 * entries and the limit alone (an inner node whose entries fit again folds
 * back into a leaf), so two trees holding the same map have the same shape.
 *
 * Sharing. Nodes are immutable. A change copies the path from the root to
 * the leaves it touches and shares every other node with the tree it came
 * from; a stored tree writes only the nodes it does not share. The root
 * rides inside the object that owns the tree (a manifest), so a small map
 * is one object, and a large one writes its root plus about log16(n) nodes
 * of at most `limit` bytes per change. Merging two trees descends only
 * where they differ: a subtree they share is taken whole.
 *
 * Storage is not done here: a node records the id it is stored under and
 * whether that store has completed, and `unstoredNodes` lists what a
 * publication must write first. The codec reads and writes node bodies.
 */
import { createHash } from 'node:crypto';

/** A node of a part tree. Never mutated once built. */
export interface PartNode<V> {
  readonly depth: number;
  /** A leaf's entries; undefined for an inner node. */
  readonly entries: ReadonlyMap<string, V> | undefined;
  /** An inner node's children by hex digit; undefined for a leaf. */
  readonly children: ReadonlyMap<string, PartNode<V>> | undefined;
  /** Encoded bytes of every entry below. */
  readonly bytes: number;
  readonly count: number;
  /** Where this node is stored as a part (never set on a root, which rides in its owner). */
  id: string | undefined;
  /** Whether the part named `id` is known to be written. */
  stored: boolean;
  /**
   * For a leaf stored as a delta (see `PartTreeOptions.deltaLeaves`): the stored full leaf at the
   * same place whose entries this one extends. Its body then holds only the entries that differ.
   */
  readonly base?: PartNode<V> | undefined;
}

/** How a tree sizes and compares its values. */
export interface PartTreeOptions<V> {
  /** Largest encoded leaf before it splits. */
  limit: number;
  /**
   * Largest root leaf (default `limit`): the root rides in its owner, so a
   * larger one keeps a mid-sized map in one object, read in one round trip,
   * at the price of writing it whole on every change.
   */
  rootLimit?: number;
  /** Encoded bytes of one entry. Default: key plus JSON text. */
  sizeOf?: (key: string, value: V) => number;
  /** Whether two values are the same (no change). Default: ===. */
  equal?: (a: V, b: V) => boolean;
  /**
   * Store a changed leaf below the root as the entries that differ from the stored full leaf it
   * came from, while those fit a quarter of `limit` and none was removed. A map that gains an
   * entry per change (the ancestry: a lineage per merged branch) then writes that entry and the
   * few before it, not the whole leaf; the leaf is written whole again once its delta passes the
   * bound. A delta always refers to a full leaf, so a reader reads at most two parts per leaf
   * (the base after the delta that names it; a process reads each part once). Values are
   * compared with ===.
   */
  deltaLeaves?: boolean;
}

/**
 * The stored body of a node: `e` for a leaf's entries, `c` for an inner node's children's part ids.
 * A delta leaf names its base in `b`, and `e` holds only the entries that differ from it.
 */
export interface PartBody<V> {
  d: number;
  e?: Record<string, V>;
  c?: Record<string, string>;
  b?: string;
}

const MAX_DEPTH = 32;
const DIGITS = '0123456789abcdef';

/** Recent key hashes: the same lineages and table names are looked up in every merge. */
const hashes = new Map<string, string>();
const HASH_MEMO_ENTRIES = 65_536;

function hashOf(key: string): string {
  let h = hashes.get(key);
  if (h === undefined) {
    if (hashes.size >= HASH_MEMO_ENTRIES) hashes.clear();
    h = createHash('sha1').update(key).digest('hex');
    hashes.set(key, h);
  }
  return h;
}

/** The hex digit that places `key` among a node's children at `depth`. */
function digitAt(key: string, depth: number): string {
  return hashOf(key)[depth] as string;
}

const defaultSize = (key: string, value: unknown): number => key.length + JSON.stringify(value).length + 4;

function sizer<V>(o: PartTreeOptions<V>): (key: string, value: V) => number {
  return o.sizeOf ?? defaultSize;
}

const limitAt = <V>(depth: number, o: PartTreeOptions<V>): number => (depth === 0 ? (o.rootLimit ?? o.limit) : o.limit);

export function emptyTree<V>(depth = 0): PartNode<V> {
  return { depth, entries: new Map(), children: undefined, bytes: 0, count: 0, id: undefined, stored: false };
}

/** A leaf or inner node over `entries` at `depth`, shaped by the rule above. */
function build<V>(entries: Map<string, V>, depth: number, o: PartTreeOptions<V>): PartNode<V> {
  const size = sizer(o);
  let bytes = 0;
  for (const [k, v] of entries) bytes += size(k, v);
  if (bytes <= limitAt(depth, o) || entries.size <= 1 || depth >= MAX_DEPTH) {
    return { depth, entries, children: undefined, bytes, count: entries.size, id: undefined, stored: false };
  }
  const groups = new Map<string, Map<string, V>>();
  for (const [k, v] of entries) {
    const d = digitAt(k, depth);
    const g = groups.get(d) ?? new Map<string, V>();
    groups.set(d, g);
    g.set(k, v);
  }
  const children = new Map<string, PartNode<V>>();
  for (const d of DIGITS) {
    const g = groups.get(d);
    if (g !== undefined) children.set(d, build(g, depth + 1, o));
  }
  return { depth, entries: undefined, children, bytes, count: entries.size, id: undefined, stored: false };
}

/** A tree holding `record`. */
export function treeOf<V>(record: Iterable<[string, V]>, o: PartTreeOptions<V>): PartNode<V> {
  return build(new Map(record), 0, o);
}

export function getEntry<V>(node: PartNode<V>, key: string): V | undefined {
  let n: PartNode<V> | undefined = node;
  let hash: string | undefined;
  while (n !== undefined) {
    if (n.entries !== undefined) return n.entries.get(key);
    hash ??= hashOf(key);
    n = n.children?.get(hash[n.depth] as string);
  }
  return undefined;
}

/** Every entry, in no particular order. */
export function* entriesOf<V>(node: PartNode<V>): Generator<[string, V]> {
  if (node.entries !== undefined) yield* node.entries;
  else for (const c of node.children?.values() ?? []) yield* entriesOf(c);
}

/**
 * The tree with `changes` applied (a value sets, undefined deletes). Nodes
 * no change reaches are shared; a change that changes nothing returns the
 * node itself, so its stored part is reused.
 */
export function withChanges<V>(node: PartNode<V>, changes: ReadonlyMap<string, V | undefined>, o: PartTreeOptions<V>): PartNode<V> {
  if (changes.size === 0) return node;
  const equal = o.equal ?? ((a: V, b: V) => a === b);
  if (node.entries !== undefined) {
    let next: Map<string, V> | undefined;
    for (const [k, v] of changes) {
      const old = node.entries.get(k);
      if (v === undefined ? old === undefined : old !== undefined && equal(old, v)) continue;
      next ??= new Map(node.entries);
      if (v === undefined) next.delete(k);
      else next.set(k, v);
    }
    return next === undefined ? node : withBase(build(next, node.depth, o), node, o);
  }
  const byDigit = new Map<string, Map<string, V | undefined>>();
  for (const [k, v] of changes) {
    const d = digitAt(k, node.depth);
    const g = byDigit.get(d) ?? new Map<string, V | undefined>();
    byDigit.set(d, g);
    g.set(k, v);
  }
  let children: Map<string, PartNode<V>> | undefined;
  for (const [d, g] of byDigit) {
    const old = node.children?.get(d) ?? emptyTree<V>(node.depth + 1);
    const next = withChanges(old, g, o);
    if (next === old) continue;
    children ??= new Map(node.children);
    if (next.count === 0) children.delete(d);
    else children.set(d, next);
  }
  if (children === undefined) return node;
  return inner(children, node.depth, o);
}

/**
 * `next` (changed from `from`) as a delta over the full leaf `from` is or extends, when the options
 * ask for delta leaves and the delta is small enough; otherwise `next` as it is, a full leaf.
 */
function withBase<V>(next: PartNode<V>, from: PartNode<V>, o: PartTreeOptions<V>): PartNode<V> {
  if (o.deltaLeaves !== true || next.entries === undefined || next.depth === 0) return next;
  const base = from.base ?? (from.stored && from.id !== undefined ? from : undefined);
  if (base?.entries === undefined || base.id === undefined) return next;
  const delta = leafDelta(next.entries, base.entries);
  if (delta === undefined) return next;
  const size = sizer(o);
  let bytes = 0;
  for (const [k, v] of delta) bytes += size(k, v);
  return bytes <= o.limit / 4 ? { ...next, base } : next;
}

/** The entries of `leaf` that differ from `base` (values compared with ===); undefined when `leaf` lacks one of `base`'s keys. */
function leafDelta<V>(leaf: ReadonlyMap<string, V>, base: ReadonlyMap<string, V>): Map<string, V> | undefined {
  for (const k of base.keys()) if (!leaf.has(k)) return undefined;
  const delta = new Map<string, V>();
  for (const [k, v] of leaf) if (base.get(k) !== v) delta.set(k, v);
  return delta;
}

/** Entry bytes and count below a set of children. */
function totals<V>(children: ReadonlyMap<string, PartNode<V>>): { bytes: number; count: number } {
  let bytes = 0;
  let count = 0;
  for (const c of children.values()) {
    bytes += c.bytes;
    count += c.count;
  }
  return { bytes, count };
}

/** An inner node over `children`, folded back into a leaf when its entries fit one. */
function inner<V>(children: Map<string, PartNode<V>>, depth: number, o: PartTreeOptions<V>): PartNode<V> {
  const { bytes, count } = totals(children);
  if (bytes <= limitAt(depth, o) || count <= 1) {
    const all = new Map<string, V>();
    for (const c of children.values()) for (const [k, v] of entriesOf(c)) all.set(k, v);
    return build(all, depth, o);
  }
  const sorted = new Map([...children].sort(([a], [b]) => (a < b ? -1 : 1)));
  return { depth, entries: undefined, children: sorted, bytes, count, id: undefined, stored: false };
}

/** The same node, in memory or as the same stored part. */
const sameNode = <V>(x: PartNode<V>, y: PartNode<V>): boolean => x === y || (x.id !== undefined && x.id === y.id);

/**
 * Both trees' entries, with `combine` choosing where both hold a key. Shared
 * subtrees (the same node, or the same stored part) are taken whole, so
 * merging two trees that differ in a few keys costs those keys' paths.
 */
export function mergeTrees<V>(m: { a: PartNode<V>; b: PartNode<V>; combine: (x: V, y: V) => V; o: PartTreeOptions<V> }): PartNode<V> {
  const { a, b, combine, o } = m;
  if (sameNode(a, b) || b.count === 0) return a;
  if (a.count === 0) return b;
  if (a.children !== undefined && b.children !== undefined) {
    const children = new Map(a.children);
    let changed = false;
    for (const [d, bc] of b.children) {
      const ac = a.children.get(d);
      const next = ac === undefined ? bc : mergeTrees({ a: ac, b: bc, combine, o });
      if (next !== ac) {
        children.set(d, next);
        changed = true;
      }
    }
    return changed ? inner(children, a.depth, o) : a;
  }
  // One side is a leaf (at most `limit` bytes of entries): apply it to the other.
  const [big, small, smallFirst] = a.entries !== undefined ? [b, a, true] : [a, b, false];
  const changes = new Map<string, V>();
  for (const [k, sv] of entriesOf(small)) {
    const bv = getEntry(big, k);
    changes.set(k, bv === undefined ? sv : smallFirst ? combine(sv, bv) : combine(bv, sv));
  }
  return withChanges(big, changes, o);
}

/**
 * Every key both `a` and `b` hold, with both values, except under a subtree
 * that `a` and `b` share with one of `covers` at the same place: the caller
 * already knows everything there. Trees that differ in a few keys (a branch
 * and the trunk it forked from) cost those keys' paths, not their size.
 */
export function* sharedEntries<V>(a: PartNode<V>, b: PartNode<V>, covers: readonly PartNode<V>[] = []): Generator<[string, V, V]> {
  if (a.count === 0 || b.count === 0) return;
  if (sameNode(a, b) && covers.some((c) => sameNode(c, a))) return;
  if (a.children !== undefined && b.children !== undefined) {
    for (const [d, ac] of a.children) {
      const bc = b.children.get(d);
      if (bc === undefined) continue;
      // Covers that are leaves here cannot be the same node as anything below: they drop out.
      const below = covers.flatMap((c) => c.children?.get(d) ?? []);
      yield* sharedEntries(ac, bc, below);
    }
    return;
  }
  // One side is a leaf (at most `limit` bytes of entries): look its keys up in the other.
  const aIsLeaf = a.entries !== undefined;
  for (const [k, v] of entriesOf(aIsLeaf ? a : b)) {
    const w = getEntry(aIsLeaf ? b : a, k);
    if (w !== undefined) yield aIsLeaf ? [k, v, w] : [k, w, v];
  }
}

/**
 * The nodes below `root` a publication must write before the object that
 * holds the root: those not known to be stored, each given an id (kept
 * across attempts, so a retried write lands on the same key), children
 * before parents.
 */
export function unstoredNodes<V>(root: PartNode<V>, newId: () => string): PartNode<V>[] {
  const out: PartNode<V>[] = [];
  const visit = (n: PartNode<V>): void => {
    for (const c of n.children?.values() ?? []) {
      if (c.stored) continue;
      visit(c);
      c.id ??= newId();
      out.push(c);
    }
  };
  visit(root);
  return out;
}

const sortedRecord = <V>(entries: Iterable<[string, V]>): Record<string, V> =>
  Object.fromEntries([...entries].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/** A node's stored body; its children must have ids (see unstoredNodes). */
export function bodyOf<V>(node: PartNode<V>): PartBody<V> {
  if (node.entries !== undefined) {
    const base = node.base;
    const delta = base?.entries === undefined ? undefined : leafDelta(node.entries, base.entries);
    if (base?.id !== undefined && delta !== undefined) return { d: node.depth, b: base.id, e: sortedRecord(delta) };
    return { d: node.depth, e: sortedRecord(node.entries) };
  }
  const c: Record<string, string> = {};
  for (const [d, child] of node.children ?? []) {
    if (child.id === undefined) throw new Error('part tree child has no id');
    c[d] = child.id;
  }
  return { d: node.depth, c };
}

/**
 * A node from its stored body and its loaded children, or a reason it is
 * not a node of this tree at `depth` (a key on the wrong path, a depth that
 * does not match, an empty inner node): the caller reports it as corrupt.
 */
export function nodeOf<V>(a: {
  body: PartBody<V>;
  depth: number;
  children?: ReadonlyMap<string, PartNode<V>> | undefined;
  o: PartTreeOptions<V>;
  path: string;
  /** A delta leaf's base, loaded (see `PartBody.b`). */
  base?: PartNode<V> | undefined;
}): PartNode<V> | string {
  const { body, depth, children, o, path, base } = a;
  if (body.d !== depth) return `part at depth ${body.d} where depth ${depth} belongs`;
  if ((body.e === undefined) === (body.c === undefined)) return 'part is neither a leaf nor an inner node';
  if (body.e !== undefined) {
    if ((body.b === undefined) !== (base === undefined)) return 'delta part without its base';
    if (base !== undefined && (base.entries === undefined || base.depth !== depth || base.base !== undefined))
      return 'delta part whose base is not a full leaf at its place';
    const size = sizer(o);
    const entries = new Map<string, V>(base?.entries);
    for (const [k, v] of Object.entries(body.e)) {
      if (!hashOf(k).startsWith(path)) return `key ${JSON.stringify(k.slice(0, 64))} is not on this part's path`;
      entries.set(k, v);
    }
    let bytes = 0;
    for (const [k, v] of entries) bytes += size(k, v);
    return { depth, entries, children: undefined, bytes, count: entries.size, id: undefined, stored: true, base };
  }
  if (children === undefined || children.size === 0) return 'inner part has no children';
  const { bytes, count } = totals(children);
  return { depth, entries: undefined, children, bytes, count, id: undefined, stored: true };
}
