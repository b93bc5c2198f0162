/**
 * A load's spill: sorted chunks a bulk load (streaming-load.ts) sets aside
 * on local disk while it reads, and reads back one segment at a time for
 * its merges. The directory lives under the system's temporary directory
 * and is removed when the load ends, however it ends.
 *
 * Nothing here is durable or shared: a spill dies with its load (a load
 * that crashes leaves nothing published, and the next start's temporary
 * directory cleanup, or the operator, removes the files).
 *
 * Items are spilled as columns, not as objects: a segment is its items'
 * keys, the line (or row) each was read from, and one array per further
 * column, in V8's structured serialization. Serialized as objects, every
 * item carried its property names and came back as a handful of objects
 * to collect; as columns, a segment is a few arrays of strings and numbers.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { Slice } from '../model/turns.js';
import { mergeSorted, type KeyedSegment, type MergedBatch } from '../table/sorted-merge.js';

/** Items a segment holds: what a merge keeps in memory per spilled chunk. */
export const SPILL_SEGMENT_ITEMS = 512;
/**
 * The most chunks one merge reads at once. A merge holds a segment per chunk it reads, so
 * more chunks than this are first merged in groups into longer chunks (fanIn), and what a
 * merge holds stays bounded however long the input is.
 */
export const MAX_FAN_IN = 64;

/** Sorted items as columns: keys, where each was read, and the caller's further columns, each as long as `keys`. */
export interface SpillSegment extends KeyedSegment {
  readonly keys: string[];
  readonly lines: Uint32Array;
  readonly cols: unknown[][];
}

/** Where one segment of a chunk lies: a byte range of a spill file. */
export interface SpilledSegment {
  file: string;
  at: number;
  size: number;
}

/** One chunk as spilled: its segments in order. */
export interface SpilledChunk {
  segments: SpilledSegment[];
  items: number;
}

/** `items` in key order (equal keys in the order given), as a new segment. */
export function sortedSegment(items: SpillSegment): SpillSegment {
  const { keys } = items;
  const n = keys.length;
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  order.sort((x, y) => {
    const a = keys[x] as string;
    const b = keys[y] as string;
    return a < b ? -1 : a > b ? 1 : x - y;
  });
  // Gathered by loops: a map per column, or a typed array's `from` with a function, cost as much as the sort.
  const sortedKeys = new Array<string>(n);
  const lines = new Uint32Array(n);
  for (let i = 0; i < n; i++) {
    const o = order[i] as number;
    sortedKeys[i] = keys[o] as string;
    lines[i] = items.lines[o] as number;
  }
  const cols = items.cols.map((c) => {
    const out = new Array<unknown>(n);
    for (let i = 0; i < n; i++) out[i] = c[order[i] as number];
    return out;
  });
  return { keys: sortedKeys, lines, cols };
}

/** The items of a merged batch as one segment, in the batch's order. */
export function gathered(batch: MergedBatch<SpillSegment>): SpillSegment {
  const { segments, at } = batch;
  const n = at.length;
  const width = segments[0]?.cols.length ?? 0;
  const keys = new Array<string>(n);
  const lines = new Uint32Array(n);
  const cols = Array.from({ length: width }, () => new Array<unknown>(n));
  for (let i = 0; i < n; i++) {
    const s = segments[i] as SpillSegment;
    const p = at[i] as number;
    keys[i] = s.keys[p] as string;
    lines[i] = s.lines[p] as number;
    for (let c = 0; c < width; c++) (cols[c] as unknown[])[i] = (s.cols[c] as unknown[])[p];
  }
  return { keys, lines, cols };
}

/**
 * Chunks spilled in the order they are given, each written while the caller makes the next: at
 * most one write is in flight, so what is held besides the chunk being made is one chunk's bytes.
 */
export class ChunkWriter {
  private readonly written: SpilledChunk[] = [];
  private pending: Promise<SpilledChunk> | undefined;

  constructor(private readonly spill: LoadSpill) {}

  async add(items: SpillSegment): Promise<void> {
    await this.settle();
    const write = this.spill.write(items);
    // Awaited by the next add or by `chunks`; a load given up meanwhile must not leave it unheard.
    write.catch(() => undefined);
    this.pending = write;
  }

  /** Every chunk added, written. */
  async chunks(): Promise<SpilledChunk[]> {
    await this.settle();
    return this.written;
  }

  private async settle(): Promise<void> {
    const write = this.pending;
    this.pending = undefined;
    if (write !== undefined) this.written.push(await write);
  }
}

export class LoadSpill {
  private files = 0;
  /** Writes not yet done: `close` waits for them, so none lands in a directory being removed. */
  private readonly writing = new Set<Promise<void>>();

  private constructor(readonly dir: string) {}

  static async open(): Promise<LoadSpill> {
    return new LoadSpill(await mkdtemp(path.join(os.tmpdir(), 'branchgraph-load-')));
  }

  /**
   * Spill `items` (sorted by the caller) as segments, one after another in one file: a file per
   * segment cost an open, a write and a close each (800 files for 200,000 rows of one index),
   * queued on the thread pool behind the run's writes and fsyncs.
   */
  async write(items: SpillSegment): Promise<SpilledChunk> {
    const file = path.join(this.dir, String(this.files++));
    const parts: Buffer[] = [];
    const segments: SpilledSegment[] = [];
    const n = items.keys.length;
    let at = 0;
    for (let from = 0; from < n; from += SPILL_SEGMENT_ITEMS) {
      const to = Math.min(n, from + SPILL_SEGMENT_ITEMS);
      const part: SpillSegment =
        from === 0 && to === n
          ? items
          : { keys: items.keys.slice(from, to), lines: items.lines.subarray(from, to), cols: items.cols.map((c) => c.slice(from, to)) };
      const bytes = serialize(part);
      parts.push(bytes);
      segments.push({ file, at, size: bytes.length });
      at += bytes.length;
    }
    const write = writeFile(file, parts);
    // Tracked until it is done, whoever awaits it: `close` must not remove the directory under it.
    this.writing.add(write);
    void write.then(
      () => this.writing.delete(write),
      () => this.writing.delete(write),
    );
    await write;
    return { segments, items: n };
  }

  /**
   * A chunk's segments back, in order. Read on the loop, not on the thread pool: a segment is
   * some tens of kilobytes the load itself just wrote (a read of a few tens of microseconds from
   * the page cache), while the pool is busy with the run's writes and their fsyncs, behind which
   * the merges waited 0.4-0.5 s of a 3 s load of 200,000 rows for their reads ahead.
   */
  async *read(chunk: SpilledChunk): AsyncGenerator<SpillSegment> {
    let open: { file: string; fd: number } | undefined;
    try {
      for (const { file, at, size } of chunk.segments) {
        if (open?.file !== file) {
          if (open !== undefined) closeSync(open.fd);
          // Cleared first: an open that fails must not leave the closed descriptor to be closed again.
          open = undefined;
          open = { file, fd: openSync(file, 'r') };
        }
        const bytes = Buffer.allocUnsafe(size);
        for (let got = 0; got < size; ) {
          const n = readSync(open.fd, bytes, got, size - got, at + got);
          if (n === 0) throw new Error(`spill file ${file} ends before its segment at ${at} (${size} bytes)`);
          got += n;
        }
        yield deserialize(bytes) as SpillSegment;
      }
    } finally {
      if (open !== undefined) closeSync(open.fd);
    }
  }

  /**
   * One merge of `chunks`: their items in key order, equal keys in the chunks' order. Segments are
   * read without waiting on the pool, so nothing in a merge would give the loop a turn: the merge
   * gives one, between batches, once the batches and what its caller did with them held it for a
   * slice (model/turns.ts).
   */
  async *merged(chunks: readonly SpilledChunk[]): AsyncGenerator<MergedBatch<SpillSegment>> {
    const slice = new Slice();
    for await (const batch of mergeSorted<SpillSegment>({ sources: chunks.map((c) => this.read(c)) })) {
      yield batch;
      if (slice.due()) await slice.turn();
    }
  }

  /**
   * `chunks` as at most `fanIn` chunks holding the same items: consecutive groups are merged
   * into one chunk each, as often as it takes. Equal keys keep their order (an earlier chunk's
   * first), so the final merge sees what it would have seen reading every chunk at once.
   */
  async fanIn(chunks: SpilledChunk[], fanIn = MAX_FAN_IN): Promise<SpilledChunk[]> {
    let level = chunks;
    while (level.length > fanIn) {
      const next: SpilledChunk[] = [];
      for (let at = 0; at < level.length; at += fanIn) {
        const group = level.slice(at, at + fanIn);
        const merged: SpilledChunk = { segments: [], items: 0 };
        for await (const batch of this.merged(group)) {
          const part = await this.write(gathered(batch));
          merged.segments.push(...part.segments);
          merged.items += part.items;
        }
        // The group's files are read; a long load would otherwise need its input's size twice over in scratch.
        const files = new Set(group.flatMap((c) => c.segments.map((g) => g.file)));
        await Promise.all([...files].map((f) => rm(f, { force: true })));
        next.push(merged);
      }
      level = next;
    }
    return level;
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.writing);
    await rm(this.dir, { recursive: true, force: true });
  }
}
