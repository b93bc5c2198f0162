/**
 * Well-formed text. JavaScript strings are UTF-16 and may hold lone
 * surrogates, which no UTF-8 encoding (Arrow run files, the filesystem, S3
 * keys, HTTP) can carry: they would be replaced by U+FFFD on the way to
 * storage, so a stored key would no longer equal the acknowledged one. Every
 * input path refuses them instead, through these checks.
 */

const LONE_SURROGATE = /\p{Surrogate}/u;

/** Whether `s` is well-formed Unicode (no lone surrogate). */
export function isWellFormed(s: string): boolean {
  return !LONE_SURROGATE.test(s);
}

export const ILL_FORMED_MESSAGE = 'must be well-formed Unicode (it holds a lone UTF-16 surrogate)';

/**
 * Names a schema or a shard may not take: the members of Object.prototype.
 * Tables, properties and shards name keys of plain objects throughout the
 * engine (manifests, rows, watermarks), where `constructor` or `toString`
 * would read an inherited member and `__proto__` would not be a key at all.
 */
const RESERVED = new Set(Object.getOwnPropertyNames(Object.prototype));

export function isReservedName(name: string): boolean {
  return RESERVED.has(name);
}

/**
 * The first problem of a request value that no schema could accept: a
 * string or object key that is not well-formed Unicode, or an object key
 * `__proto__` (a JSON parser keeps it as a key, but copying the object
 * turns it into a prototype, so the value would silently vanish).
 */
export function findInputProblem(value: unknown, path: string): { path: string; message: string } | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : { path, message: ILL_FORMED_MESSAGE };
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = findInputProblem(value[i], `${path}[${i}]`);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  for (const k of Object.keys(value)) {
    if (!isWellFormed(k)) return { path: `${path}.${JSON.stringify(k)}`, message: ILL_FORMED_MESSAGE };
    if (k === '__proto__') return { path: `${path}.__proto__`, message: '__proto__ is not a usable name' };
    const bad = findInputProblem((value as Record<string, unknown>)[k], `${path}.${k}`);
    if (bad !== undefined) return bad;
  }
  return undefined;
}
