/**
 * The pending part of a branch's view: WAL generations above the head
 * manifest's per-shard watermarks, overlaid on its tables as virtual runs
 * in generation order (see generation.ts).
 *
 * Listing costs one LIST call, and only for lineages whose manifest has
 * registered a shard: branches that never ingested pay nothing. Generations
 * are immutable and cached, so a head resolution reads only the ones it has
 * not seen before.
 */
import type { ObjectStore } from '../store/object-store.js';
import type { TableVersion } from '../table/table-version.js';
import { compareKey, type RunRef } from '../table/run.js';
import {
  compareGenerations,
  infoOf,
  parseGenerationKey,
  virtualRunRef,
  walKeys,
  type Generation,
  type GenerationHeader,
  type GenerationInfo,
} from './generation.js';

/** What the pending view needs of a snapshot's manifest. */
export interface ManifestWal {
  lineage: string;
  /** Per WAL shard: the highest generation folded into the tables. */
  wal: Record<string, number>;
  tables: Record<string, TableVersion>;
}

/** The port the graph layer implements to read (and cache) generation objects. */
export interface GenerationReader {
  /** The stored bytes and ordering header, rows not decoded. */
  generationFile(key: string, signal?: AbortSignal): Promise<{ file: Uint8Array; hash: string; header: GenerationHeader }>;
  /** The same, with the rows decoded. */
  generation(key: string, signal?: AbortSignal): Promise<{ generation: Generation; file: Uint8Array; hash: string }>;
}

export interface PendingWal {
  /** Pending generations in overlay order (oldest first). */
  generations: GenerationInfo[];
  /** Virtual runs per table, in overlay order; empty when only listed (see readPending). */
  runs: Record<string, RunRef[]>;
  /** Per shard: the highest sequence number this view includes (folded or pending). */
  seen: Record<string, number>;
  /** Generation objects already folded but not yet deleted (a crash after publication leaves these). */
  leftovers: string[];
  /** Listed only (`listOnly`): no rows were read, so nothing may be folded from this view. */
  listed?: true;
}

export const NO_PENDING: PendingWal = { generations: [], runs: {}, seen: {}, leftovers: [] };

/** Watermarks of `manifest` as they apply to `lineage` (a fork point of another lineage has none). */
export function watermarksFor(manifest: Pick<ManifestWal, 'lineage' | 'wal'>, lineage: string): Record<string, number> {
  return manifest.lineage === lineage ? manifest.wal : {};
}

async function listGenerations(a: {
  store: ObjectStore;
  lineage: string;
  watermarks: Record<string, number>;
  signal?: AbortSignal | undefined;
}): Promise<{ pending: { key: string }[]; leftovers: string[] }> {
  const { store, lineage, watermarks, signal } = a;
  const pending: { key: string }[] = [];
  const leftovers: string[] = [];
  for await (const o of store.list(walKeys.lineagePrefix(lineage), { signal })) {
    const at = parseGenerationKey(o.key);
    if (at === undefined || at.lineage !== lineage) continue;
    if (at.seq > (watermarks[at.shard] ?? 0)) pending.push({ key: o.key });
    else leftovers.push(o.key);
  }
  return { pending, leftovers };
}

/**
 * The pending generations of `lineage` above `manifest`'s watermarks, in
 * overlay order. `listOnly` orders them from their headers without
 * decoding a row (catch-up decodes each batch when it folds it); the view
 * then has no virtual runs and must not be read through.
 */
export async function readPending(request: {
  store: ObjectStore;
  runs: GenerationReader;
  manifest: ManifestWal;
  lineage: string;
  signal?: AbortSignal | undefined;
  listOnly?: boolean;
}): Promise<PendingWal> {
  const { store, runs, manifest, lineage, signal, listOnly = false } = request;
  const marks = watermarksFor(manifest, lineage);
  if (Object.keys(marks).length === 0) return NO_PENDING;
  const { pending: listed, leftovers } = await listGenerations({ store, lineage, watermarks: marks, signal });
  const loaded = await Promise.all(listed.map(async (l) => ({ key: l.key, f: await runs.generationFile(l.key, signal) })));
  // Within a shard, sequence order must be overlay order, and only a gap-free run above the
  // watermark is pending: a fold records a watermark, which must never skip a generation.
  // One writer per shard guarantees both; this keeps a misconfigured pair (two processes
  // sharing a shard name, or clocks stepping back) from ever losing a row.
  loaded.sort((a, b) => compareKey(a.f.header.shard, b.f.header.shard) || a.f.header.seq - b.f.header.seq);
  const kept: { key: string; f: (typeof loaded)[number]['f']; stamp: number }[] = [];
  let shard = '';
  let expect = 0;
  let stamp = 0;
  for (const { key, f } of loaded) {
    const h = f.header;
    if (h.shard !== shard) {
      shard = h.shard;
      expect = (marks[shard] ?? 0) + 1;
      stamp = 0;
    }
    if (h.seq !== expect) continue;
    expect++;
    stamp = Math.max(stamp, h.stamp);
    kept.push({ key, f, stamp });
  }
  const byGen = await Promise.all(
    kept.map(async ({ key, f, stamp }) => {
      if (listOnly)
        return { info: { ...infoOf({ g: f.header, key, bytes: f.file.length, hash: f.hash }), stamp }, refs: [] as [string, RunRef][] };
      const gen = (await runs.generation(key, signal)).generation;
      return {
        info: { ...infoOf({ g: gen, key, bytes: f.file.length, hash: f.hash }), stamp },
        refs: Object.keys(gen.tables).map(
          (t) => [t, virtualRunRef({ g: gen, key, table: t, bytes: f.file.length, hash: f.hash })] as [string, RunRef],
        ),
      };
    }),
  );
  byGen.sort((a, b) => compareGenerations(a.info, b.info));
  const generations = byGen.map((b) => b.info);
  const out: Record<string, RunRef[]> = {};
  for (const { refs } of byGen) {
    for (const [t, r] of refs) {
      if (r.rows === 0) continue;
      out[t] ??= [];
      out[t]?.push(r);
    }
  }
  const seen = { ...marks };
  for (const g of generations) seen[g.shard] = Math.max(seen[g.shard] ?? 0, g.seq);
  return { generations, runs: out, seen, leftovers, ...(listOnly ? { listed: true as const } : {}) };
}

/** The manifest's tables with pending runs on top. */
export function viewTables(manifest: ManifestWal, pending: PendingWal): Record<string, TableVersion> {
  const out: Record<string, TableVersion> = { ...manifest.tables };
  for (const [t, refs] of Object.entries(pending.runs)) out[t] = { runs: [...(manifest.tables[t]?.runs ?? []), ...refs] };
  return out;
}
