/**
 * Reading request bodies with bounded memory. A body is read only after
 * the caller authenticated (the middleware in app.ts), never beyond the
 * per-request limit (a declared Content-Length over it is refused before a
 * byte is read), and all bodies being read at once share one budget, so a
 * crowd of large uploads is answered `overloaded` instead of filling the
 * heap. Streamed bodies (ingest) are never buffered: they pass through
 * chunk by chunk.
 */
import { BranchgraphError } from '../model/errors.js';
import { LARGE_BYTES, nextTurn } from '../model/turns.js';

/** Bytes of request bodies held in memory by this process at once. */
export class BodyBudget {
  private used = 0;
  constructor(readonly limit: number) {}

  take(bytes: number): void {
    if (this.used + bytes > this.limit) {
      throw new BranchgraphError('overloaded', `request bodies in flight would exceed ${this.limit} bytes; retry shortly`, {
        details: { limit: this.limit },
      });
    }
    this.used += bytes;
  }

  give(bytes: number): void {
    this.used = Math.max(0, this.used - bytes);
  }

  get inUse(): number {
    return this.used;
  }
}

function tooLarge(max: number): BranchgraphError {
  return new BranchgraphError('payload_too_large', `request bodies are limited to ${max} bytes`, { details: { limit: max } });
}

/** The body's declared length, when it declares a usable one. */
function declaredLength(req: Request): number | undefined {
  const declared = req.headers.get('content-length');
  if (declared === null || !/^\d+$/.test(declared)) return undefined;
  return Number(declared);
}

/** A body without a declared length, read chunk by chunk and refused as soon as it passes `max`; `take` holds each chunk. */
async function readChunked(req: Request, max: number, take: (n: number) => void): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body !== null) {
    for await (const chunk of req.body as unknown as AsyncIterable<Uint8Array>) {
      if (size + chunk.length > max) throw tooLarge(max);
      take(chunk.length);
      size += chunk.length;
      chunks.push(chunk);
    }
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.length;
  }
  return all;
}

/** The whole body's bytes, at most `max`, held against `budget` until `release` is called. */
export async function readBodyBytes(req: Request, max: number, budget: BodyBudget): Promise<{ bytes: Uint8Array; release: () => void }> {
  const declared = declaredLength(req);
  // Refused before a byte is read.
  if (declared !== undefined && declared > max) throw tooLarge(max);
  let size = 0;
  const release = (): void => budget.give(size);
  try {
    if (declared !== undefined) {
      // A declared length is the most the HTTP parser lets through, so the body is held against the
      // budget before it is read and taken whole: the server adapter then reads it from the socket
      // without the web stream a chunk-by-chunk read goes through.
      budget.take(declared);
      size = declared;
      const bytes = new Uint8Array(await req.arrayBuffer());
      if (bytes.length > max) throw tooLarge(max);
      return { bytes, release };
    }
    const bytes = await readChunked(req, max, (n) => {
      budget.take(n);
      size += n;
    });
    return { bytes, release };
  } catch (e) {
    release();
    if (e instanceof BranchgraphError) throw e;
    throw new BranchgraphError('aborted', 'the request body ended before it was complete', { cause: e });
  }
}

/** The whole body as text, at most `max` bytes, its bytes held against `budget` until `release` is called. */
export async function readBodyText(req: Request, max: number, budget: BodyBudget): Promise<{ text: string; release: () => void }> {
  const { bytes, release } = await readBodyBytes(req, max, budget);
  try {
    if (bytes.length >= LARGE_BYTES) await nextTurn();
    return { text: new TextDecoder('utf-8', { fatal: true }).decode(bytes), release };
  } catch {
    release();
    throw new BranchgraphError('invalid_input', 'the request body is not valid UTF-8', {
      issues: [{ path: 'body', message: 'invalid UTF-8' }],
    });
  }
}
