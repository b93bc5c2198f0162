/**
 * Splitting a byte stream into lines in time linear in the bytes received.
 *
 * Each chunk is searched for newlines once; the bytes of a line that spans
 * chunks are kept as a list of pieces and joined once, when its newline
 * arrives. A line longer than `maxLineBytes` is refused as soon as its
 * pending bytes pass the limit, naming its line number, without waiting for
 * (or holding) the rest of it. Pure: the caller feeds chunks and decodes.
 */
import { BranchgraphError } from './errors.js';

const NEWLINE = 0x0a;

export class LineSplitter {
  private pieces: Uint8Array[] = [];
  private pending = 0;
  /** Lines completed so far; the line being read is number `lines + 1`. */
  lines = 0;

  constructor(
    private readonly maxLineBytes: number,
    /** How the refusal names what is being read, e.g. "NDJSON line". */
    private readonly what = 'line',
  ) {}

  /** The lines `chunk` completes, without their newline. */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = 0;
    for (;;) {
      const at = chunk.indexOf(NEWLINE, start);
      if (at < 0) break;
      this.take(chunk.subarray(start, at));
      out.push(this.join());
      start = at + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
    return out;
  }

  /** The last line, after the stream ended without a newline (undefined when there is none). */
  finish(): Uint8Array | undefined {
    return this.pieces.length === 0 ? undefined : this.join();
  }

  private take(piece: Uint8Array): void {
    if (piece.length === 0) return;
    this.pending += piece.length;
    if (this.pending > this.maxLineBytes) throw lineTooLong(this.what, this.lines + 1, this.maxLineBytes);
    // The chunk's buffer may be reused by the stream: keep a copy of what outlives this call.
    this.pieces.push(piece.slice());
  }

  private join(): Uint8Array {
    this.lines++;
    const parts = this.pieces;
    this.pieces = [];
    const size = this.pending;
    this.pending = 0;
    if (parts.length === 1) return parts[0] as Uint8Array;
    const line = new Uint8Array(size);
    let at = 0;
    for (const p of parts) {
      line.set(p, at);
      at += p.length;
    }
    return line;
  }
}

/** The refusal of a line over its limit, by its number: `what` names what is read, e.g. "NDJSON line". */
export function lineTooLong(what: string, line: number, limit: number): BranchgraphError {
  return new BranchgraphError('payload_too_large', `${what} ${line} is longer than ${limit} bytes`, {
    details: { limit, line },
    issues: [{ path: `line ${line}`, message: `longer than ${limit} bytes` }],
  });
}
