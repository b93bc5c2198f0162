/**
 * Manifest codec: a manifest to the objects that store it, and back.
 *
 * Writing a manifest writes first the part tree nodes it does not share
 * with a stored manifest (the paths its change touched, `parts/<id>`), then
 * the manifest, whose bytes hold the trees' roots. Reading loads every part
 * a manifest names, each part once per process: parts are immutable and
 * shared, so a manifest read after its parent costs the parts that differ.
 * Format 1 manifests (everything inline) are read into the same trees; the
 * first publication on such a lineage writes format 3. A version published
 * in a batch is format 4 (manifest.ts): one object holds the whole batch,
 * and decoding it gives every version it holds, each as it is written later
 * at its own key.
 *
 * A long run list is stored as a run-list part and a tail
 * (graph/run-list-parts.ts): writing writes the parts a list's layout names
 * that are not stored yet, before the tree parts and the manifest; reading
 * splices each part's runs back in front of the tail, so the engine only
 * ever sees whole lists.
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
import {
  MANIFEST_FORMAT,
  RunRefZ,
  StoredManifestZ,
  type StoredVersion,
  StoredTableEntryZ,
  deltaPartBodyZ,
  partBodyZ,
  TableEntryZ,
  type Manifest,
  type StoredTableEntry,
  type TableEntry,
} from './manifest.js';
import { INLINE_RUNS, storedEntry, type RunListPart, type RunListParts } from './run-list-parts.js';
import type { RunRef } from '../table/run.js';

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
  /** Longest run list kept wholly inline (graph/run-list-parts.ts). */
  inlineRuns: number;
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

export function treeOptions(limits: { tables?: number; ancestry?: number; runs?: number } = {}): TreeOptions {
  return {
    tables: { limit: limits.tables ?? TABLE_PART_BYTES, rootLimit: limits.tables ?? TABLE_ROOT_BYTES, equal: sameTableEntry },
    ancestry: ancestryTreeOptions(limits.ancestry ?? ANCESTRY_PART_BYTES),
    inlineRuns: limits.runs ?? INLINE_RUNS,
  };
}

const PartZ = {
  // Format 1 table parts predate run-list parts; format 2 entries may name one.
  tables: z.discriminatedUnion('format', [
    z.object({ format: z.literal(1), kind: z.literal('tables'), ...partBodyZ(TableEntryZ).shape }),
    z.object({ format: z.literal(2), kind: z.literal('tables'), ...partBodyZ(StoredTableEntryZ).shape }),
  ]),
  // Format 2 ancestry parts are delta leaves naming their base (`b`). A reader that predates them
  // refuses them as corrupt rather than read a leaf's newest entries alone; every other ancestry
  // part stays format 1, readable by it.
  ancestry: z.discriminatedUnion('format', [
    z.object({ format: z.literal(1), kind: z.literal('ancestry'), ...partBodyZ(z.number().int().min(1)).shape }),
    z.object({ format: z.literal(2), kind: z.literal('ancestry'), ...deltaPartBodyZ(z.number().int().min(1)).shape }),
  ]),
};
const TABLES_PART_FORMAT = 2;
const RunListPartZ = z.object({ format: z.literal(1), kind: z.literal('runs'), runs: z.array(RunRefZ).min(1) });

/** One part object a publication writes before its manifest: a tree node, or a run list's base. */
export type PartWrite = { key: string; bytes: Uint8Array } & ({ node: PartNode<unknown> } | { runs: RunListPart });

/** A tree body with each entry in its stored form (the layouts were chosen by `partsToWrite`). */
function storedTablesBody(node: PartNode<TableEntry>, o: { runLists: RunListParts; stored: boolean }): PartBody<StoredTableEntry> {
  const body = bodyOf(node);
  if (body.e === undefined) return body as PartBody<StoredTableEntry>;
  const e: Record<string, StoredTableEntry> = {};
  for (const [name, entry] of Object.entries(body.e)) e[name] = storedEntry(entry, o.runLists.chosen(entry, o));
  return { ...body, e };
}

/**
 * The parts `m` names that are not known to be stored, children before
 * parents: run lists' bases first, then tree nodes. Chooses the run layout of
 * every entry the manifest or a new part encodes, reusing the bases of
 * `parent` (the manifest `m` builds on) where they still fit.
 */
export function partsToWrite(
  m: Manifest,
  newId: () => string,
  o: { inlineRuns: number; runLists: RunListParts; parent?: Manifest | undefined },
): PartWrite[] {
  const nodes = unstoredNodes(m.tableTree, newId);
  const bases = new Map<string, RunListPart>();
  for (const n of [m.tableTree, ...nodes])
    for (const [name, entry] of n.entries ?? []) {
      const base = o.runLists.layoutOf(entry, { inline: o.inlineRuns, newId, parent: o.parent?.tables[name] }).base;
      if (base !== undefined && !base.stored) bases.set(base.id, base);
    }
  const parts: PartWrite[] = [...bases.values()].map((b) => ({
    key: keys.part(b.id),
    bytes: encodeJson({ format: 1, kind: 'runs', runs: b.refs }),
    runs: b,
  }));
  for (const n of nodes)
    parts.push({
      key: keys.part(n.id as string),
      bytes: encodeJson({ format: TABLES_PART_FORMAT, kind: 'tables', ...storedTablesBody(n, { runLists: o.runLists, stored: false }) }),
      node: n as PartNode<unknown>,
    });
  for (const n of unstoredNodes(m.ancestry.tree, newId)) {
    const body = bodyOf(n);
    const format = body.b !== undefined ? 2 : 1;
    parts.push({ key: keys.part(n.id as string), bytes: encodeJson({ format, kind: 'ancestry', ...body }), node: n as PartNode<unknown> });
  }
  return parts;
}

/** The manifest's own bytes; every part it names must be written (see partsToWrite). */
export function encodeManifest(m: Manifest, runLists: RunListParts): Uint8Array {
  return encodeJson(storedBody(m, runLists));
}

/**
 * The bytes of a batch's first version, which publish the whole batch: its own body with every
 * later version's after it (manifest.ts, format 4); and each later version's bytes alone, as it is
 * written at its own key after the batch landed (the same body, so the same bytes however it is
 * read later). Every part each names must be written.
 */
export function encodeBatch(ms: readonly Manifest[], runLists: RunListParts): { first: Uint8Array; later: Uint8Array[] } {
  const [first, ...later] = ms.map((m) => storedBody(m, runLists));
  if (first === undefined || later.length === 0) throw new BranchgraphError('internal', 'a batch has at least two versions');
  return { first: encodeJson({ ...first, later }), later: later.map((b) => encodeJson(b)) };
}

function storedBody(m: Manifest, runLists: RunListParts): Record<string, unknown> {
  const { tableTree, ancestry, tables, batch, ...rest } = m;
  return {
    format: batch === undefined ? MANIFEST_FORMAT : 4,
    ...rest,
    ...(batch !== undefined ? { batch } : {}),
    tables: storedTablesBody(tableTree, { runLists, stored: true }),
    ancestry: bodyOf(ancestry.tree),
  };
}

/** Loads the part `id` at `depth` on `path` of a `kind` tree, usually through a cache. */
export type PartLoader = (part: { kind: PartKind; id: string; depth: number; path: string }) => Promise<PartNode<unknown>>;
/** How a reader gets run-list parts: a loader (usually through a cache), and the graph's memory of them. */
export interface RunListReader {
  load: (id: string) => Promise<RunListPart>;
  known: RunListParts;
}

/** Decode a stored run-list part. */
export function decodeRunListPart(bytes: Uint8Array, key: string, id: string): RunListPart {
  return { id, refs: decodeJson(RunListPartZ, bytes, key).runs as RunRef[], stored: true };
}

/**
 * A stored tables body with every entry's base spliced back in (bases read in parallel). Entries
 * without one are already whole, and a body with none (most: compacted tables) is returned as read.
 */
async function expandTablesBody(body: PartBody<StoredTableEntry>, runs: RunListReader, where: string): Promise<PartBody<TableEntry>> {
  const based = Object.entries(body.e ?? {}).filter(([, stored]) => stored.runBase !== undefined);
  if (based.length === 0) return body as PartBody<TableEntry>;
  const expanded = await Promise.all(
    based.map(async ([name, stored]) => {
      const entry = runs.known.expand(stored, await runs.load((stored.runBase as { part: string }).part));
      if (typeof entry === 'string')
        throw new BranchgraphError('corrupt_object', `${where}: table ${name} ${entry}`, { details: { key: where } });
      return [name, entry] as const;
    }),
  );
  return { ...body, e: { ...body.e, ...Object.fromEntries(expanded) } };
}

/** A tree node from its body, loading its children (in parallel), or a delta leaf's base, through `load`. */
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
  const child = async (d: string, id: string) => [d, (await load({ kind, id, depth: depth + 1, path: path + d })) as PartNode<V>] as const;
  const [children, base] = await Promise.all([
    body.c === undefined ? undefined : Promise.all(Object.entries(body.c).map(([d, id]) => child(d, id))).then((cs) => new Map(cs)),
    body.b === undefined ? undefined : (load({ kind, id: body.b, depth, path }) as Promise<PartNode<V>>),
  ]);
  const node = nodeOf({ body, depth, children, o, path, base });
  if (typeof node === 'string') throw new BranchgraphError('corrupt_object', `${where}: ${node}`, { details: { key: where } });
  return node;
}

/** Decode a stored part object of `kind`, splicing run-list bases into a tables part. */
export async function decodePart(a: { kind: PartKind; bytes: Uint8Array; key: string; runs: RunListReader }): Promise<PartBody<unknown>> {
  const { kind, bytes, key, runs } = a;
  const body = decodeJson(PartZ[kind] as z.ZodType<PartBody<unknown>>, bytes, key);
  return kind === 'tables' ? expandTablesBody(body as PartBody<StoredTableEntry>, runs, key) : body;
}

/** A stored manifest, read in full: the manifest at `key`, then any versions its object also published (format 4). */
export async function decodeManifest(a: {
  bytes: Uint8Array;
  key: string;
  load: PartLoader;
  runs: RunListReader;
  o: TreeOptions;
}): Promise<Manifest[]> {
  const { bytes, key } = a;
  const s = decodeJson(StoredManifestZ, bytes, key);
  if (s.format !== 4) return [await fromStored(s, a)];
  const { later = [], ...first } = s;
  const all = [first, ...later];
  // Each later version is the one after the one before, and each names the batch it is in.
  const broken = all.some(
    (m, i) =>
      m.lineage !== s.lineage || m.version !== s.version + i || m.batch.first !== s.version || m.batch.last !== s.version + all.length - 1,
  );
  if (later.length > 0 && broken)
    throw new BranchgraphError('corrupt_object', `${key} holds a batch whose versions do not follow one another`, { details: { key } });
  return Promise.all(all.map((m) => fromStored(m, a)));
}

async function fromStored(s: StoredVersion, a: { key: string; load: PartLoader; runs: RunListReader; o: TreeOptions }): Promise<Manifest> {
  const { key, load, runs, o } = a;
  const own = { lineage: s.lineage, version: s.version };
  if (s.format === 1) {
    const { format: _f, tables, ancestry, ...rest } = s;
    return { ...rest, tables, tableTree: treeOf(Object.entries(tables), o.tables), ancestry: Ancestry.of(ancestry, own, o.ancestry) };
  }
  const { format: _f, tables: storedTables, ancestry: ancestryBody, ...rest } = s;
  const [tableTree, ancestryTree] = await Promise.all([
    expandTablesBody(storedTables, runs, key).then((body) =>
      nodeFromBody({ kind: 'tables', body, depth: 0, path: '', load, o: o.tables, where: key }),
    ),
    nodeFromBody({ kind: 'ancestry', body: ancestryBody, depth: 0, path: '', load, o: o.ancestry, where: key }),
  ]);
  const tables = Object.fromEntries([...entriesOf(tableTree)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return { ...rest, tables, tableTree, ancestry: Ancestry.fromTree(ancestryTree, own, o.ancestry) };
}
