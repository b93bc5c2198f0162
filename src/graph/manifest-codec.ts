/**
 * Manifest codec: a manifest to the objects that store it, and back.
 *
 * Writing a manifest writes first the part tree nodes it does not share
 * with a stored manifest (the paths its change touched, `parts/<id>`), then
 * the manifest, whose bytes hold the trees' roots. Reading loads every part
 * a manifest names, each part once per process: parts are immutable and
 * shared, so a manifest read after its parent costs the parts that differ.
 * Format 1 manifests (everything inline) are read into the same trees; the
 * first publication on such a lineage writes format 2.
 */
import { z } from 'zod';
import { BranchgraphError } from '../model/errors.js';
import {
  bodyOf,
  nodeOf,
  entriesOf,
  treeOf,
  unstoredNodes,
  type PartBody,
  type PartNode,
  type PartTreeOptions,
} from '../model/part-tree.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { Ancestry, ancestryTreeOptions, ANCESTRY_PART_BYTES } from './ancestry.js';
import { keys } from './keys.js';
import { sameRuns } from '../table/table-version.js';
import { MANIFEST_FORMAT, StoredManifestZ, partBodyZ, TableEntryZ, type Manifest, type TableEntry } from './manifest.js';

/** Largest leaf of a manifest's table tree: a one-row write in a graph of any number of tables writes about this much metadata, plus its path. */
export const TABLE_PART_BYTES = 4096;
/**
 * Largest table list kept inline in the manifest: up to this much, a cold
 * reader reads a manifest in one round trip (the common case: tens of
 * tables with compacted run lists); beyond it the tables split into parts.
 */
export const TABLE_ROOT_BYTES = 65_536;

export type PartKind = 'tables' | 'ancestry';

/** How a repository shapes the trees it writes (any shape reads back). */
export interface TreeOptions {
  tables: PartTreeOptions<TableEntry>;
  ancestry: PartTreeOptions<number>;
}

/** A run key names one immutable run, stats included: two entries with the same run keys (indexes' too) and origins are the same. */
function sameTableEntry(a: TableEntry, b: TableEntry): boolean {
  if (a === b) return true;
  if (!sameRuns(a, b) || a.replacedAt !== b.replacedAt || a.runs.some((r, i) => r.origin !== b.runs[i]?.origin)) return false;
  const ia = a.indexes;
  const ib = b.indexes;
  if (ia === undefined || ib === undefined) return ia === ib;
  const names = Object.keys(ia.sets);
  return (
    ia.of === ib.of &&
    ia.covers === ib.covers &&
    names.length === Object.keys(ib.sets).length &&
    names.every((n) => ib.sets[n] !== undefined && sameRuns(ia.sets[n], ib.sets[n]))
  );
}

export function treeOptions(limits: { tables?: number; ancestry?: number } = {}): TreeOptions {
  return {
    tables: { limit: limits.tables ?? TABLE_PART_BYTES, rootLimit: limits.tables ?? TABLE_ROOT_BYTES, equal: sameTableEntry },
    ancestry: ancestryTreeOptions(limits.ancestry ?? ANCESTRY_PART_BYTES),
  };
}

const PartZ = {
  tables: z.object({ format: z.literal(1), kind: z.literal('tables'), ...partBodyZ(TableEntryZ).shape }),
  ancestry: z.object({ format: z.literal(1), kind: z.literal('ancestry'), ...partBodyZ(z.number().int().min(1)).shape }),
};

/** One part object a publication writes before its manifest. */
export interface PartWrite {
  key: string;
  bytes: Uint8Array;
  node: PartNode<unknown>;
}

/** The parts `m` names that are not known to be stored, children before parents. */
export function partsToWrite(m: Manifest, newId: () => string): PartWrite[] {
  const parts: PartWrite[] = [];
  const add = <V>(kind: PartKind, root: PartNode<V>): void => {
    for (const n of unstoredNodes(root, newId))
      parts.push({ key: keys.part(n.id as string), bytes: encodeJson({ format: 1, kind, ...bodyOf(n) }), node: n as PartNode<unknown> });
  };
  add('tables', m.tableTree);
  add('ancestry', m.ancestry.tree);
  return parts;
}

/** The manifest's own bytes; every part it names must have an id (see partsToWrite). */
export function encodeManifest(m: Manifest): Uint8Array {
  const { tableTree, ancestry, tables, ...rest } = m;
  return encodeJson({ format: MANIFEST_FORMAT, ...rest, tables: bodyOf(tableTree), ancestry: bodyOf(ancestry.tree) });
}

/** Loads the part `id` at `depth` on `path` of a `kind` tree, usually through a cache. */
export type PartLoader = (part: { kind: PartKind; id: string; depth: number; path: string }) => Promise<PartNode<unknown>>;

/** A tree node from its body, loading its children (in parallel) through `load`. */
export async function nodeFromBody<V>(a: {
  kind: PartKind;
  body: PartBody<V>;
  depth: number;
  path: string;
  load: PartLoader;
  o: PartTreeOptions<V>;
  where: string;
}): Promise<PartNode<V>> {
  const { kind, body, depth, path, load, o, where } = a;
  const children =
    body.c === undefined
      ? undefined
      : new Map(
          await Promise.all(
            Object.entries(body.c).map(
              async ([d, id]) => [d, (await load({ kind, id, depth: depth + 1, path: path + d })) as PartNode<V>] as const,
            ),
          ),
        );
  const node = nodeOf({ body, depth, children, o, path });
  if (typeof node === 'string') throw new BranchgraphError('corrupt_object', `${where}: ${node}`, { details: { key: where } });
  return node;
}

/** Decode a stored part object of `kind`. */
export function decodePart(kind: PartKind, bytes: Uint8Array, key: string): PartBody<unknown> {
  return decodeJson(PartZ[kind] as z.ZodType<PartBody<unknown>>, bytes, key);
}

/** A stored manifest, read in full. */
export async function decodeManifest(a: { bytes: Uint8Array; key: string; load: PartLoader; o: TreeOptions }): Promise<Manifest> {
  const { bytes, key, load, o } = a;
  const s = decodeJson(StoredManifestZ, bytes, key);
  const own = { lineage: s.lineage, version: s.version };
  if (s.format === 1) {
    const { format: _f, tables, ancestry, ...rest } = s;
    return { ...rest, tables, tableTree: treeOf(Object.entries(tables), o.tables), ancestry: Ancestry.of(ancestry, own, o.ancestry) };
  }
  const { format: _f, tables: tablesBody, ancestry: ancestryBody, ...rest } = s;
  const [tableTree, ancestryTree] = await Promise.all([
    nodeFromBody({ kind: 'tables', body: tablesBody, depth: 0, path: '', load, o: o.tables, where: key }),
    nodeFromBody({ kind: 'ancestry', body: ancestryBody, depth: 0, path: '', load, o: o.ancestry, where: key }),
  ]);
  const tables = Object.fromEntries([...entriesOf(tableTree)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { ...rest, tables, tableTree, ancestry: Ancestry.fromTree(ancestryTree, own, o.ancestry) };
}
