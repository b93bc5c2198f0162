/**
 * The merge base, in O(1) store calls whatever the history depth.
 *
 * Every manifest carries its ancestry (graph/ancestry.ts): for each lineage
 * in its history, the highest version it contains. Versions of a lineage form a chain, so the
 * common ancestors of A and B on lineage L are exactly L's versions up to
 * min(A[L], B[L]); the newest of them, one per shared lineage, are the
 * candidates. A candidate contained in another candidate is not a best base.
 * Candidates on the two heads' own lineages are read first; any candidate
 * their ancestries already contain cannot be a best base and is never
 * read. Old branches merged long ago are all contained in the fork point, so
 * a merge usually reads one manifest for its base, however long and however
 * branchy the history.
 *
 * Criss-cross histories can leave several best bases. They are ordered by
 * the highest generation (the longest history), then the newest commit
 * time, then the greatest commit id, and virtual-base.ts merges them all
 * into one virtual base in that order; picking just one would silently
 * drop a change made between two of them and reverted on one side.
 */
import type { Ancestry } from '../graph/ancestry.js';
import type { Manifest, ManifestRef } from '../graph/manifest.js';

/**
 * Candidate base refs: one per lineage both ancestries contain, at the lower
 * version. Subtrees both share with a `covering` manifest's ancestry hold
 * only candidates that manifest contains, which cannot be best bases, so
 * they are never listed: after the fork point is read, a merge lists the
 * lineages that changed since, not every branch ever merged.
 */
export function baseCandidates(a: Ancestry, b: Ancestry, covering: readonly Manifest[] = []): ManifestRef[] {
  const out: ManifestRef[] = [];
  for (const [lineage, va, vb] of a.sharedWith(
    b,
    covering.map((m) => m.ancestry),
  )) {
    out.push({ lineage, version: Math.min(va, vb) });
  }
  return out.sort((x, y) => (x.lineage < y.lineage ? -1 : x.lineage > y.lineage ? 1 : x.version - y.version));
}

/** The candidates on `lineages` (the heads' own): read first, as they usually contain every other. */
export function headCandidates(a: Ancestry, b: Ancestry, lineages: readonly string[]): ManifestRef[] {
  return [...new Set(lineages)].flatMap((lineage) => {
    const [va, vb] = [a.get(lineage), b.get(lineage)];
    return va > 0 && vb > 0 ? [{ lineage, version: Math.min(va, vb) }] : [];
  });
}

/** Which candidates to read next: the heads' own lineages first, then whatever is left. */
export function nextToRead(pending: readonly ManifestRef[], headLineages: readonly string[]): ManifestRef[] {
  const first = pending.filter((c) => headLineages.includes(c.lineage));
  return first.length > 0 ? first : [...pending];
}

/** Drop pending candidates that a manifest already read contains (they cannot be best bases). */
export function pruneContained(
  pending: readonly ManifestRef[],
  read: readonly Manifest[],
  justRead: readonly ManifestRef[],
): ManifestRef[] {
  return pending.filter(
    (c) =>
      !justRead.some((r) => r.lineage === c.lineage && r.version === c.version) &&
      !read.some((m) => !(m.lineage === c.lineage && m.version === c.version) && m.ancestry.contains(c)),
  );
}

/** Candidates not contained in another candidate. */
export function bestBases(candidates: readonly Manifest[]): Manifest[] {
  return candidates.filter(
    (c) => !candidates.some((d) => d !== c && !(d.lineage === c.lineage && d.version === c.version) && d.ancestry.contains(c)),
  );
}

/** The documented choice among several best bases. */
export function chooseBase(best: readonly Manifest[]): Manifest | undefined {
  return [...best].sort(
    (x, y) =>
      y.generation - x.generation ||
      (x.commit.time < y.commit.time ? 1 : x.commit.time > y.commit.time ? -1 : 0) ||
      (x.commit.id < y.commit.id ? 1 : x.commit.id > y.commit.id ? -1 : 0),
  )[0];
}
