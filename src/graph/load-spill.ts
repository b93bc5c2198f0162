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
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { mergeSorted, type KeyedSegment, type MergedBatch } from '../table/sorted-merge.js';

/** Items a segment holds: what a merge keeps in memory per spilled chunk (twice, with the next read ahead). */
export const SPILL_SEGMENT_ITEMS = 512;
/**
 * The most chunks one merge reads at once. A merge holds two segments per chunk it reads, so
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

/** One chunk as spilled: its segment files in order. */
export interface SpilledChunk {
  files: string[];
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

export class LoadSpill {
  private files = 0;

  private constructor(readonly dir: string) {}

  static async open(): Promise<LoadSpill> {
    return new LoadSpill(await mkdtemp(path.join(os.tmpdir(), 'branchgraph-load-')));
  }

  /** Spill `items` (sorted by the caller) as segments. */
  async write(items: SpillSegment): Promise<SpilledChunk> {
    const files: string[] = [];
    const n = items.keys.length;
    for (let at = 0; at < n; at += SPILL_SEGMENT_ITEMS) {
      const file = path.join(this.dir, String(this.files++));
      const end = Math.min(n, at + SPILL_SEGMENT_ITEMS);
      const part: SpillSegment =
        at === 0 && end === n
          ? items
          : { keys: items.keys.slice(at, end), lines: items.lines.subarray(at, end), cols: items.cols.map((c) => c.slice(at, end)) };
      await writeFile(file, serialize(part));
      files.push(file);
    }
    return { files, items: n };
  }

  /** A chunk's segments back, in order, the next read while the current one is used. */
  async *read(chunk: SpilledChunk): AsyncGenerator<SpillSegment> {
    let next = chunk.files.length > 0 ? readFile(chunk.files[0] as string) : undefined;
    for (let n = 0; next !== undefined; n++) {
      const bytes = await next;
      next = n + 1 < chunk.files.length ? readFile(chunk.files[n + 1] as string) : undefined;
      // A read ahead that fails while this segment is in use is reported when it is awaited.
      next?.catch(() => undefined);
      yield deserialize(bytes) as SpillSegment;
    }
  }

  /** One merge of `chunks`: their items in key order, equal keys in the chunks' order. */
  merged(chunks: readonly SpilledChunk[]): AsyncGenerator<MergedBatch<SpillSegment>> {
    return mergeSorted<SpillSegment>({ sources: chunks.map((c) => this.read(c)) });
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
        const merged: SpilledChunk = { files: [], items: 0 };
        for await (const batch of this.merged(group)) {
          const part = await this.write(gathered(batch));
          merged.files.push(...part.files);
          merged.items += part.items;
        }
        // The group's files are read; a long load would otherwise need its input's size twice over in scratch.
        await Promise.all(group.flatMap((c) => c.files.map((f) => rm(f, { force: true }))));
        next.push(merged);
      }
      level = next;
    }
    return level;
  }

  async close(): Promise<void> {
    await rm(this.dir, { recursive: true, force: true });
  }
}
