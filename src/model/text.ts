/**
 * Well-formed text. JavaScript strings are UTF-16 and may hold lone
 * surrogates, which no UTF-8 encoding (Arrow run files, the filesystem, S3
 * keys, HTTP) can carry: they would be replaced by U+FFFD on the way to
 * storage, so a stored key would no longer equal the acknowledged one. Every
 * input path refuses them instead, through these checks.
 */

declare global {
  interface String {
    /** ES2024, native since Node.js 20; the ES2023 library this project compiles against lacks it. */
    isWellFormed(): boolean;
  }
}

/** Whether `s` is well-formed Unicode (no lone surrogate). */
export function isWellFormed(s: string): boolean {
  return s.isWellFormed();
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
 * How deep arrays and objects may nest in any request value, envelope included: json properties
 * may nest MAX_JSON_DEPTH (64), and a request wraps them in a few levels of its own. Every walker of
 * input values runs after this check, so none of them can be driven into a stack overflow.
 */
export const MAX_INPUT_DEPTH = 128;

/**
 * The first problem of a request value that no schema could accept: nesting
 * deeper than MAX_INPUT_DEPTH, a string or object key that is not
 * well-formed Unicode, or an object key `__proto__` (a JSON parser keeps it
 * as a key, but copying the object turns it into a prototype, so the value
 * would silently vanish). The walk checks the depth before it recurses, so
 * a value nested a million levels deep costs MAX_INPUT_DEPTH frames.
 */
export function findInputProblem(value: unknown, path: string): { path: string; message: string } | undefined {
  const bad = inputProblem(value, 0);
  if (bad === undefined) return undefined;
  const full = path + bad.steps.reverse().join('');
  return { path: bad.deep && full.length > 100 ? `${full.slice(0, 100)}…` : full, message: bad.message };
}

/**
 * The walk behind findInputProblem. It builds no path while it descends (a bulk load walks
 * millions of values, nearly always without a problem): a problem found collects its path steps,
 * innermost first, as the walk unwinds.
 */
function inputProblem(value: unknown, depth: number): { steps: string[]; message: string; deep?: true } | undefined {
  if (typeof value === 'string') return isWellFormed(value) ? undefined : { steps: [], message: ILL_FORMED_MESSAGE };
  if (value === null || typeof value !== 'object') return undefined;
  if (depth >= MAX_INPUT_DEPTH) return { steps: [], message: `nests arrays and objects deeper than ${MAX_INPUT_DEPTH} levels`, deep: true };
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const bad = inputProblem(value[i], depth + 1);
      if (bad !== undefined) {
        bad.steps.push(`[${i}]`);
        return bad;
      }
    }
    return undefined;
  }
  for (const k in value) {
    if (!Object.hasOwn(value, k)) continue;
    if (!isWellFormed(k)) return { steps: [`.${JSON.stringify(k)}`], message: ILL_FORMED_MESSAGE };
    if (k === '__proto__') return { steps: ['.__proto__'], message: '__proto__ is not a usable name' };
    const bad = inputProblem((value as Record<string, unknown>)[k], depth + 1);
    if (bad !== undefined) {
      bad.steps.push(`.${k}`);
      return bad;
    }
  }
  return undefined;
}
