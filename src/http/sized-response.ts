/**
 * A whole answer with its length, set where the answer is made.
 *
 * Why here and not afterwards: the HTTP adapter writes an answer it can
 * see whole (text or bytes, untouched since it was made) straight to the
 * socket. An answer that is sized later has to be read back as a stream
 * and rebuilt, and the adapter then pumps that stream out, a few turns of
 * the event loop per answer. The compress middleware also needs the length
 * to leave a small answer alone.
 */
import { ByteChunks } from '../model/byte-chunks.js';
import { LARGE_BYTES } from '../model/turns.js';

/** Bytes an answer made of byte chunks is written in: no step of writing or compressing it copies more. */
const STREAM_CHUNK = 256 * 1024;

/**
 * Byte chunks as a stream of views of at most STREAM_CHUNK bytes, pulled as the client reads. A
 * large answer made in pieces (an introspection, a read of large rows) is written from its pieces
 * as they are: a `Response` over one large buffer copies all of it when compression reads it
 * (20 MB: 146 ms on the loop), and joining the pieces first is another copy.
 */
export function byteStream(chunks: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  let at = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      while (i < chunks.length && at >= (chunks[i] as Uint8Array).length) {
        i++;
        at = 0;
      }
      const chunk = chunks[i];
      if (chunk === undefined) {
        controller.close();
        return;
      }
      controller.enqueue(chunk.subarray(at, at + STREAM_CHUNK));
      at += STREAM_CHUNK;
    },
  });
}

/** `init`'s headers with `content-length` set for a text, byte or chunked body; any other body is left to the adapter. */
function withLength(body: unknown, init: ResponseInit | undefined): ResponseInit | undefined {
  const bytes =
    typeof body === 'string'
      ? Buffer.byteLength(body)
      : body instanceof Uint8Array
        ? body.byteLength
        : body instanceof ByteChunks
          ? body.byteLength
          : undefined;
  if (bytes === undefined) return init;
  const headers = new Headers(init?.headers);
  if (!headers.has('content-length')) headers.set('content-length', String(bytes));
  return { ...init, headers };
}

/**
 * A response to `body`, sized when `body` is whole. Large text is encoded here, once: sizing it and
 * then writing it (or compressing it) each read all of it again, in one piece each (a 20 MB answer:
 * 48 ms to size, 35 ms to encode for compression, besides). Byte chunks are streamed (byteStream).
 */
export function sizedResponse(body: BodyInit | ByteChunks | null, init?: ResponseInit): Response {
  if (body instanceof ByteChunks) return new Response(byteStream(body.chunks), withLength(body, init));
  const whole = typeof body === 'string' && body.length > LARGE_BYTES ? Buffer.from(body) : body;
  return new Response(whole, withLength(whole, init));
}

/** The same, as the `Response` constructor a library takes in its fetch API (GraphQL Yoga's). */
export const SizedResponse = function SizedResponse(body: BodyInit | null, init?: ResponseInit): Response {
  return sizedResponse(body, init);
} as unknown as typeof Response;
