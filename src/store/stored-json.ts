/**
 * The codec of every stored JSON object: JSON text with a trailing
 * checksum, read back through a zod schema, so a corrupt, edited or foreign
 * object is `corrupt_object` and never a crash or a silently different value.
 */
import type { z } from 'zod';
import { contentHash } from '../model/canonical.js';
import { BranchgraphError } from '../model/errors.js';
import { createHash, type Hash } from 'node:crypto';
import { compressStored, compressStoredOffLoop, decompressStored, isCompressed } from '../model/compress-stored.js';
import { jsonParseSteps } from '../model/json-parse-steps.js';
import { jsonLengthAtLeast, jsonSteps } from '../model/json-steps.js';
import { LARGE_BYTES, runStepsInSlices, Slice } from '../model/turns.js';
import { utf8InSlices } from '../model/utf8-in-slices.js';

/**
 * Stored JSON objects end with a `$checksum` member: a hash of the object's
 * text without it. A stored object edited into other valid JSON (a digit
 * changed in a manifest) is then `corrupt_object`, as a changed byte in a
 * run file is. Objects written before checksums have none and are read as
 * they are.
 */
const CHECKSUM = '$checksum';

function textChecksum(text: string): string {
  return contentHash(text);
}

/** `textChecksum` of text hashed a piece at a time into `hash`. */
function piecesChecksum(hash: Hash): string {
  return hash.digest('hex').slice(0, 32);
}

/** The checksum member that closes a stored object: after its members, unless it has none. */
function trailer(checksum: string, empty: boolean): string {
  return `${empty ? '' : ','}"${CHECKSUM}":"${checksum}"}`;
}

/**
 * A value's stored bytes: its JSON text, checksummed when it is an object,
 * and compressed when that saves (model/compress-stored.ts) unless `plain`:
 * a WAL generation stays text, since catch-up reads its identity from its
 * first bytes and it lives only until it is folded.
 */
export function encodeJson(value: unknown, opts?: { plain?: boolean }): Uint8Array {
  const text = JSON.stringify(value);
  const bytes =
    value === null || typeof value !== 'object' || Array.isArray(value)
      ? new TextEncoder().encode(text)
      : new TextEncoder().encode(`${text.slice(0, -1)}${trailer(textChecksum(text), text.length <= 2)}`);
  return opts?.plain === true ? bytes : compressStored(bytes);
}

/** The trailing checksum member, as encodeJson writes it (a string value can never hold these unescaped quotes). */
const TRAILER = /(,?)"\$checksum":"([0-9a-f]{32})"\}$/;

/** Decode a stored JSON object through a zod schema; failures are `corrupt_object`. */
export function decodeJson<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string): T {
  let raw: unknown;
  try {
    let text = new TextDecoder('utf-8', { fatal: true }).decode(decompressStored(bytes, key));
    // The checksum covers the text as written, so checking it costs one hash and no re-encoding.
    // Only the tail can hold the trailer: match there, not across a large object.
    const tailAt = Math.max(0, text.length - 64);
    const tail = text.slice(tailAt);
    const m = TRAILER.exec(tail);
    if (m !== null) {
      text = m[1] === ',' ? `${text.slice(0, tailAt + m.index)}}` : '{}';
      if (textChecksum(text) !== m[2])
        throw new BranchgraphError('corrupt_object', `${key} does not match its checksum`, { details: { key } });
    } else if (tail.includes(`"${CHECKSUM}":`) || (isCompressed(bytes) && text.startsWith('{'))) {
      // Only objects written before checksums may lack one, and none of those was compressed or
      // names the member: a damaged trailer must not pass for an unchecked object.
      throw new BranchgraphError('corrupt_object', `${key} has a damaged checksum`, { details: { key } });
    }
    raw = JSON.parse(text);
  } catch (e) {
    if (e instanceof BranchgraphError) throw e;
    throw new BranchgraphError('corrupt_object', `${key} is not valid JSON`, { cause: e, details: { key } });
  }
  return checkedFormat(schema, raw, key);
}

/** `raw` through `schema`: a stored object that does not match its format is `corrupt_object`. */
function checkedFormat<T>(schema: z.ZodType<T>, raw: unknown, key: string): T {
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new BranchgraphError('corrupt_object', `${key} does not match its format: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
      details: { key, issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) },
    });
  }
  return parsed.data;
}

/** How long the trailer after a non-empty object's members is: ASCII, a byte a character. */
const TRAILER_BYTES = trailer(textChecksum(''), false).length;

/**
 * `encodeJson` for a value that may be large (a WAL generation of megabytes of rows): its text
 * made a member at a time, hashed and written to UTF-8 a piece at a time, with turns of the loop
 * between (model/json-steps.ts, model/utf8-in-slices.ts). The bytes are those `encodeJson` writes.
 */
export async function encodeJsonInSlices(value: unknown, opts?: { plain?: boolean }): Promise<Uint8Array> {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !jsonLengthAtLeast(value, LARGE_BYTES))
    return encodeJson(value, opts);
  const pieces: string[] = [];
  await runStepsInSlices(jsonSteps(value, pieces));
  const hash = createHash('sha256');
  const slice = new Slice();
  for (const p of pieces) {
    hash.update(p);
    if (slice.due()) await slice.turn();
  }
  // A large object's last piece is its closing brace; the checksum member goes before it.
  if (pieces.at(-1) !== '}') return encodeJson(value, opts);
  pieces[pieces.length - 1] = trailer(piecesChecksum(hash), false);
  const bytes = await utf8InSlices(pieces);
  return opts?.plain === true ? bytes : compressStoredOffLoop(bytes);
}

/**
 * `decodeJson` for an object that may be large: a plain one of LARGE_BYTES or more is hashed and
 * parsed from its bytes a piece at a time (model/json-parse-steps.ts), never decoded into one
 * string. The value and the refusals are `decodeJson`'s; a compressed or small object is decoded
 * by it.
 */
export async function decodeJsonInSlices<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string): Promise<T> {
  if (isCompressed(bytes) || bytes.length < LARGE_BYTES) return decodeJson(schema, bytes, key);
  const cut = bytes.length - TRAILER_BYTES;
  const m = TRAILER.exec(Buffer.from(bytes.buffer, bytes.byteOffset + cut, TRAILER_BYTES).toString('latin1'));
  // Only objects written before checksums lack one; decodeJson refuses a damaged trailer.
  if (m === null || m.index !== 0 || m[1] !== ',') return decodeJson(schema, bytes, key);
  const hash = createHash('sha256');
  const slice = new Slice();
  for (let at = 0; at < cut; at += LARGE_BYTES) {
    hash.update(bytes.subarray(at, Math.min(cut, at + LARGE_BYTES)));
    if (slice.due()) await slice.turn();
  }
  if (piecesChecksum(hash.update('}')) !== m[2])
    throw new BranchgraphError('corrupt_object', `${key} does not match its checksum`, { details: { key } });
  let raw: unknown;
  try {
    // The checksum member is parsed with the rest and dropped, unless the object names one itself.
    const own = Buffer.from(bytes.buffer, bytes.byteOffset, cut).includes(`"${CHECKSUM}"`);
    const text = own ? Buffer.concat([bytes.subarray(0, cut), Buffer.from('}')]) : bytes;
    raw = await runStepsInSlices(jsonParseSteps(text));
    if (!own && typeof raw === 'object' && raw !== null) delete (raw as Record<string, unknown>)[CHECKSUM];
  } catch (e) {
    throw new BranchgraphError('corrupt_object', `${key} is not valid JSON`, { cause: e, details: { key } });
  }
  return checkedFormat(schema, raw, key);
}
