import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonParseSteps, JsonBytesError } from './json-parse-steps.js';
import { runSteps } from './steps.js';

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);

/** The value, or the error's kind, parsing `bytes` with pieces of `piece` bytes. */
const parsed = (bytes: Uint8Array, piece: number): { value: unknown } | { error: string } => {
  try {
    return { value: runSteps(jsonParseSteps(bytes, piece)) };
  } catch (e) {
    if (e instanceof JsonBytesError) return { error: e.kind };
    throw e;
  }
};

/** What JSON.parse gives for the same bytes, decoded as the server decodes a body. */
const reference = (bytes: Uint8Array): { value: unknown } | { error: string } => {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return { error: 'utf8' };
  }
  try {
    return { value: JSON.parse(text) };
  } catch {
    return { error: 'syntax' };
  }
};

/** JSON text of `value` with white space of any kind around its tokens. */
const spaced = (value: unknown, space: string): string => JSON.stringify(value, null, space).replace(/\n/g, '\r\n');

describe('JSON parsed from bytes in steps', () => {
  it('gives what JSON.parse gives, for any value in pieces of any size', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 64 }), fc.constantFrom('', ' ', '\t', '  '), (v, piece, space) => {
        const bytes = utf8(spaced(v, space));
        expect(parsed(bytes, piece)).toEqual(reference(bytes));
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what JSON.parse refuses, and takes what it takes, for text near JSON', () => {
    // One to three edits of a value's text: a character replaced, removed, or a space put in.
    const edit = fc.tuple(fc.nat(), fc.constantFrom('', ',', ']', '}', '[', '{', ':', '"', '\\', 'x', '1', ' '));
    const nearJson = fc.tuple(fc.jsonValue(), fc.array(edit, { minLength: 1, maxLength: 3 })).map(([v, edits]) => {
      let text = JSON.stringify(v) ?? 'null';
      for (const [at, insert] of edits) {
        const i = at % (text.length + 1);
        text = `${text.slice(0, i)}${insert}${text.slice(i + (insert === ' ' ? 0 : 1))}`;
      }
      return text;
    });
    fc.assert(
      fc.property(nearJson, fc.integer({ min: 1, max: 32 }), (text, piece) => {
        const bytes = utf8(text);
        expect(parsed(bytes, piece)).toEqual(reference(bytes));
      }),
      { numRuns: 3000 },
    );
  });

  it('refuses a missing member after a large one, which no run of neighbours holds', () => {
    for (const text of ['[-1.4262476134727153e+8,]', '[123456,,1]', '{"a":123456,"b":}', '{"a":123456,}', '[123456 ,]'])
      expect(parsed(utf8(text), 1), text).toEqual({ error: 'syntax' });
  });

  it('splits only between members: multi-byte characters, escapes and brackets inside strings survive', () => {
    const v = { 'k"ey\\': ['é€😀', '\\"]}', { '[': '{', n: -1.5e-7 }, [[], {}]], z: 'x'.repeat(100), ',': null };
    const bytes = utf8(JSON.stringify(v));
    for (const piece of [1, 2, 5, 17, 1000]) expect(parsed(bytes, piece)).toEqual({ value: v });
  });

  it('keeps a member named __proto__ a member, as JSON.parse does', () => {
    const text = '{"a":[1,2,3,4],"__proto__":{"polluted":[1,2,3,4]},"b":{"__proto__":[5,6,7,8]}}';
    const r = runSteps(jsonParseSteps(utf8(text), 4)) as Record<string, unknown>;
    expect(r).toEqual(JSON.parse(text));
    expect(Object.getPrototypeOf(r)).toBe(Object.prototype);
    expect(Object.keys(r)).toEqual(['a', '__proto__', 'b']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('skips a leading byte order mark, and names bytes that are not UTF-8', () => {
    const bom = new Uint8Array([0xef, 0xbb, 0xbf, ...utf8('[1, [2, 3], {"a": 4}]')]);
    expect(parsed(bom, 2)).toEqual({ value: [1, [2, 3], { a: 4 }] });
    const bad = new Uint8Array([...utf8('["abcdef", "'), 0xff, ...utf8('"]')]);
    expect(parsed(bad, 2)).toEqual({ error: 'utf8' });
    expect(parsed(bad, 1000)).toEqual({ error: 'utf8' });
  });

  it('parses a large body a piece at a time: no JSON.parse call takes more than a piece', () => {
    const row = Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, 'x'.repeat(100)]));
    const body = { ops: Array.from({ length: 20 }, (_, i) => ({ op: 'upsert', table: 'W', values: { id: `w${i}`, ...row } })) };
    const bytes = utf8(JSON.stringify(body));
    const piece = 8 * 1024;
    const longest: number[] = [];
    const parse = JSON.parse;
    JSON.parse = (text: string) => {
      longest.push(text.length);
      return parse(text);
    };
    let steps = 0;
    let value: unknown;
    try {
      const it = jsonParseSteps(bytes, piece);
      for (let r = it.next(); ; r = it.next(), steps++) {
        if (r.done === true) {
          value = r.value;
          break;
        }
      }
    } finally {
      JSON.parse = parse;
    }
    expect(value).toEqual(body);
    expect(Math.max(...longest)).toBeLessThanOrEqual(piece + 2);
    expect(steps).toBeGreaterThan(bytes.length / piece / 2);
  });

  it('parses a large value nested far deeper than the stack, as JSON.parse does', () => {
    const depth = 200_000;
    const bytes = utf8(`{"a":${'['.repeat(depth)}1${']'.repeat(depth)},"b":2}`);
    const v = runSteps(jsonParseSteps(bytes, 1024)) as { a: unknown; b: number };
    // Walked down by hand: comparing it whole would recurse as deep.
    let at: unknown = v.a;
    for (let i = 0; i < depth; i++) {
      expect(Array.isArray(at) && at.length === 1).toBe(true);
      at = (at as unknown[])[0];
    }
    expect([at, v.b]).toEqual([1, 2]);
    const cut = bytes.subarray(0, bytes.length - 10);
    expect(parsed(cut, 1024)).toEqual({ error: 'syntax' });
  });
});
