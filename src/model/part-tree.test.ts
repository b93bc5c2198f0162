import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  bodyOf,
  emptyTree,
  entriesOf,
  getEntry,
  mergeTrees,
  nodeOf,
  sharedEntries,
  treeOf,
  unstoredNodes,
  withChanges,
  type PartNode,
  type PartTreeOptions,
} from './part-tree.js';

const o: PartTreeOptions<number> = { limit: 60 };
const sorted = (n: PartNode<number>): [string, number][] => [...entriesOf(n)].sort(([a], [b]) => (a < b ? -1 : 1));
const plain = (m: Map<string, number>): [string, number][] => [...m].sort(([a], [b]) => (a < b ? -1 : 1));

/** Every node's bytes fit the limit unless it must be split further (more than one entry). */
function checkShape(n: PartNode<number>): void {
  if (n.entries !== undefined) expect(n.bytes <= o.limit || n.entries.size <= 1).toBe(true);
  else {
    expect(n.bytes > o.limit && n.count > 1).toBe(true);
    for (const c of n.children?.values() ?? []) checkShape(c);
  }
}

/** The shape as data: equal maps must give equal shapes. */
const shapeOf = (n: PartNode<number>): unknown =>
  n.entries !== undefined ? plain(new Map(n.entries)) : [...(n.children ?? [])].map(([d, c]) => [d, shapeOf(c)]);

const changesArb = fc.array(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), fc.option(fc.integer({ min: 1, max: 999 }), { nil: undefined })), {
  maxLength: 40,
});

describe('part trees', () => {
  it('behave as a map under any sequence of changes, keep their shape rule, and share what a change does not touch', () => {
    fc.assert(
      fc.property(fc.array(changesArb, { maxLength: 6 }), (batches) => {
        let tree = emptyTree<number>();
        const model = new Map<string, number>();
        for (const batch of batches) {
          const before = tree;
          const changes = new Map(batch);
          tree = withChanges(tree, changes, o);
          for (const [k, v] of changes) {
            if (v === undefined) model.delete(k);
            else model.set(k, v);
          }
          expect(sorted(tree)).toEqual(plain(model));
          for (const [k, v] of model) expect(getEntry(tree, k)).toBe(v);
          checkShape(tree);
          // The same map built at once has the same shape: shapes depend on content only.
          expect(shapeOf(tree)).toEqual(shapeOf(treeOf(model, o)));
          if (plain(model).length === sorted(before).length && sorted(before).every(([k, v]) => model.get(k) === v))
            expect(tree).toBe(before);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('with delta leaves, every published tree read back from its stored bodies is the map, and a delta always names a full leaf', () => {
    const d: PartTreeOptions<number> = { limit: 120, deltaLeaves: true };
    let deltas = 0;
    fc.assert(
      fc.property(fc.array(changesArb, { maxLength: 8 }), (batches) => {
        const bodies = new Map<string, ReturnType<typeof bodyOf<number>>>();
        let n = 0;
        /** Read a stored node back as a reader does: children by id, a delta over its base. */
        const read = (body: ReturnType<typeof bodyOf<number>>, depth: number, path: string): PartNode<number> => {
          const children =
            body.c === undefined
              ? undefined
              : new Map(Object.entries(body.c).map(([digit, id]) => [digit, read(bodies.get(id) as never, depth + 1, path + digit)]));
          const baseBody = body.b === undefined ? undefined : bodies.get(body.b);
          if (baseBody !== undefined) expect(baseBody.b).toBeUndefined();
          const base = baseBody === undefined ? undefined : read(baseBody, depth, path);
          const node = nodeOf({ body, depth, children, o: d, path, base });
          if (typeof node === 'string') throw new Error(node);
          return node;
        };
        let tree = emptyTree<number>();
        const model = new Map<string, number>();
        for (const batch of batches) {
          const changes = new Map(batch);
          tree = withChanges(tree, changes, d);
          for (const [k, v] of changes) {
            if (v === undefined) model.delete(k);
            else model.set(k, v);
          }
          // Published: every new node stored under its id, as a publication writes them before its manifest.
          for (const p of unstoredNodes(tree, () => `p${n++}`)) {
            const body = bodyOf(p);
            if (body.b !== undefined) deltas++;
            bodies.set(p.id as string, body);
            p.stored = true;
          }
          expect(sorted(read(bodyOf(tree), 0, ''))).toEqual(plain(model));
        }
      }),
      { numRuns: 300 },
    );
    // The runs wrote deltas, not only full leaves.
    expect(deltas).toBeGreaterThan(50);
  });

  it('a one-key change copies one path and shares every other node', () => {
    const big = treeOf(
      Array.from({ length: 500 }, (_, i) => [`lineage-${i}`, i + 1] as [string, number]),
      o,
    );
    for (const n of unstoredNodes(
      big,
      (() => {
        let i = 0;
        return () => `id${i++}`;
      })(),
    ))
      n.stored = true;
    const next = withChanges(big, new Map([['lineage-7', 999]]), o);
    const fresh = unstoredNodes(next, () => 'new');
    // Depth of a 500-entry tree of 60-byte leaves: the changed path only, a handful of nodes.
    expect(fresh.length).toBeGreaterThan(0);
    expect(fresh.length).toBeLessThanOrEqual(4);
    expect(getEntry(next, 'lineage-7')).toBe(999);
    expect(getEntry(big, 'lineage-7')).toBe(8);
  });

  it('merging takes shared subtrees whole and combines the rest', () => {
    fc.assert(
      fc.property(changesArb, changesArb, changesArb, (common, left, right) => {
        const base = withChanges(emptyTree<number>(), new Map(common), o);
        const a = withChanges(base, new Map(left), o);
        const b = withChanges(base, new Map(right), o);
        const merged = mergeTrees({ a, b, combine: Math.max, o });
        const expected = new Map(entriesOf(a));
        for (const [k, v] of entriesOf(b)) expected.set(k, Math.max(expected.get(k) ?? 0, v));
        expect(sorted(merged)).toEqual(plain(expected));
        checkShape(merged);
        expect(mergeTrees({ a, b: a, combine: Math.max, o })).toBe(a);
      }),
      { numRuns: 200 },
    );
  });

  it('shared entries: every key both hold, except what a cover shares with both, and nothing else', () => {
    fc.assert(
      fc.property(changesArb, changesArb, changesArb, changesArb, (common, left, right, later) => {
        const base = withChanges(emptyTree<number>(), new Map(common), o);
        const a = withChanges(base, new Map(left), o);
        const b = withChanges(base, new Map(right), o);
        const covers = [base, withChanges(base, new Map(later), o)];
        const got = new Map([...sharedEntries(a, b, covers)].map(([k, va, vb]) => [k, [va, vb]]));
        for (const [k, va] of entriesOf(a)) {
          const vb = getEntry(b, k);
          if (vb === undefined) {
            expect(got.has(k)).toBe(false);
            continue;
          }
          // A key left out is one a cover holds with the same value as both sides.
          if (got.has(k)) expect(got.get(k)).toEqual([va, vb]);
          else expect(va === vb && covers.some((c) => getEntry(c, k) === va)).toBe(true);
        }
        expect([...got.keys()].every((k) => getEntry(a, k) !== undefined && getEntry(b, k) !== undefined)).toBe(true);
        // Without covers, exactly the intersection.
        expect([...sharedEntries(a, b)].length).toBe([...entriesOf(a)].filter(([k]) => getEntry(b, k) !== undefined).length);
      }),
      { numRuns: 200 },
    );
  });

  it('round-trips through stored bodies, and refuses a body that does not belong where it is named', () => {
    const tree = treeOf(
      Array.from({ length: 40 }, (_, i) => [`k${i}`, i + 1] as [string, number]),
      o,
    );
    let n = 0;
    const parts = unstoredNodes(tree, () => `p${n++}`);
    const byId = new Map(parts.map((p) => [p.id as string, bodyOf(p)]));
    const load = (body: ReturnType<typeof bodyOf<number>>, depth: number, path: string): PartNode<number> => {
      const children =
        body.c === undefined
          ? undefined
          : new Map(Object.entries(body.c).map(([d, id]) => [d, load(byId.get(id) as never, depth + 1, path + d)]));
      const node = nodeOf({ body, depth, children, o, path });
      if (typeof node === 'string') throw new Error(node);
      return node;
    };
    expect(sorted(load(bodyOf(tree), 0, ''))).toEqual(sorted(tree));
    const leaf = parts.find((p) => p.entries !== undefined) as PartNode<number>;
    expect(nodeOf({ body: bodyOf(leaf), depth: leaf.depth + 1, o, path: '' })).toMatch(/depth/);
    expect(nodeOf({ body: { d: 1, e: { k1: 1, k2: 2 } }, depth: 1, o, path: 'z' })).toMatch(/not on this part's path/);
    expect(nodeOf({ body: { d: 0 }, depth: 0, o, path: '' })).toMatch(/neither/);
  });

  it('delta leaves: a changed stored leaf keeps the entries that differ from its last full version, within a quarter of the limit', () => {
    const d: PartTreeOptions<number> = { limit: 400, deltaLeaves: true };
    // Enough entries to split the root, so leaves sit at depth 1 (a root is never a delta: it rides in its owner).
    let tree = treeOf(
      Array.from({ length: 200 }, (_, i) => [`k${i}`, 1] as [string, number]),
      d,
    );
    let n = 0;
    const publish = (t: PartNode<number>): void => {
      for (const p of unstoredNodes(t, () => `p${n++}`)) p.stored = true;
    };
    publish(tree);
    const leafOf = (t: PartNode<number>, key: string): PartNode<number> => {
      let x = t;
      while (x.children !== undefined) x = [...x.children.values()].find((c) => getEntry(c, key) !== undefined) as PartNode<number>;
      return x;
    };
    const full = leafOf(tree, 'k0');
    // A new key and a changed value land in k0's leaf as a delta over it, written as those two entries alone.
    const sibling = [...(full.entries?.keys() ?? [])].find((k) => k !== 'k0') as string;
    tree = withChanges(tree, new Map([['k0', 2]]), d);
    publish(tree);
    tree = withChanges(tree, new Map([[sibling, 3]]), d);
    const leaf = leafOf(tree, 'k0');
    expect(leaf.base).toBe(full);
    expect(bodyOf(leaf)).toEqual({
      d: full.depth,
      b: full.id,
      e: Object.fromEntries(
        [
          ['k0', 2],
          [sibling, 3],
        ].sort(),
      ),
    });
    // Read back over its base, it is the whole leaf.
    const read = nodeOf({ body: bodyOf(leaf), depth: leaf.depth, o: d, path: '', base: full });
    expect(typeof read === 'string' ? read : sorted(read)).toEqual(sorted(leaf));
    // Past a quarter of the limit, the leaf is written whole again and becomes the next base.
    publish(tree);
    let grown = tree;
    for (let i = 0; i < 8; i++) {
      grown = withChanges(
        grown,
        new Map([
          ['k0', 10 + i],
          [sibling, 20 + i],
        ]),
        d,
      );
      publish(grown);
    }
    expect(leafOf(grown, 'k0').base).toBe(full);
    const many = new Map([...(full.entries?.keys() ?? [])].map((k) => [k, 123_456_789] as [string, number]));
    const rewritten = leafOf(withChanges(grown, many, d), 'k0');
    expect(rewritten.base).toBeUndefined();
    expect(bodyOf(rewritten).b).toBeUndefined();
    // A removal, or a leaf never stored, is written whole.
    expect(leafOf(withChanges(tree, new Map([[sibling, undefined]]), d), 'k0').base).toBeUndefined();
    expect(leafOf(withChanges(treeOf([...entriesOf(tree)], d), new Map([['k0', 5]]), d), 'k0').base).toBeUndefined();
    // A delta read without its base, or over one that is not a full leaf, is refused.
    expect(nodeOf({ body: bodyOf(leaf), depth: leaf.depth, o: d, path: '' })).toMatch(/without its base/);
    expect(nodeOf({ body: bodyOf(leaf), depth: leaf.depth, o: d, path: '', base: leaf })).toMatch(/not a full leaf/);
  });
});
