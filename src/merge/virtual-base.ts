/**
 * The merge base as a table view, virtual when history is criss-crossed.
 *
 * The best bases of two heads are the common ancestors no other common
 * ancestor contains (merge-base.ts finds them from ancestry vectors). When
 * there is one, it is the base. When there are several (branches merged
 * into each other, then both changed), picking one would lose changes: a
 * change made between the picked base and another best base is on both
 * sides but not in the picked base, so a side that later reverted it looks
 * like it changed nothing and the change comes back. Instead, as Git's
 * recursive strategy does, the best bases are merged with one another,
 * three-way against *their* merge base (found the same way, recursively),
 * and the result, a base that exists only in memory, is the base of the
 * outer merge. Its rows are staged runs (never stored). Best bases are
 * folded in a fixed order (generation, then time, then id, as chooseBase
 * orders them), so the result does not depend on the merge direction.
 *
 * A conflict while merging the best bases stays inside the virtual base, as
 * Git keeps conflict markers in its virtual base: the conflicting properties
 * (every property, for a row conflict) are marked (three-way.ts `Marks`), in
 * the staged row's hash, so they equal nothing. The outer merge then decides
 * them from the two outer sides alone: where the sides agree there is no
 * conflict, and where they differ it is an ordinary conflict that strategies
 * and choices resolve. So a criss-cross whose ancestors disagree can always
 * be merged, and a three-dot diff over it shows such a key as changed.
 */
import type { GraphPorts } from '../graph/ports.js';
import { Ancestry } from '../graph/ancestry.js';
import type { Manifest, ManifestRef } from '../graph/manifest.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import { EMPTY_TABLE, type TableVersion } from '../table/table-version.js';
import { tableMergeAction } from './three-way.js';
import { baseCandidates, bestBases, chooseBase, headCandidates, nextToRead, pruneContained } from './merge-base.js';
import { prepareTable } from './prepare-table.js';

/** What a three-way merge needs of its base. */
export interface BaseView {
  tables: Record<string, TableVersion>;
  /** Schema hash of the base; a virtual base of bases with different schemas has none. */
  schema: string | undefined;
  ancestry: Ancestry;
  /** The real best bases this view was built from (one unless virtual), in fold order. */
  manifests: Manifest[];
}

/** Two sides' ancestry vectors, the lineages to look in first, and the sides' schemas (for the table types of staged rows, the first that has the table). */
export interface BaseQuery {
  ports: Pick<GraphPorts, 'manifests' | 'runFiles'>;
  a: Ancestry;
  b: Ancestry;
  lineages: string[];
  schemas: readonly Schema[];
  signal?: AbortSignal | undefined;
}

function viewOf(m: Manifest): BaseView {
  return { tables: m.tables, schema: m.schema, ancestry: m.ancestry, manifests: [m] };
}

/** The best bases of two ancestry vectors, in fold order; empty when they share no history. */
export async function bestBasesOf(q: BaseQuery): Promise<Manifest[]> {
  const { ports, a, b, lineages, signal } = q;
  const candidates: Manifest[] = [];
  const read = async (refs: readonly ManifestRef[]): Promise<void> => {
    candidates.push(...(await Promise.all(refs.map((r) => ports.manifests.readManifest(r, signal)))));
  };
  const first = headCandidates(a, b, lineages);
  await read(first);
  // Every other shared lineage, listed only where the ancestries differ from what was just read.
  let pending = pruneContained(baseCandidates(a, b, candidates), candidates, first);
  while (pending.length > 0) {
    const batch = nextToRead(pending, lineages);
    await read(batch);
    pending = pruneContained(pending, candidates, batch);
  }
  const best = bestBases(candidates);
  const ordered: Manifest[] = [];
  while (ordered.length < best.length) ordered.push(chooseBase(best.filter((m) => !ordered.includes(m))) as Manifest);
  return ordered;
}

/**
 * The base of two sides given by their ancestry vectors: a best base, or
 * the virtual merge of several. `undefined` when they share no history.
 */
export async function mergeBaseView(q: BaseQuery): Promise<{ base: BaseView } | undefined> {
  const { ports, schemas, signal } = q;
  const best = await bestBasesOf(q);
  const [first, ...rest] = best;
  if (first === undefined) return undefined;
  let acc = viewOf(first);
  for (const next of rest) {
    // Each level's best bases are strictly older than the last, so the recursion ends with the history.
    const inner = await mergeBaseView({ ports, a: acc.ancestry, b: next.ancestry, lineages: [next.lineage], schemas, signal });
    const innerBase: BaseView = inner?.base ?? { tables: {}, schema: undefined, ancestry: Ancestry.EMPTY, manifests: [] };
    const tables = await mergeViews({ runs: ports.runFiles, views: { base: innerBase, x: acc, y: viewOf(next) }, schemas, signal });
    acc = {
      tables,
      schema: acc.schema === next.schema ? acc.schema : undefined,
      ancestry: Ancestry.union(acc.ancestry, next.ancestry),
      manifests: [...acc.manifests, next],
    };
  }
  return { base: acc };
}

/** Three-way merge of two base views against theirs, table by table, rows staged in memory, conflicts kept as marks. */
async function mergeViews(a: {
  runs: GraphPorts['runFiles'];
  views: { base: BaseView; x: BaseView; y: BaseView };
  schemas: readonly Schema[];
  signal?: AbortSignal | undefined;
}): Promise<Record<string, TableVersion>> {
  const { runs, views, schemas, signal } = a;
  const { base, x, y } = views;
  const tables: Record<string, TableVersion> = {};
  const names = [...new Set([...Object.keys(x.tables), ...Object.keys(y.tables)])].sort();
  for (const name of names) {
    const b = base.tables[name] ?? EMPTY_TABLE;
    const s = y.tables[name] ?? EMPTY_TABLE;
    const t = x.tables[name] ?? EMPTY_TABLE;
    const action = tableMergeAction(b, s, t);
    if (action === 'keep_target') tables[name] = t;
    else if (action === 'adopt_source') tables[name] = s;
    else {
      const type = schemas.map((sc) => findType(sc, name)).find((t): t is TableType => t !== undefined);
      if (type === undefined) continue;
      const p = await prepareTable({
        type,
        base: b,
        source: s,
        target: t,
        load: runs.loader(type, signal),
        writeRun: async (rows) => runs.stage(type, rows),
        keepConflicts: true,
      });
      tables[name] = p.version;
    }
  }
  return tables;
}
