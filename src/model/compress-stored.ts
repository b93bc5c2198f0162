/**
 * Compressed stored objects: the envelope every stored JSON object and every
 * compact run is written in once it is large enough to gain from it.
 *
 * Per row, a graph written one row at a time stored about 4.3 KB, nearly all
 * of it JSON metadata (manifests, run lists, events, commit records) whose
 * member names and shapes repeat from object to object. Raw deflate with a
 * preset dictionary of those shapes (model/stored-dictionary.ts) stores the
 * same objects in about a third of the bytes, for about 0.1 ms an object to
 * write or read, most of it zlib setting up its stream.
 *
 * Envelope: `0x00 <dictionary version>` then a raw deflate stream. No JSON
 * text or UTF-8 document our codecs write starts with a zero byte, so an
 * object written before this envelope (plain text) reads exactly as it did,
 * and a reader tells the two apart from the first byte. Decoding never
 * guesses: an unknown version or a stream that does not inflate is
 * `corrupt_object`, as a changed byte in any stored object is.
 */
import { promisify } from 'node:util';
import { createInflateRaw, deflateRaw, deflateRawSync, inflateRawSync } from 'node:zlib';
import { BranchgraphError } from './errors.js';
import { gatherBytes } from './gather-bytes.js';
import { STORED_DICTIONARY_V1 } from './stored-dictionary.js';
import { LARGE_BYTES } from './turns.js';

const deflateRawOffLoop = promisify(deflateRaw);

const MARK = 0x00;
const VERSION = 1;
/** Below this, deflate's stream overhead eats most of what it saves. */
export const COMPRESS_FROM_BYTES = 96;
/** Largest object a stored envelope may inflate to: more is a corrupt or hostile object, not ours. */
const MAX_INFLATED_BYTES = 256 * 1024 * 1024;

const DICTIONARIES: Record<number, Uint8Array> = { [VERSION]: STORED_DICTIONARY_V1 };

/** Whether `bytes` are in the compressed envelope (plain stored text never starts with a zero byte). */
export function isCompressed(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === MARK;
}

/** `bytes` in the envelope when that is smaller, else as they are. Deterministic: the same input gives the same bytes. */
export function compressStored(bytes: Uint8Array): Uint8Array {
  if (bytes.length < COMPRESS_FROM_BYTES) return bytes;
  return enveloped(bytes, deflateRawSync(bytes, { dictionary: STORED_DICTIONARY_V1 }));
}

/**
 * `compressStored`, with a large object deflated on zlib's thread pool rather than on the event
 * loop (15 MB held the loop about 30 ms). The bytes are the same either way: deflate's output
 * depends on the input and the settings, not on which thread ran it.
 */
export async function compressStoredOffLoop(bytes: Uint8Array): Promise<Uint8Array> {
  if (bytes.length < LARGE_BYTES) return compressStored(bytes);
  return enveloped(bytes, await deflateRawOffLoop(bytes, { dictionary: STORED_DICTIONARY_V1 }));
}

function enveloped(bytes: Uint8Array, body: Uint8Array): Uint8Array {
  if (body.length + 2 >= bytes.length) return bytes;
  const out = new Uint8Array(body.length + 2);
  out[0] = MARK;
  out[1] = VERSION;
  out.set(body, 2);
  return out;
}

/** The stored text behind `bytes`, whichever way they were written; `key` names the object in errors. */
export function decompressStored(bytes: Uint8Array, key: string): Uint8Array {
  if (!isCompressed(bytes)) return bytes;
  const dictionary = dictionaryOf(bytes, key);
  try {
    return inflateRawSync(bytes.subarray(2), { dictionary, maxOutputLength: MAX_INFLATED_BYTES });
  } catch (e) {
    throw notInflating(key, e);
  }
}

/**
 * `decompressStored` on zlib's thread pool, for objects that may inflate large. A compressed
 * run of 15 MB of rows is a few kilobytes, so the stored size says nothing: every compressed
 * object that is not tiny goes to the pool. What it inflates to is gathered chunk by chunk as it
 * comes (gather-bytes.ts): zlib's own one-shot call joins its output in one copy at the end,
 * 40 ms on the loop for 15 MB.
 */
export async function decompressStoredOffLoop(bytes: Uint8Array, key: string): Promise<Uint8Array> {
  if (!isCompressed(bytes) || bytes.length < INFLATE_OFF_LOOP_FROM) return decompressStored(bytes, key);
  const inflating = createInflateRaw({ dictionary: dictionaryOf(bytes, key), chunkSize: INFLATE_CHUNK });
  inflating.end(bytes.subarray(2));
  try {
    return await gatherBytes(inflating, {
      max: MAX_INFLATED_BYTES,
      tooLarge: () => new RangeError(`it inflates past ${MAX_INFLATED_BYTES} bytes`),
    });
  } catch (e) {
    inflating.destroy();
    throw notInflating(key, e);
  }
}

/** zlib's output chunk when inflating off the loop: most objects inflate in one. */
const INFLATE_CHUNK = 256 * 1024;

/** Compressed objects from this size inflate on the thread pool: below it, the hand-off costs more than inflating. */
const INFLATE_OFF_LOOP_FROM = 16 * 1024;

function dictionaryOf(bytes: Uint8Array, key: string): Uint8Array {
  const dictionary = DICTIONARIES[bytes[1] as number];
  if (dictionary === undefined)
    throw new BranchgraphError('corrupt_object', `${key} names an unknown compression (${bytes[1]})`, { details: { key } });
  return dictionary;
}

function notInflating(key: string, e: unknown): BranchgraphError {
  return new BranchgraphError('corrupt_object', `${key} does not inflate: ${(e as Error).message}`, { cause: e, details: { key } });
}

/** The text of a stored object, compressed or not (for tools and tests that read stored objects as text). */
export function storedText(bytes: Uint8Array, key = 'object'): string {
  return new TextDecoder('utf-8', { fatal: true }).decode(decompressStored(bytes, key));
}
