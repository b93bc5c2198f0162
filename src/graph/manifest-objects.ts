/**
 * The objects a set of manifests names: each one's commit index entry and
 * schema, the parts of its table and ancestry trees (a delta leaf's base
 * too), the run-list parts its table entries name, and every run with its
 * side objects (a segmented run's segments, what a compacted run
 * replaced). What garbage collection keeps for the reachable manifests,
 * and what a transfer sends for the manifests a destination lacks.
 */
import { mapLimit } from '../model/map-limit.js';
import type { PartNode } from '../model/part-tree.js';
import { keys } from './keys.js';
import type { Manifest } from './manifest.js';
import type { Repository } from './repository.js';
import type { RunStore } from './run-store.js';

/** Run indexes read at once. */
const SIDE_READS = 16;

export async function objectsOf(
  graph: { repo: Repository; runs: RunStore },
  manifests: readonly Manifest[],
  signal?: AbortSignal,
): Promise<Set<string>> {
  const named = new Set<string>();
  const runRefs = new Map<string, Manifest['tables'][string]['runs'][number]>();
  const nameParts = (n: PartNode<unknown>): void => {
    for (const c of n.children?.values() ?? []) {
      // A part already named was reached through another manifest, with everything below it.
      if (c.id === undefined || named.has(keys.part(c.id))) continue;
      named.add(keys.part(c.id));
      // A delta leaf reads its base (model/part-tree.ts `deltaLeaves`).
      if (c.base?.id !== undefined) named.add(keys.part(c.base.id));
      nameParts(c);
    }
  };
  for (const m of manifests) {
    named.add(keys.commit(m.commit.id));
    named.add(keys.schema(m.schema));
    nameParts(m.tableTree);
    nameParts(m.ancestry.tree);
    for (const t of Object.values(m.tables)) {
      // A long run list keeps its older runs in a run-list part the entry names.
      const base = graph.repo.manifests.runListPartOf(t);
      if (base !== undefined) named.add(keys.part(base));
      for (const r of t.runs) runRefs.set(r.key, r);
      // A table's indexes are runs like its own, reachable through its entry.
      for (const ix of Object.values(t.indexes?.sets ?? {})) for (const r of ix.runs) runRefs.set(r.key, r);
    }
  }
  // A run's other objects (segments, what a compaction replaced) live as long as the run; finding
  // them reads the run's index, a few at once.
  const withSides = [...runRefs.values()].filter((r) => r.segmented || r.compacted);
  for (const r of runRefs.values()) if (!(r.segmented || r.compacted)) named.add(r.key);
  for (const ks of await mapLimit(withSides, SIDE_READS, (r) => graph.runs.objectKeys(r, signal))) for (const k of ks) named.add(k);
  return named;
}
