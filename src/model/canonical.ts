/**
 * Canonical encoding: one byte string per value, so equal values always hash
 * equal. Object keys are sorted; numbers use JSON's shortest round-trip form;
 * -0 is written as 0. Types stay distinct: null, "", [] and {} all differ.
 */
import crypto from 'node:crypto';
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
  // Built by appending, not by mapping and joining: every row written is hashed through here.
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(v[i], depth + 1);
    return `${out}]`;
  }
  if (typeof v === 'object') {
    const obj = v as Record<string, unknown>;
    const keys = Object.keys(obj).sort();
    let out = '{';
    for (const k of keys) {
      const x = obj[k];
      if (x === undefined) continue;
      out += `${out.length === 1 ? '' : ','}${JSON.stringify(k)}:${canonicalJson(x, depth + 1)}`;
    }
    return `${out}}`;
  }
  throw new TypeError(`no canonical form for ${typeof v}`);
}

/** SHA-256 as hex: the one-shot form where the runtime has it (no hash object per call), else a hash object. */
const sha256Hex: (data: string | Uint8Array) => string =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'hex')
    : (data) => crypto.createHash('sha256').update(data).digest('hex');

/** 128-bit content hash, hex. */
export function contentHash(canonical: string): string {
  return sha256Hex(canonical).slice(0, 32);
}

/** 128-bit hash of raw bytes, hex: the checksum a manifest records for each run file. */
export function bytesHash(bytes: Uint8Array): string {
  return sha256Hex(bytes).slice(0, 32);
}

export function valuesEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  return canonicalJson(a) === canonicalJson(b);
}
