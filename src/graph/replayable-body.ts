/**
 * A load body that can be read again from its start: an NDJSON load starts
 * on the bulk path (streaming-load.ts) before it knows that every line is
 * for it, and a line that is not (another table, a delete, a bad line)
 * sends the whole load to the general path, which reads the body from its
 * first byte.
 *
 * A body given whole (text or bytes) is simply given again. A body that
 * streams is copied to a local scratch file as it arrives, so a replay reads
 * the copy and then goes on with the stream where the reads before it left
 * off; the stream itself is read once. Only the bulk path's own streaming
 * is bounded by its chunk size: a body that goes to the general path is
 * held whole there, as any NDJSON load was before.
 *
 * One replay is read at a time. `close` removes the copy and lets go of the
 * stream, however far it was read.
 */
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LARGE_BYTES } from '../model/turns.js';
import type { LoadSource } from './load-source.js';

type Body = LoadSource['body'];

export class ReplayableBody {
  private copy: { dir: string; file: FileHandle } | undefined;
  private copied = 0;
  private source: AsyncIterator<Uint8Array> | undefined;
  private ended = false;

  private constructor(private readonly body: Body) {}

  static async of(body: Body): Promise<ReplayableBody> {
    const r = new ReplayableBody(body);
    if (typeof body === 'string' || body instanceof Uint8Array) return r;
    const dir = await mkdtemp(path.join(os.tmpdir(), 'branchgraph-body-'));
    r.copy = { dir, file: await open(path.join(dir, 'body'), 'w+') };
    r.source = body[Symbol.asyncIterator]();
    return r;
  }

  /** The body from its first byte. */
  replay(): Body {
    if (this.copy === undefined) return this.body;
    return this.pieces();
  }

  private async *pieces(): AsyncGenerator<Uint8Array> {
    const copy = this.copy as NonNullable<ReplayableBody['copy']>;
    // What earlier reads took from the stream, from the copy (each piece was written before it was given out).
    const upTo = this.copied;
    for (let at = 0; at < upTo; ) {
      const buffer = Buffer.allocUnsafe(Math.min(LARGE_BYTES, upTo - at));
      const { bytesRead } = await copy.file.read(buffer, 0, buffer.length, at);
      if (bytesRead === 0) throw new Error(`the load's copy of its body ends at ${at} of ${upTo} bytes`);
      at += bytesRead;
      yield buffer.subarray(0, bytesRead);
    }
    const source = this.source as AsyncIterator<Uint8Array>;
    while (!this.ended) {
      const step = await source.next();
      if (step.done === true) {
        this.ended = true;
        break;
      }
      const bytes = step.value;
      await copy.file.write(bytes, 0, bytes.length, this.copied);
      this.copied += bytes.length;
      yield bytes;
    }
  }

  async close(): Promise<void> {
    if (this.copy === undefined) return;
    const { file, dir } = this.copy;
    this.copy = undefined;
    if (!this.ended) await this.source?.return?.().catch(() => undefined);
    await file.close().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}
