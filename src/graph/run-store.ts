/**
 * Reading and writing runs through the object store, with a byte-bounded
 * cache of decoded runs. Runs are immutable, so a cached run never goes
 * stale; the cache only bounds memory. Concurrent loads of one run share a
 * single read.
 *
 * A run of one object (at most SEGMENT_ROWS rows), or of a few segments
 * whose rows are in hand, is usable once it is encoded: its ref and decoded
 * rows are known then, and its puts go on while the caller carries on. A
 * write's run is thus stored beside the commit and event that name it, not
 * a round trip before them. Nothing may name a run before it is stored, so
 * whoever makes a run durable waits for it (`stored`: the publisher, before
 * it writes a manifest); a read of a run still being stored waits for the
 * put, and a delete lets it settle first.
 */
import type { TableType } from '../model/schema.js';
import { INLINE_BOUND, type InlineBound } from '../table/compaction-policy.js';
import type { ObjectStore } from '../store/object-store.js';
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { PromiseCache } from '../model/promise-cache.js';
import { bytesHash } from '../model/canonical.js';
import type { CacheReads } from '../store/counting-store.js';
import {
  decodeRun,
  decodeRunOffLoop,
  COMPACT_RUN_ROWS,
  compareKey,
  MemoryRunData,
  runRefOf,
  SEGMENT_ROWS,
  verifyChecksum,
  type RunData,
  type RunRef,
  type RunRow,
} from '../table/run.js';
import { encodeRun, encodeRunFileOffLoop, encodeRunFile } from '../table/run-encode.js';
import { newestRows } from '../table/table-lookup.js';
import { type LoadRun } from '../table/table-version.js';
import { COMPACT_RUN_SUFFIX, keys, parseKey } from './keys.js';
import type { RunReader, RunWriter } from './ports.js';
import { RunRefZ } from './manifest.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import {
  decodeGeneration,
  decodeGenerationInSlices,
  GenerationFoldedError,
  generationRows,
  isPendingRun,
  readGenerationHeader,
  type Generation,
  type GenerationHeader,
} from '../pending/generation.js';
import { newId } from '../model/new-id.js';
import { nextTurn, Slice } from '../model/turns.js';

/** A run written row by row (RunStore.openRun). */
export interface RunSink {
  /** Rows in key order, after every row pushed before. */
  push(rows: readonly RunRow[]): Promise<void>;
  close(): Promise<RunRef | undefined>;
  abort(): Promise<void>;
}

export const DEFAULT_RUN_CACHE_BYTES = 256 * 1024 * 1024;
const WRITE_CONCURRENCY = 8;
/**
 * The most rows in hand a run is stored aside as segments at once (RunStore.segmentedAside): as
 * many segments as a streamed run keeps in flight, so it holds no more encoded bytes than one.
 */
const ASIDE_MAX_ROWS = SEGMENT_ROWS * WRITE_CONCURRENCY;

const RunIndexZ = z.object({ format: z.literal(1), segments: z.array(RunRefZ) });
const ReplacedZ = z.object({ format: z.literal(1), runs: z.array(RunRefZ) });

/** A generation's stored bytes, their hash and what orders it, read once. */
export interface GenerationFile {
  file: Uint8Array;
  /** bytesHash of the file, computed once: every head resolution overlays the pending generations again. */
  hash: string;
  header: GenerationHeader;
}

export interface LoadedGeneration extends GenerationFile {
  generation: Generation;
}

class RunCache {
  /** Decoded runs, by key and the table shape they were decoded for, weighed by stored bytes. */
  readonly runs: PromiseCache<string, RunData>;
  readonly indexes = new PromiseCache<string, RunRef[]>();
  /** What compacted runs replaced: small, immutable, read when a delta spans a compaction. */
  readonly replaced = new PromiseCache<string, RunRef[]>({ maxWeight: 10_000 });
  /** Pending WAL generations, immutable like runs; bounded separately (they are read as a group). */
  readonly generations: PromiseCache<string, LoadedGeneration>;
  /** Their stored bytes, for listing in order before (or without) decoding rows. */
  readonly generationFiles: PromiseCache<string, GenerationFile>;
  /** Puts of runs under way, by object key; a failed one is kept until the run is deleted, so whoever waits for it learns it. */
  readonly storing = new Map<string, Promise<void>>();
  constructor(
    readonly limit: number,
    readonly clock: () => number,
  ) {
    this.runs = new PromiseCache({ maxWeight: limit });
    this.generations = new PromiseCache({ maxWeight: limit / 4, weigh: (g) => g.file.length });
    this.generationFiles = new PromiseCache({ maxWeight: limit / 4, weigh: (g) => g.file.length });
  }
}

export class RunStore implements RunReader, RunWriter {
  private readonly shared: RunCache;

  /** Where reads the cache answers are noted (a request's counting store), if anywhere. */
  private readonly reads: CacheReads | undefined;

  constructor(
    private readonly store: ObjectStore,
    opts: {
      cacheBytes?: number | undefined;
      shared?: RunCache;
      clock?: () => number;
      inlineCompaction?: InlineBound | false | undefined;
      reads?: CacheReads | undefined;
    } = {},
  ) {
    this.shared = opts.shared ?? new RunCache(opts.cacheBytes ?? DEFAULT_RUN_CACHE_BYTES, opts.clock ?? Date.now);
    this.reads = opts.reads;
    this.inlineCompaction = opts.inlineCompaction === undefined ? INLINE_BOUND : opts.inlineCompaction;
  }

  /** When a write folds a table's newest runs itself (graph/append-run.ts); false: never. */
  readonly inlineCompaction: InlineBound | false;

  /** The same cache, with calls going through another store; `reads` notes what the cache answers. */
  withStore(store: ObjectStore, reads?: CacheReads): RunStore {
    return new RunStore(store, { shared: this.shared, inlineCompaction: this.inlineCompaction, reads });
  }

  private get indexes(): PromiseCache<string, RunRef[]> {
    return this.shared.indexes;
  }

  /**
   * Make rows readable as a run without storing them (dry runs). The ref's
   * key is outside the run key space, so it can never be published.
   */
  stage(table: TableType, rows: readonly RunRow[]): RunRef {
    const key = `staged/${table.name}/${newId()}`;
    const bytes = encodeRunFile(table, rows);
    const ref: RunRef = { ...runRefOf({ key, rows, file: bytes }), source: { kind: 'staged' } };
    this.shared.runs.set(
      runCacheKey(table, key),
      decodeRun({ table, bytes, objectKey: key }),
      runWeight(rows.length <= COMPACT_RUN_ROWS, rows.length, bytes.length),
    );
    return ref;
  }

  /**
   * Write `rows` (sorted, unique keys) as a new run of `table`: one compact
   * file of a few rows, one Arrow file, or, above SEGMENT_ROWS rows, Arrow
   * segment files plus an index object.
   * The index is written last, so a run is never referenced half-written.
   */
  write(table: TableType, rows: readonly RunRow[], signal?: AbortSignal): Promise<RunRef> {
    // The id carries the write time, which GC reads as the run's age: it comes from the graph's clock.
    return this.writeAs({ table, rows, id: newId(this.shared.clock()), signal });
  }

  /** `write` under a chosen id, so objects that belong to the run can be written beside it. */
  private async writeAs(a: { table: TableType; rows: readonly RunRow[]; id: string; signal?: AbortSignal | undefined }): Promise<RunRef> {
    const { table, rows, id, signal } = a;
    if (rows.length <= SEGMENT_ROWS) {
      const compact = rows.length <= COMPACT_RUN_ROWS;
      const key = compact ? keys.compactRun(table.name, id) : keys.run(table.name, id);
      const bytes = await encodeRunFileOffLoop(table, rows);
      this.storeAside(key, this.store.putIfAbsent(key, bytes, { signal }));
      // The next write or merge on the table reads this run first: keep it rather than read it back.
      // A compact run is its rows as JSON, so the rows in hand are what decoding it would give.
      const data = compact ? new MemoryRunData(table, rows, bytes.length) : decodeRun({ table, bytes, objectKey: key });
      this.shared.runs.set(runCacheKey(table, key), data, runWeight(compact, rows.length, bytes.length));
      return runRefOf({ key, rows, file: bytes });
    }
    if (rows.length <= ASIDE_MAX_ROWS) return this.segmentedAside({ table, rows, id, signal });
    const sink = this.openRun(table, { id, signal });
    try {
      await sink.push(rows);
      return (await sink.close()) as RunRef;
    } catch (e) {
      await sink.abort();
      throw e;
    }
  }

  /**
   * A run of a few segments whose rows are in hand (a large write, a write's inline compaction):
   * every segment and the index are put at once and stored aside as one run, as a run of one
   * object is. Written as `openRun` writes, the index would wait for the segments, and the write
   * for the index: two more round trips on its path. The index still names no segment that is not
   * stored by the time anything names the run, since that waits for the whole run (`stored`).
   */
  private async segmentedAside(a: {
    table: TableType;
    rows: readonly RunRow[];
    id: string;
    signal?: AbortSignal | undefined;
  }): Promise<RunRef> {
    const { table, rows, id, signal } = a;
    const segments: RunRef[] = [];
    const puts: Promise<unknown>[] = [];
    for (let at = 0; at < rows.length; at += SEGMENT_ROWS) {
      if (at > 0) await nextTurn();
      const { ref, bytes } = segmentOf(table, { id, n: segments.length, rows: rows.slice(at, at + SEGMENT_ROWS) });
      segments.push(ref);
      const put = this.store.putIfAbsent(ref.key, bytes, { signal });
      this.storeAside(ref.key, put);
      puts.push(put);
      // The next write or merge on the table reads these first, as a run of one object.
      this.shared.runs.set(
        runCacheKey(table, ref.key),
        decodeRun({ table, bytes, objectKey: ref.key }),
        runWeight(false, ref.rows, bytes.length),
      );
    }
    const index = this.indexOf(table, id, segments);
    puts.push(this.store.putIfAbsent(index.key, index.bytes, { signal }));
    // Settled only once every put is: a delete must not run while one is still under way.
    this.storeAside(
      index.key,
      Promise.allSettled(puts).then((all) => {
        for (const r of all) if (r.status === 'rejected') throw r.reason;
      }),
    );
    return index.ref;
  }

  /** A segmented run's index object, known from now on (indexes are immutable), and the run's ref. */
  private indexOf(table: TableType, id: string, segments: RunRef[]): { key: string; bytes: Uint8Array; ref: RunRef } {
    const key = keys.runIndex(table.name, id);
    const bytes = encodeJson({ format: 1, segments });
    this.indexes.set(key, segments);
    const rows = segments.reduce((n, s) => n + s.rows, 0);
    return { key, bytes, ref: segmentedRef(runRefOf({ key, rows: [], file: bytes }), { segments, rows }) };
  }

  /**
   * A segmented run written as its rows arrive in key order (a bulk load's merge): a segment is
   * encoded and stored every SEGMENT_ROWS rows, at most WRITE_CONCURRENCY in flight, and the index
   * last, so memory holds a few segments whatever the run's size and a run is never referenced
   * half-written. `close` gives the run (undefined when no row came); `abort` removes what landed.
   */
  openRun(table: TableType, opts: { id?: string; signal?: AbortSignal | undefined } = {}): RunSink {
    const { signal } = opts;
    const id = opts.id ?? newId(this.shared.clock());
    const segments: RunRef[] = [];
    const written: string[] = [];
    const inFlight = new Set<Promise<void>>();
    let failed: unknown;
    let buffer: RunRow[] = [];
    let last: string | undefined;
    let total = 0;
    // A segment's encoding is a millisecond or so; a store that answers at once (memory, a fast
    // disk under WRITE_CONCURRENCY) never makes a push wait, and 400 segments held the loop 344 ms.
    const slice = new Slice();
    const cut = async (): Promise<void> => {
      if (slice.due()) await slice.turn();
      const { ref, bytes } = segmentOf(table, { id, n: segments.length, rows: buffer });
      buffer = [];
      segments.push(ref);
      const put = this.store.putIfAbsent(ref.key, bytes, { signal }).then(
        () => void written.push(ref.key),
        (e: unknown) => {
          failed ??= e;
        },
      );
      inFlight.add(put);
      void put.finally(() => inFlight.delete(put));
      while (inFlight.size >= WRITE_CONCURRENCY) await Promise.race(inFlight);
      if (failed !== undefined) throw failed;
    };
    const settled = async (): Promise<void> => {
      await Promise.all(inFlight);
      if (failed !== undefined) throw failed;
    };
    return {
      push: async (rows) => {
        for (const r of rows) {
          if (last !== undefined && compareKey(last, r.key) >= 0) throw new Error(`run rows out of order at ${r.key}`);
          last = r.key;
          buffer.push(r);
          total++;
          if (buffer.length === SEGMENT_ROWS) await cut();
        }
      },
      close: async () => {
        if (segments.length === 0) return total === 0 ? undefined : this.writeAs({ table, rows: buffer, id, signal });
        if (buffer.length > 0) await cut();
        await settled();
        const index = this.indexOf(table, id, segments);
        await this.store.putIfAbsent(index.key, index.bytes, { signal });
        return index.ref;
      },
      abort: async () => {
        await Promise.allSettled(inFlight);
        await this.store.deleteMany(written).catch(() => undefined);
      },
    };
  }

  /**
   * Collapse `refs` (oldest first) into one stored run holding each key's
   * newest state, tombstones kept (they still shadow older runs beneath).
   * Undefined when there is nothing to store. Folding pending WAL
   * generations, by a publication or by catch-up, is exactly this.
   */
  async writeNewest(table: TableType, refs: readonly RunRef[], signal?: AbortSignal): Promise<{ ref: RunRef; rows: number } | undefined> {
    const rows = await newestRows(refs, this.loader(table, signal));
    return rows.length === 0 ? undefined : { ref: await this.write(table, rows, signal), rows: rows.length };
  }

  /** The segments of a segmented run (read once, then cached: indexes are immutable). */
  segments(ref: RunRef, signal?: AbortSignal): Promise<RunRef[]> {
    if (!ref.segmented) return Promise.resolve([ref]);
    return this.indexes.get(ref.key, () =>
      this.store.get(ref.key, { signal }).then((b) => {
        verifyChecksum(ref, b);
        const segments = decodeJson(RunIndexZ, b, ref.key).segments;
        if (segments.reduce((n, x) => n + x.rows, 0) !== ref.rows)
          throw new BranchgraphError('corrupt_object', `run index ${ref.key} does not add up to ${ref.rows} rows`, {
            details: { key: ref.key },
          });
        return segments;
      }),
    );
  }

  /** Every object key a run occupies. */
  async objectKeys(ref: RunRef, signal?: AbortSignal): Promise<string[]> {
    const own = ref.segmented ? [ref.key, ...(await this.segments(ref, signal)).map((s) => s.key)] : [ref.key];
    return ref.compacted ? [...own, replacedKey(ref)] : own;
  }

  /**
   * Compact `refs` (a contiguous stretch of a table's runs, oldest first)
   * into one run that reads the same in their place, and record what it
   * replaced. Tombstones are kept unless the stretch starts at the table's
   * oldest run (`dropTombstones`), where they shadow nothing. Undefined when
   * nothing is left to store.
   */
  async writeCompacted(request: {
    type: TableType;
    refs: readonly RunRef[];
    dropTombstones: boolean;
    signal?: AbortSignal | undefined;
  }): Promise<RunRef | undefined> {
    const { type: table, refs, dropTombstones, signal } = request;
    const newest = await newestRows(refs, this.loader(table, signal));
    const rows = dropTombstones ? newest.filter((r) => !r.tomb) : newest;
    if (rows.length === 0) return undefined;
    // Whether a key's deletion may have vanished here: entity history looks for it (graph/entity-history.ts).
    const dropped = (dropTombstones && refs.some((r) => r.tombstones > 0)) || refs.some((r) => r.dropped === true);
    // The list of what it replaced is keyed by the run's id alone, so both are written at once, and
    // stored aside as one: a manifest names the run only once both landed; either one alone is garbage.
    const id = newId(this.shared.clock());
    const listKey = keys.runReplaced(table.name, id);
    const listed = this.store.putIfAbsent(listKey, encodeJson({ format: 1, runs: refs }), { signal });
    // Observed at once: a failure is reported through `stored`, or below.
    listed.catch(() => undefined);
    let run: RunRef;
    try {
      run = await this.writeAs({ table, rows, id, signal });
    } catch (e) {
      await listed.catch(() => undefined);
      await this.store.deleteMany([listKey]).catch(() => undefined);
      throw e;
    }
    // Settled only once both are: a delete must not run while either put is still under way.
    const both = Promise.allSettled([this.shared.storing.get(run.key), listed]).then((all) => {
      for (const r of all) if (r.status === 'rejected') throw r.reason;
    });
    this.storeAside(run.key, both);
    const ref: RunRef = { ...run, compacted: true, ...(dropped ? { dropped } : {}) };
    this.shared.replaced.set(ref.key, [...refs]);
    return ref;
  }

  /** Note a run's put under way (see the header). */
  private storeAside(key: string, put: Promise<unknown>): void {
    // Forgotten once stored, unless a later note for the key (a compacted run's, with its list) took its place.
    const stored: Promise<void> = put.then(() => {
      if (this.shared.storing.get(key) === stored) this.shared.storing.delete(key);
    });
    // Observed here; the failure is kept for whoever waits for the run.
    stored.catch(() => undefined);
    this.shared.storing.set(key, stored);
  }

  /** Settles once every run of `refs` is stored (those written earlier are); rejects with a failed put's error. */
  async stored(refs: Iterable<RunRef>): Promise<void> {
    // Most publications find nothing under way: a big manifest's runs are not walked for nothing.
    if (this.shared.storing.size === 0) return;
    const puts: Promise<void>[] = [];
    for (const r of refs) {
      const put = this.shared.storing.get(r.key);
      if (put !== undefined) puts.push(put);
    }
    await Promise.all(puts);
  }

  /** The runs a compacted run replaced, oldest first. */
  replacedBy(ref: RunRef, signal?: AbortSignal): Promise<RunRef[]> {
    if (!ref.compacted) return Promise.resolve([ref]);
    const key = replacedKey(ref);
    return this.shared.replaced.get(ref.key, () => this.store.get(key, { signal }).then((b) => decodeJson(ReplacedZ, b, key).runs));
  }

  /**
   * A WAL generation object's bytes and header; the rows are decoded only
   * when asked (`generation`), so catch-up can order what is pending
   * without decoding it. An object without the header form is decoded here.
   */
  generationFile(key: string, signal?: AbortSignal): Promise<GenerationFile> {
    this.noteCached(this.shared.generationFiles, key);
    return this.shared.generationFiles.get(key, () =>
      this.store.get(key, { signal }).then(
        (file) => {
          const hash = bytesHash(file);
          const header = readGenerationHeader(file, key);
          if (header !== undefined) return { file, hash, header };
          const generation = decodeGeneration(file, key);
          this.shared.generations.set(key, { generation, file, hash, header: generation });
          return {
            file,
            hash,
            header: { lineage: generation.lineage, shard: generation.shard, seq: generation.seq, stamp: generation.stamp },
          };
        },
        (e: unknown) => {
          // Listed as pending, gone now: a publication folded it and deleted the object. The branch
          // moved on under this request; its rows are in the tables of a newer head.
          if (isBranchgraphError(e, 'object_not_found')) throw new GenerationFoldedError(key, e);
          throw e;
        },
      ),
    );
  }

  /** Note a generation the cache holds as read from it (its bytes are known once it has loaded). */
  private noteCached<F extends GenerationFile>(cache: PromiseCache<string, F>, key: string): void {
    const held = this.reads === undefined ? undefined : cache.peek(key);
    if (held !== undefined)
      void held.then(
        (f) => this.reads?.cached(f.file.length),
        () => undefined,
      );
  }

  /** A WAL generation object, decoded; cached because every head resolution overlays the pending ones. */
  generation(key: string, signal?: AbortSignal): Promise<LoadedGeneration> {
    this.noteCached(this.shared.generations, key);
    return this.shared.generations.get(key, async () => {
      const f = await this.generationFile(key, signal);
      const generation = await decodeGenerationInSlices(f.file, key);
      // The rows' header must be the one the listing ordered by.
      if (generation.stamp !== f.header.stamp)
        throw new BranchgraphError('corrupt_object', `${key}: its stamp differs from its header`, { details: { key } });
      return { ...f, generation };
    });
  }

  /** A run, from the cache or the store; `cache: false` reads it without keeping it (a walk that passes once). */
  load(table: TableType, ref: RunRef, opts: { signal?: AbortSignal | undefined; cache?: boolean } = {}): Promise<RunData> {
    const { signal, cache = true } = opts;
    const key = runCacheKey(table, ref.key);
    if (this.reads !== undefined && this.shared.runs.peek(key) !== undefined) this.reads.cached(ref.bytes);
    const weight = runWeight(ref.key.endsWith(COMPACT_RUN_SUFFIX), ref.rows, ref.bytes);
    const shared = cache ? this.shared.runs.get(key, () => this.read(table, ref, signal), weight) : this.shared.runs.peek(key);
    if (shared === undefined) return this.read(table, ref, signal);
    // A read another request started, and aborted, is not this caller's failure: read it once more, as its own.
    return shared.catch((e: unknown) => {
      if (!isBranchgraphError(e, 'aborted') || signal?.aborted === true) throw e;
      return cache ? this.shared.runs.get(key, () => this.read(table, ref, signal), weight) : this.read(table, ref, signal);
    });
  }

  private read(table: TableType, ref: RunRef, signal?: AbortSignal): Promise<RunData> {
    return isPendingRun(ref)
      ? this.generation(ref.source.generation, signal).then(({ generation, hash }) => {
          // The generation's hash was computed once when it was read: the same object the ref was made from.
          if (hash !== ref.checksum)
            throw new BranchgraphError('corrupt_object', `${ref.key} does not match its checksum`, { details: { key: ref.key } });
          return new MemoryRunData(table, generationRows(generation, ref.source.table), ref.bytes) as RunData;
        })
      : this.storedBytes(ref, signal).then((bytes) => {
          verifyChecksum(ref, bytes);
          return decodeRunOffLoop({ table, bytes, objectKey: ref.key, expected: ref });
        });
  }

  /** A run's object, once it is stored. */
  private async storedBytes(ref: RunRef, signal: AbortSignal | undefined): Promise<Uint8Array> {
    await this.shared.storing.get(ref.key);
    return await this.store.get(ref.key, { signal });
  }

  loader(table: TableType, signal?: AbortSignal): LoadRun {
    return Object.assign((ref: RunRef) => this.load(table, ref, { signal }), {
      segments: (ref: RunRef) => this.segments(ref, signal),
      replaced: (ref: RunRef) => this.replacedBy(ref, signal),
      uncached: (ref: RunRef) => this.load(table, ref, { signal, cache: false }),
      raw: (ref: RunRef) => this.raw(table, ref, signal),
    });
  }

  /** A run's bytes read and checked now, decoded when the returned function is called (uncached). */
  private raw(table: TableType, ref: RunRef, signal?: AbortSignal): Promise<() => RunData> {
    if (isPendingRun(ref) || this.shared.runs.peek(runCacheKey(table, ref.key)) !== undefined)
      return this.load(table, ref, { signal, cache: false }).then((d) => () => d);
    return this.storedBytes(ref, signal).then((bytes) => {
      verifyChecksum(ref, bytes);
      return () => decodeRun({ table, bytes, objectKey: ref.key, expected: ref });
    });
  }

  async delete(refs: readonly RunRef[], signal?: AbortSignal): Promise<void> {
    // A pending run names a WAL generation, which only a fold deletes; staged rows are not stored.
    refs = refs.filter((r) => r.source === undefined);
    if (refs.length === 0) return;
    // A put still under way would land after the delete and leave its object behind.
    await Promise.allSettled(refs.map((r) => this.shared.storing.get(r.key)));
    const all = (await Promise.all(refs.map((r) => this.objectKeys(r, signal).catch(() => [r.key])))).flat();
    // A segmented run stored aside noted each segment's put besides the run's (a failed one stays noted until now).
    for (const key of all) this.shared.storing.delete(key);
    await this.store.deleteMany(all, { signal });
  }

  clear(): void {
    this.shared.runs.clear();
    this.shared.generations.clear();
    this.shared.generationFiles.clear();
    this.shared.replaced.clear();
    this.indexes.clear();
  }
}

/**
 * What a cached run weighs against the cache's budget. A compact run is held as row objects, about
 * ten times its compressed bytes (sixteen for text that compresses well) and some 300 bytes a row
 * at least. Weighed by its stored bytes, 8,000 writes of 100 rows held 750 MB of heap under the
 * 256 MB budget, and growing; weighed so, the heap stays near 370 MB. An Arrow run holds its
 * stored bytes (its columns read from them) and, decoded eagerly, each row's key and hash, about
 * 120 bytes a row; a run read past a few rows has its columns decoded into values in place of the
 * bytes, about 180 bytes a row more than they were stored in. Weighed by its stored bytes alone,
 * runs of 1,024 five-column rows held 2.6 times their weight once read, and 1.5 times for rows of
 * 370 bytes; weighed as their bytes and 192 bytes a row, at most their weight in both.
 */
function runWeight(compact: boolean, rows: number, bytes: number): number {
  return compact ? Math.max(bytes * COMPACT_HEAP_PER_BYTE, rows * COMPACT_HEAP_PER_ROW) : bytes + rows * ARROW_HEAP_PER_ROW;
}
const COMPACT_HEAP_PER_BYTE = 16;
const COMPACT_HEAP_PER_ROW = 320;
const ARROW_HEAP_PER_ROW = 192;

/** Where the list of what a compacted run replaced is stored: beside the run, under its id. */
function replacedKey(ref: RunRef): string {
  const parsed = parseKey(ref.key);
  if (parsed?.kind !== 'run') throw new BranchgraphError('internal', `${ref.key} is not a stored run`);
  return keys.runReplaced(parsed.table, parsed.id);
}

/** Decoding depends on the table's properties, so the schema shape is part of a run's cache key. */
function runCacheKey(table: TableType, key: string): string {
  return `${key}\u0000${propNames(table)}`;
}

/** A table type's property names as the cache key spells them, made once per type: a lookup loads a run per probe's segment. */
const PROP_NAMES = new WeakMap<TableType, string>();

function propNames(table: TableType): string {
  // An index's type has no properties, and is made anew for each read of it (secondary-index.ts).
  if (table.props.length === 0) return '';
  let names = PROP_NAMES.get(table);
  if (names === undefined) {
    names = table.props.map((p) => p.name).join(',');
    PROP_NAMES.set(table, names);
  }
  return names;
}

/** Segment `n` of run `id`, encoded, with its ref. */
function segmentOf(table: TableType, a: { id: string; n: number; rows: readonly RunRow[] }): { ref: RunRef; bytes: Uint8Array } {
  const key = keys.runSegment(table.name, a.id, a.n);
  const bytes = encodeRun(table, a.rows);
  return { ref: runRefOf({ key, rows: a.rows, file: bytes }), bytes };
}

/** The ref of a segmented run: its index object's, with the rows, bytes and key range of its segments. */
function segmentedRef(index: RunRef, of: { segments: readonly RunRef[]; rows: number }): RunRef {
  const { segments } = of;
  const first = segments[0] as RunRef;
  const end = segments[segments.length - 1] as RunRef;
  return {
    ...index,
    bytes: segments.reduce((n, s) => n + s.bytes, 0),
    rows: of.rows,
    tombstones: segments.reduce((n, s) => n + s.tombstones, 0),
    minKey: first.minKey,
    maxKey: end.maxKey,
    ...(first.keysCut === true || end.keysCut === true ? { keysCut: true } : {}),
    segmented: true,
  };
}
