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

/** Decode a stored JSON object through a zod schema; failures are `corrupt_object`. */
export function decodeJson<T>(schema: z.ZodType<T>, bytes: Uint8Array, key: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (e) {
    throw new BranchgraphError('corrupt_object', `${key} is not valid JSON`, { cause: e, details: { key } });
  }
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && Object.hasOwn(raw, CHECKSUM)) {
    const { [CHECKSUM]: stored, ...rest } = raw as Record<string, unknown>;
    if (stored !== textChecksum(JSON.stringify(rest))) throw new BranchgraphError('corrupt_object', `${key} does not match its checksum`, { details: { key } });
    raw = rest;
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    throw new BranchgraphError('corrupt_object', `${key} does not match its format: ${parsed.error.issues[0]?.message ?? 'invalid'}`, {
      details: { key, issues: parsed.error.issues.slice(0, 5).map((i) => `${i.path.join('.')}: ${i.message}`) },
    });
  }
  return parsed.data;
}
