/**
 * Where search segments (table/search-segment.ts) come from: a cache in
 * memory, then the store, where each piece's segment is kept beside its run
 * as a derived object (`search/<piece key>@<spec>`), then a build from the
 * piece itself, stored for the next process. A segment is derived from its
 * piece and the table's search spec alone, so it never goes stale: a piece
 * is immutable, and another spec is another key. GC deletes a segment when
 * its piece is gone (gc.ts); a transfer never sends one, since the
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
import { buildSegment, decodeSegment, encodeSegment, searchSpecOf, type SearchSegment, type SearchSpec } from '../table/search-segment.js';
import type { LoadRun, TableVersion } from '../table/table-version.js';
import { keys, parseKey } from './keys.js';

export const DEFAULT_SEARCH_CACHE_BYTES = 256 * 1024 * 1024;
/** Versions whose live positions are kept. */
const LIVE_VERSIONS = 64;
/** Segments read or built at once. */
const SEGMENT_READS = 8;

/** A table version ready to search: its spec, its pieces (oldest first) and their live index. */
export interface VersionSearch {
  spec: SearchSpec;
  pieces: RunRef[];
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
    const pieces = (
      await mapLimit(a.version.runs, SEGMENT_READS, (r) => (r.segmented === true ? a.load.segments(r) : Promise.resolve([r])))
    ).flat();
    const id = `${spec.hash} ${pieces.map((p) => p.key).join(' ')}`;
    return this.versions.get(id, async () => {
      const segments = await mapLimit(pieces, SEGMENT_READS, (p) => this.segment({ ...a, spec, piece: p }));
      return { spec, pieces, index: liveIndex(spec, segments) };
    });
  }

  private segment(a: {
    store: ObjectStore;
    spec: SearchSpec & { hash: string };
    piece: RunRef;
    load: LoadRun;
    signal?: AbortSignal | undefined;
  }): Promise<SearchSegment> {
    const { store, spec, piece, signal } = a;
    const key = keys.searchSegment(piece.key, spec.hash);
    // Only a stored run's piece has a segment stored: rows held in memory (pending WAL rows, a dry run) are indexed afresh.
    const stored = parseKey(piece.key)?.kind === 'run';
    return this.segments.get(key, async () => {
      if (stored) {
        const held = await store.get(key, { signal }).then(decodeSegment, () => undefined);
        if (held !== undefined && held.keys.length === piece.rows) return held;
      }
      const seg = buildSegment(spec, await (a.load.uncached ?? a.load)(piece));
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
