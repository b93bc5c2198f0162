/**
 * A whole-text answer with its length, set where the answer is made.
 *
 * Why here and not afterwards: the HTTP adapter writes an answer it can
 * see whole (text or bytes, untouched since it was made) straight to the
 * socket. An answer that is sized later has to be read back as a stream
 * and rebuilt, and the adapter then pumps that stream out, a few turns of
 * the event loop per answer. The compress middleware also needs the length
 * to leave a small answer alone.
 */
import { LARGE_BYTES } from '../model/turns.js';

/** `init`'s headers with `content-length` set for a text or byte body; any other body is left to the adapter. */
function withLength(body: unknown, init: ResponseInit | undefined): ResponseInit | undefined {
  const bytes = typeof body === 'string' ? Buffer.byteLength(body) : body instanceof Uint8Array ? body.byteLength : undefined;
  if (bytes === undefined) return init;
  const headers = new Headers(init?.headers);
  if (!headers.has('content-length')) headers.set('content-length', String(bytes));
  return { ...init, headers };
}

/**
 * A response to `body`, sized when `body` is whole. Large text is encoded here, once: sizing it and
 * then writing it (or compressing it) each read all of it again, in one piece each (a 20 MB answer:
 * 48 ms to size, 35 ms to encode for compression, besides).
 */
export function sizedResponse(body: BodyInit | null, init?: ResponseInit): Response {
  const whole = typeof body === 'string' && body.length > LARGE_BYTES ? Buffer.from(body) : body;
  return new Response(whole, withLength(whole, init));
}

/** The same, as the `Response` constructor a library takes in its fetch API (GraphQL Yoga's). */
export const SizedResponse = function SizedResponse(body: BodyInit | null, init?: ResponseInit): Response {
  return sizedResponse(body, init);
} as unknown as typeof Response;
