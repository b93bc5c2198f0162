/**
 * The codec of every stored JSON object: JSON text with a trailing
 * checksum, read back through a zod schema, so a corrupt, edited or foreign
 * object is `corrupt_object` and never a crash or a silently different value.
 */
import type { z } from 'zod';
import { contentHash } from '../model/canonical.js';
import { BranchgraphError } from '../model/errors.js';
import { compressStored, decompressStored, isCompressed } from '../model/compress-stored.js';

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
      : new TextEncoder().encode(`${text.slice(0, -1)}${text.length > 2 ? ',' : ''}"${CHECKSUM}":"${textChecksum(text)}"}`);
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
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new BranchgraphError('corrupt_object', `${key} does not match its format: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
      details: { key, issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) },
    });
  }
  return parsed.data;
}
