/**
 * The codec of every stored JSON object: JSON text with a trailing
 * checksum, read back through a zod schema, so a corrupt, edited or foreign
 * object is `corrupt_object` and never a crash or a silently different value.
 */
import type { z } from 'zod';
import { contentHash } from '../model/canonical.js';
import { BranchgraphError } from '../model/errors.js';

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

export function encodeJson(value: unknown): Uint8Array {
  const text = JSON.stringify(value);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return new TextEncoder().encode(text);
  return new TextEncoder().encode(`${text.slice(0, -1)}${text.length > 2 ? ',' : ''}"${CHECKSUM}":"${textChecksum(text)}"}`);
}

/** The trailing checksum member, as encodeJson writes it (a string value can never hold these unescaped quotes). */
const TRAILER = /(,?)"\$checksum":"([0-9a-f]{32})"\}$/;

/** Decode a stored JSON object through a zod schema; failures are `corrupt_object`. */
export function decodeJson<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string): T {
  let raw: unknown;
  try {
    let text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    // The checksum covers the text as written, so checking it costs one hash and no re-encoding.
    // Only the tail can hold the trailer: match there, not across a large object.
    const tailAt = Math.max(0, text.length - 64);
    const m = TRAILER.exec(text.slice(tailAt));
    if (m !== null) {
      text = m[1] === ',' ? `${text.slice(0, tailAt + m.index)}}` : '{}';
      if (textChecksum(text) !== m[2])
        throw new BranchgraphError('corrupt_object', `${key} does not match its checksum`, { details: { key } });
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
