/**
 * Canonical encoding: one byte string per value, so equal values always hash
 * equal. Object keys are sorted; numbers use JSON's shortest round-trip form;
 * -0 is written as 0. Types stay distinct: null, "", [] and {} all differ.
 */
import { createHash } from 'node:crypto';
import { BranchgraphError } from './errors.js';

export type JsonValue = null | boolean | number | string | JsonValue[] | { [k: string]: JsonValue };

/** Nesting beyond which a value has no canonical form: inputs are refused far earlier (text.ts MAX_INPUT_DEPTH), so only a caller that skipped validation meets it, and gets a typed error instead of a stack overflow. */
const MAX_CANONICAL_DEPTH = 1000;

export function canonicalJson(v: unknown, depth = 0): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError('non-finite number has no canonical form');
    return Object.is(v, -0) ? '0' : JSON.stringify(v);
  }
  if (typeof v === 'string' || typeof v === 'boolean') return JSON.stringify(v);
  if (typeof v === 'object' && depth >= MAX_CANONICAL_DEPTH) {
    throw new BranchgraphError('invalid_input', `a value nests arrays and objects deeper than ${MAX_CANONICAL_DEPTH} levels`, {
      issues: [{ path: 'value', message: 'nested too deep' }],
    });
  }
  if (Array.isArray(v)) return `[${v.map((x) => canonicalJson(x, depth + 1)).join(',')}]`;
  if (typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k], depth + 1)}`).join(',')}}`;
  }
  throw new TypeError(`no canonical form for ${typeof v}`);
}

/** 128-bit content hash, hex. */
export function contentHash(canonical: string): string {
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

/** 128-bit hash of raw bytes, hex: the checksum a manifest records for each run file. */
export function bytesHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 32);
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return canonicalJson(a) === canonicalJson(b);
}
