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
import { compareGenerations, infoOf, parseGenerationKey, virtualRunRef, walKeys, type Generation, type GenerationInfo } from './generation.js';

/** What the pending view needs of a snapshot's manifest. */
export interface ManifestWal {
  lineage: string;
  /** Per WAL shard: the highest generation folded into the tables. */
  wal: Record<string, number>;
  tables: Record<string, TableVersion>;
}

/** The port the graph layer implements to read (and cache) generation objects. */
export interface GenerationReader {
  generation(key: string, signal?: AbortSignal): Promise<{ generation: Generation; file: Uint8Array; hash: string }>;
}

export interface PendingWal {
  /** Pending generations in overlay order (oldest first). */
  generations: GenerationInfo[];
  /** Virtual runs per table, in overlay order. */
  runs: Record<string, RunRef[]>;
  /** Per shard: the highest sequence number this view includes (folded or pending). */
  seen: Record<string, number>;
  /** Generation objects already folded but not yet deleted (a crash after publication leaves these). */
  leftovers: string[];
}

export const NO_PENDING: PendingWal = { generations: [], runs: {}, seen: {}, leftovers: [] };

/** Watermarks of `manifest` as they apply to `lineage` (a fork point of another lineage has none). */
export function watermarksFor(manifest: Pick<ManifestWal, 'lineage' | 'wal'>, lineage: string): Record<string, number> {
  return manifest.lineage === lineage ? manifest.wal : {};
}

async function listGenerations(store: ObjectStore, lineage: string, watermarks: Record<string, number>, signal?: AbortSignal): Promise<{ pending: { key: string }[]; leftovers: string[] }> {
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

export async function readPending(store: ObjectStore, runs: GenerationReader, manifest: ManifestWal, lineage: string, signal?: AbortSignal): Promise<PendingWal> {
  const marks = watermarksFor(manifest, lineage);
  if (Object.keys(marks).length === 0) return NO_PENDING;
  const { pending: listed, leftovers } = await listGenerations(store, lineage, marks, signal);
  const loaded = await Promise.all(listed.map(async (l) => ({ l, g: await runs.generation(l.key, signal) })));
  const byGen: { info: GenerationInfo; refs: [string, RunRef][] }[] = [];
  // Within a shard, sequence order must be overlay order, and only a gap-free run above the
  // watermark is pending: a fold records a watermark, which must never skip a generation.
  // One writer per shard guarantees both; this keeps a misconfigured pair (two processes
  // sharing a shard name, or clocks stepping back) from ever losing a row.
  loaded.sort((a, b) => compareKey(a.g.generation.shard, b.g.generation.shard) || a.g.generation.seq - b.g.generation.seq);
  let shard = '';
  let expect = 0;
  let stamp = 0;
  for (const { l, g } of loaded) {
    const gen = g.generation;
    if (gen.shard !== shard) {
      shard = gen.shard;
      expect = (marks[shard] ?? 0) + 1;
      stamp = 0;
    }
    if (gen.seq !== expect) continue;
    expect++;
    stamp = Math.max(stamp, gen.stamp);
    byGen.push({ info: { ...infoOf(gen, l.key, g.file.length, g.hash), stamp }, refs: Object.keys(gen.tables).map((t) => [t, virtualRunRef(gen, l.key, t, g.file.length, g.hash)]) });
  }
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
  return { generations, runs: out, seen, leftovers };
}

/** The manifest's tables with pending runs on top. */
export function viewTables(manifest: ManifestWal, pending: PendingWal): Record<string, TableVersion> {
  const out: Record<string, TableVersion> = { ...manifest.tables };
  for (const [t, refs] of Object.entries(pending.runs)) out[t] = { runs: [...(manifest.tables[t]?.runs ?? []), ...refs] };
  return out;
}
