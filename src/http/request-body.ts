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
import { gatherBytes, type GatherOptions } from '../model/gather-bytes.js';
import { JsonBytesError, jsonParseSteps } from '../model/json-parse-steps.js';
import { runSteps } from '../model/steps.js';
import { LARGE_BYTES, nextTurn, runStepsInSlices } from '../model/turns.js';

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

/** The body's bytes gathered as they arrive (model/gather-bytes.ts). */
function gather(req: Request, o: Omit<GatherOptions, 'tooLarge'>): Promise<Uint8Array> {
  const chunks = (req.body ?? []) as unknown as AsyncIterable<Uint8Array>;
  return gatherBytes(chunks, { ...o, tooLarge: () => tooLarge(o.max) });
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
      // budget before it is read. A small one is taken whole: the server adapter then reads it from
      // the socket without the web stream a chunk-by-chunk read goes through. A large one is
      // gathered as it comes, so no one step copies all of it.
      budget.take(declared);
      size = declared;
      const bytes = declared < LARGE_BYTES ? new Uint8Array(await req.arrayBuffer()) : await gather(req, { expected: declared, max });
      if (bytes.length > max) throw tooLarge(max);
      return { bytes, release };
    }
    const bytes = await gather(req, {
      max,
      took: (n) => {
        budget.take(n);
        size += n;
      },
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
    return { text: await bodyTextOf(bytes), release };
  } catch (e) {
    release();
    throw e;
  }
}

/** A body's bytes as text: `invalid_input` when they are not UTF-8. */
export async function bodyTextOf(bytes: Uint8Array): Promise<string> {
  if (bytes.length >= LARGE_BYTES) await nextTurn();
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refusedBody('utf8');
  }
}

/**
 * A body's JSON value: `invalid_input` when it is not UTF-8 or not JSON. A large body is parsed a
 * piece at a time with turns of the loop between (model/json-parse-steps.ts): decoding 15 MB into
 * one string and parsing it held the loop 130 ms.
 */
export async function bodyJsonOf(bytes: Uint8Array): Promise<unknown> {
  try {
    return bytes.length < LARGE_BYTES ? runSteps(jsonParseSteps(bytes)) : await runStepsInSlices(jsonParseSteps(bytes));
  } catch (e) {
    throw e instanceof JsonBytesError ? refusedBody(e.kind) : e;
  }
}

/** Whether a body holds nothing but white space (and a byte order mark). */
export function isBlankBody(bytes: Uint8Array): boolean {
  const from = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  for (let i = from; i < bytes.length; i++) {
    const b = bytes[i] as number;
    if (b !== 0x20 && (b < 0x09 || b > 0x0d)) return false;
  }
  return true;
}

function refusedBody(kind: 'utf8' | 'syntax'): BranchgraphError {
  const what = kind === 'utf8' ? 'UTF-8' : 'JSON';
  return new BranchgraphError('invalid_input', `the request body is not valid ${what}`, {
    issues: [{ path: 'body', message: `invalid ${what}` }],
  });
}
