/**
 * A load's spill: sorted chunks a bulk load (streaming-load.ts) sets aside
 * on local disk while it reads, and reads back one segment at a time for
 * its merges. The directory lives under the system's temporary directory
 * and is removed when the load ends, however it ends.
 *
 * Nothing here is durable or shared: a spill dies with its load (a load
 * that crashes leaves nothing published, and the next start's temporary
 * directory cleanup, or the operator, removes the files). Segments are
 * V8's structured serialization, which keeps strings, numbers, null and
 * plain objects exactly and costs a fraction of the run encoding.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { deserialize, serialize } from 'node:v8';
import { mergeSorted } from '../table/sorted-merge.js';

/** Items a segment holds: what a merge keeps in memory per spilled chunk (twice, with the next read ahead). */
export const SPILL_SEGMENT_ITEMS = 512;
/**
 * The most chunks one merge reads at once. A merge holds two segments per chunk it reads, so
 * more chunks than this are first merged in groups into longer chunks (fanIn), and what a
 * merge holds stays bounded however long the input is.
 */
export const MAX_FAN_IN = 64;

/** One chunk as spilled: its segment files in order. */
export interface SpilledChunk {
  files: string[];
  items: number;
}

export class LoadSpill {
  private files = 0;

  private constructor(readonly dir: string) {}

  static async open(): Promise<LoadSpill> {
    return new LoadSpill(await mkdtemp(path.join(os.tmpdir(), 'branchgraph-load-')));
  }

  /** Spill `items` (sorted by the caller) as segments. */
  async write<T>(items: readonly T[]): Promise<SpilledChunk> {
    const files: string[] = [];
    for (let at = 0; at < items.length; at += SPILL_SEGMENT_ITEMS) {
      const file = path.join(this.dir, String(this.files++));
      await writeFile(file, serialize(items.slice(at, at + SPILL_SEGMENT_ITEMS)));
      files.push(file);
    }
    return { files, items: items.length };
  }

  /** A chunk's items back, a segment at a time, the next segment read while the current one is used. */
  async *read<T>(chunk: SpilledChunk): AsyncGenerator<T[]> {
    let next = chunk.files.length > 0 ? readFile(chunk.files[0] as string) : undefined;
    for (let n = 0; next !== undefined; n++) {
      const bytes = await next;
      next = n + 1 < chunk.files.length ? readFile(chunk.files[n + 1] as string) : undefined;
      // A read ahead that fails while this segment is in use is reported when it is awaited.
      next?.catch(() => undefined);
      yield deserialize(bytes) as T[];
    }
  }

  /**
   * `chunks` as at most `fanIn` chunks holding the same items: consecutive groups are merged
   * into one chunk each, as often as it takes. Equal keys keep their order (an earlier chunk's
   * first), so the final merge sees what it would have seen reading every chunk at once.
   */
  async fanIn<T>(chunks: SpilledChunk[], a: { keyOf: (item: T) => string; fanIn?: number }): Promise<SpilledChunk[]> {
    const most = a.fanIn ?? MAX_FAN_IN;
    let level = chunks;
    while (level.length > most) {
      const next: SpilledChunk[] = [];
      for (let at = 0; at < level.length; at += most) {
        const group = level.slice(at, at + most);
        const merged: SpilledChunk = { files: [], items: 0 };
        for await (const batch of mergeSorted<T>({ sources: group.map((c) => this.read<T>(c)), keyOf: a.keyOf })) {
          const part = await this.write(batch.map((b) => b.item));
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
