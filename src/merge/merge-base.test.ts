import { describe, expect, it } from 'vitest';
import { Ancestry } from '../graph/ancestry.js';
import type { Manifest } from '../graph/manifest.js';
import { baseCandidates, bestBases, chooseBase, nextToRead, pruneContained } from './merge-base.js';

const m = (
  lineage: string,
  version: number,
  ancestry: Record<string, number>,
  generation: number,
  time = '2026-01-01T00:00:00.000Z',
  id = `${lineage}${version}`,
): Manifest =>
  ({ lineage, version, ancestry: Ancestry.of(ancestry, { lineage, version }), generation, commit: { id, time } }) as unknown as Manifest;
const A = (r: Record<string, number>): Ancestry => Ancestry.of(r);

describe('merge base (pure)', () => {
  it('candidates are one per shared lineage, at the lower version', () => {
    expect(baseCandidates(A({ main: 5, f: 3, old: 2 }), A({ main: 7, old: 2, g: 1 }))).toEqual([
      { lineage: 'main', version: 5 },
      { lineage: 'old', version: 2 },
    ]);
  });

  it('after the fork point is read, lists only the lineages merged since, not every one ever merged', () => {
    const history = Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`old${i}`, 1 + (i % 7)]));
    const fork = Ancestry.of(history, { lineage: 'main', version: 40 });
    // main merges two more branches after the fork; the branch `f` merges one of its own.
    const main = Ancestry.next(
      { lineage: 'main', version: 43 },
      Ancestry.next({ lineage: 'main', version: 42 }, fork, Ancestry.of({ x: 3 }, { lineage: 'x', version: 3 })),
      Ancestry.of({ y: 2 }, { lineage: 'y', version: 2 }),
    );
    const f = Ancestry.next(
      { lineage: 'f', version: 5 },
      Ancestry.next({ lineage: 'f', version: 1 }, fork),
      Ancestry.of({ z: 1 }, { lineage: 'z', version: 1 }),
    );
    const forkManifest = m('main', 40, {}, 40);
    (forkManifest as { ancestry: Ancestry }).ancestry = fork;
    expect(baseCandidates(main, f).length).toBe(501);
    const listed = baseCandidates(main, f, [forkManifest]);
    // Only the leaves the merges since the fork touched are compared entry by entry.
    expect(listed.length).toBeLessThan(501 / 3);
    expect(listed).toContainEqual({ lineage: 'main', version: 40 });
    // Whatever is left out is contained in the fork point.
    const all = baseCandidates(main, f);
    for (const c of all) if (!listed.some((l) => l.lineage === c.lineage && l.version === c.version)) expect(fork.contains(c)).toBe(true);
  });

  it("reads the heads' lineages first and never reads what they contain", () => {
    const pending = baseCandidates(A({ main: 5, f: 3, old: 2 }), A({ main: 7, old: 2 }));
    const first = nextToRead(pending, ['main', 'f']);
    expect(first).toEqual([{ lineage: 'main', version: 5 }]);
    const read = [m('main', 5, { main: 5, old: 2 }, 9)];
    expect(pruneContained(pending, read, first)).toEqual([]);
  });

  it('drops dominated candidates and breaks criss-cross ties by generation, time, then id', () => {
    const a = m('a', 1, { main: 3, a: 1 }, 5, '2026-01-01T00:00:01.000Z');
    const b = m('b', 1, { main: 3, b: 1 }, 5, '2026-01-01T00:00:02.000Z');
    const old = m('main', 3, { main: 3 }, 4);
    expect(bestBases([a, b, old])).toEqual([a, b]);
    expect(chooseBase([a, b])).toBe(b);
    const deeper = m('a', 2, { main: 3, a: 2 }, 6, '2026-01-01T00:00:00.000Z');
    expect(chooseBase([deeper, b])).toBe(deeper);
    const sameTime = [m('x', 1, {}, 5, 't', 'A'), m('y', 1, {}, 5, 't', 'B')];
    expect(chooseBase(sameTime)?.commit.id).toBe('B');
  });
});
