/**
 * Where search segments (table/search-segment.ts) come from: a cache in
 * memory, then the store, where each run's segment is kept beside it as a
 * derived object (`search/<run key>@<spec>`), then a build from the run
 * itself, stored for the next process. A segment is derived from its run
 * and the table's search spec alone, so it never goes stale: a run is
 * immutable, and another spec is another key. GC deletes a segment when
 * its run is gone (gc.ts); a transfer never sends one, since the
 * destination builds its own.
 *
 * Per table version, the live positions and field statistics
 * (search-rank.ts `liveIndex`) are decided once and kept: a version is
 * immutable too.
 */
import { mapLimit } from '../model/map-limit.js';
import { PromiseCache } from '../model/promise-cache.js';
import type { TableType } from '../model/schema.js';
import type { ObjectStore } from '../store/object-store.js';
import type { RunRef } from '../table/run.js';
import { liveIndex, type LiveIndex } from '../table/search-rank.js';
import {
  buildSegment,
  decodeSegment,
  encodeSegment,
  pieceStarts,
  searchSpecOf,
  type SearchSegment,
  type SearchSpec,
} from '../table/search-segment.js';
import type { LoadRun, TableVersion } from '../table/table-version.js';
import { keys, parseKey } from './keys.js';

export const DEFAULT_SEARCH_CACHE_BYTES = 256 * 1024 * 1024;
/** Versions whose live positions are kept. */
const LIVE_VERSIONS = 64;
/** Segments read or built at once. */
const SEGMENT_READS = 8;

/** One run of a version as search reads it: the run, its pieces (itself, or its segments) and where each starts. */
export interface SearchRun {
  run: RunRef;
  pieces: RunRef[];
  starts: number[];
}

/** A table version ready to search: its spec, its runs (oldest first, one search segment each) and their live index. */
export interface VersionSearch {
  spec: SearchSpec;
  runs: SearchRun[];
  index: LiveIndex;
}

export class SearchSegments {
  private readonly segments: PromiseCache<string, SearchSegment>;
  private readonly versions = new PromiseCache<string, VersionSearch>({ maxWeight: LIVE_VERSIONS });

  constructor(cacheBytes = DEFAULT_SEARCH_CACHE_BYTES) {
    this.segments = new PromiseCache({ maxWeight: cacheBytes, weigh: (s) => s.bytes });
  }

  /** A table version's segments and live index, through `store`. */
  async version(a: {
    store: ObjectStore;
    type: TableType;
    version: TableVersion;
    load: LoadRun;
    signal?: AbortSignal | undefined;
  }): Promise<VersionSearch> {
    const spec = searchSpecOf(a.type);
    const id = `${spec.hash} ${a.version.runs.map((r) => r.key).join(' ')}`;
    return this.versions.get(id, async () => {
      const runs = await mapLimit(a.version.runs, SEGMENT_READS, async (run) => {
        const pieces = run.segmented === true ? await a.load.segments(run) : [run];
        return { run, pieces, starts: pieceStarts(pieces.map((p) => p.rows)) };
      });
      const segments = await mapLimit(runs, SEGMENT_READS, (r) => this.segment({ ...a, spec, run: r }));
      return { spec, runs, index: await liveIndex(spec, segments) };
    });
  }

  private segment(a: {
    store: ObjectStore;
    spec: SearchSpec & { hash: string };
    run: SearchRun;
    load: LoadRun;
    signal?: AbortSignal | undefined;
  }): Promise<SearchSegment> {
    const { store, spec, run, signal } = a;
    const key = keys.searchSegment(run.run.key, spec.hash);
    // Only a stored run has a segment stored: rows held in memory (pending WAL rows, a dry run) are indexed afresh.
    const stored = parseKey(run.run.key)?.kind === 'run';
    return this.segments.get(key, async () => {
      if (stored) {
        const held = await store.get(key, { signal }).then(decodeSegment, () => undefined);
        if (held !== undefined && held.keys.length === run.run.rows) return held;
      }
      const load = a.load.uncached ?? a.load;
      const seg = await buildSegment(spec, await mapLimit(run.pieces, SEGMENT_READS, (p) => load(p)));
      // A segment that could not be stored is built again next time; the search goes on.
      if (stored) await store.putIfAbsent(key, encodeSegment(seg), { signal }).catch(() => undefined);
      return seg;
    });
  }

  clear(): void {
    this.segments.clear();
    this.versions.clear();
  }
}
