import { describe, expect, it } from 'vitest';
import { findInputProblem, isWellFormed, MAX_INPUT_DEPTH } from './text.js';

describe('findInputProblem', () => {
  it('accepts well-formed values of any shape', () => {
    expect(findInputProblem({ a: [1, 'x', { b: null, c: true }], d: '\u{1F600}' }, 'ops[0]')).toBeUndefined();
  });

  it('names the exact path of a lone surrogate, through arrays and objects', () => {
    expect(findInputProblem({ values: { tags: ['ok', { deep: 'x\uD800' }] } }, 'ops[3]')).toEqual({
      path: 'ops[3].values.tags[1].deep',
      message: expect.stringContaining('lone UTF-16 surrogate'),
    });
  });

  it('names an ill-formed key quoted, and a __proto__ key', () => {
    expect(findInputProblem({ a: { 'k\uDC00': 1 } }, 'body')?.path).toBe('body.a."k\\udc00"');
    expect(findInputProblem(JSON.parse('{"a":[{"__proto__":{}}]}'), 'body')).toEqual({
      path: 'body.a[0].__proto__',
      message: '__proto__ is not a usable name',
    });
  });

  it('ignores inherited members and reports the first problem only', () => {
    const o = Object.create({ inherited: 'x\uD800' }) as Record<string, unknown>;
    o.own = ['x\uDBFF', 'y\uDBFF'];
    expect(findInputProblem(o, 'v')?.path).toBe('v.own[0]');
  });

  it('stops at the depth limit with a shortened path', () => {
    let v: unknown = 'leaf';
    for (let i = 0; i < MAX_INPUT_DEPTH + 5; i++) v = [v];
    const bad = findInputProblem(v, 'body');
    expect(bad?.message).toContain(`deeper than ${MAX_INPUT_DEPTH} levels`);
    expect(bad?.path.startsWith('body[0][0]')).toBe(true);
    expect(bad?.path.endsWith('…')).toBe(true);
    expect(bad?.path.length).toBe(101);
  });

  it('isWellFormed tells paired surrogates from lone ones', () => {
    expect(isWellFormed('a\uD83D\uDE00b')).toBe(true);
    expect(isWellFormed('a\uD83Db')).toBe(false);
    expect(isWellFormed('\uDE00')).toBe(false);
  });
});
