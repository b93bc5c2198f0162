/**
 * Object frames: how a sync carries stored objects over one HTTP body.
 * Each frame is a JSON header line, `{"key":…,"size":N,"level":L}\n`,
 * followed by exactly N bytes of the object. `level` orders the writes at
 * the destination: 0 for content, 1 for manifests (graph/transfer.ts), so
 * the reader waits for a level's writes before starting the next.
 *
 * The reader takes chunks as they arrive and yields whole frames, holding
 * at most one object; a header past MAX_HEADER_BYTES, an object past the
 * caller's `maxObjectBytes`, or a body that ends inside a frame is
 * `invalid_input` or `payload_too_large`, before more is read. Pure: bytes in, frames out.
 */
import { BranchgraphError } from './errors.js';

export interface ObjectFrame {
  key: string;
  level: number;
  bytes: Uint8Array;
}

const MAX_HEADER_BYTES = 4096;
const NEWLINE = 0x0a;

export function encodeFrame(f: ObjectFrame): Uint8Array[] {
  return [Buffer.from(`${JSON.stringify({ key: f.key, size: f.bytes.byteLength, level: f.level })}\n`), f.bytes];
}

export async function* decodeFrames(chunks: AsyncIterable<Uint8Array>, opts: { maxObjectBytes: number }): AsyncGenerator<ObjectFrame> {
  let buf: Buffer = Buffer.alloc(0);
  let header: { key: string; size: number; level: number } | undefined;
  for await (const chunk of chunks) {
    buf = buf.length === 0 ? Buffer.from(chunk) : Buffer.concat([buf, chunk]);
    for (;;) {
      if (header === undefined) {
        const nl = buf.indexOf(NEWLINE);
        if (nl < 0) {
          if (buf.length > MAX_HEADER_BYTES) throw bad('a frame header is longer than 4 KiB');
          break;
        }
        header = parseHeader(buf.subarray(0, nl), opts.maxObjectBytes);
        buf = buf.subarray(nl + 1);
      }
      if (buf.length < header.size) break;
      yield { key: header.key, level: header.level, bytes: Uint8Array.prototype.slice.call(buf, 0, header.size) };
      buf = buf.subarray(header.size);
      header = undefined;
    }
  }
  if (header !== undefined || buf.length > 0) throw bad('the body ends inside a frame');
}

function parseHeader(line: Uint8Array, maxObjectBytes: number): { key: string; size: number; level: number } {
  let h: unknown;
  try {
    h = JSON.parse(Buffer.from(line).toString('utf8'));
  } catch {
    throw bad('a frame header is not JSON');
  }
  const { key, size, level } = (h ?? {}) as Record<string, unknown>;
  if (typeof key !== 'string' || key.length === 0 || key.length > 1024) throw bad('a frame names no key');
  if (!Number.isSafeInteger(size) || (size as number) < 0) throw bad(`frame ${key}: size is not a byte count`);
  if (!Number.isSafeInteger(level) || (level as number) < 0) throw bad(`frame ${key}: level is not a count`);
  if ((size as number) > maxObjectBytes)
    throw new BranchgraphError('payload_too_large', `${key} is ${size} bytes, over the ${maxObjectBytes} an object may have`, {
      details: { limit: maxObjectBytes },
    });
  return { key, size: size as number, level: level as number };
}

function bad(message: string): BranchgraphError {
  return new BranchgraphError('invalid_input', `object frames: ${message}`, { issues: [{ path: 'body', message }] });
}
