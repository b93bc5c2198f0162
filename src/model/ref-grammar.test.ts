/**
 * The ref grammar: every printed ref parses back to itself, the examples
 * the README gives parse as it says, and what is not a ref is refused with
 * a sentence, never a crash.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_REF_GENERATIONS, parseRefText, refPathText, type RefPath } from './ref-grammar.js';

const ID = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const idChars = (min: number, max: number) => fc.array(fc.constantFrom(...ID), { minLength: min, maxLength: max }).map((cs) => cs.join(''));
const name = fc
  .tuple(fc.constantFrom(...'abcXYZ019'), fc.array(fc.constantFrom(...'abz09._-/'), { maxLength: 12 }))
  .map(([a, rest]) => a + rest.join(''));
const time = fc.integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) }).map((ms) => new Date(ms).toISOString());
const step = fc.record({ kind: fc.constantFrom('ancestor' as const, 'parent' as const), n: fc.integer({ min: 0, max: 40 }) });
const path: fc.Arbitrary<RefPath> = fc.oneof(
  fc.record({ base: name.map((branch) => ({ branch })), asOf: time, steps: fc.array(step, { maxLength: 6 }) }),
  fc.record({ base: name.map((branch) => ({ branch })), steps: fc.array(step, { maxLength: 6 }) }),
  fc.record({ base: idChars(26, 26).map((commit) => ({ commit })), steps: fc.array(step, { maxLength: 6 }) }),
  fc.record({ base: idChars(8, 25).map((commitPrefix) => ({ commitPrefix })), steps: fc.array(step, { maxLength: 6 }) }),
  fc.record({ base: name.map((tag) => ({ tag })), steps: fc.array(step, { maxLength: 6 }) }),
);

describe('the ref grammar', () => {
  it('property: every printed ref parses back to itself', () => {
    fc.assert(
      fc.property(path, (p) => {
        expect(parseRefText(refPathText(p))).toEqual(p);
      }),
      { numRuns: 2000 },
    );
  });

  it('reads the documented forms', () => {
    expect(parseRefText('main')).toEqual({ base: { branch: 'main' }, steps: [] });
    expect(parseRefText('main~')).toEqual({ base: { branch: 'main' }, steps: [{ kind: 'ancestor', n: 1 }] });
    expect(parseRefText('main^')).toEqual({ base: { branch: 'main' }, steps: [{ kind: 'parent', n: 1 }] });
    expect(parseRefText('main~2^2~1')).toEqual({
      base: { branch: 'main' },
      steps: [
        { kind: 'ancestor', n: 2 },
        { kind: 'parent', n: 2 },
        { kind: 'ancestor', n: 1 },
      ],
    });
    expect(parseRefText('team/feature@{2026-12-01T13:00:00+01:00}~1')).toEqual({
      base: { branch: 'team/feature' },
      asOf: '2026-12-01T12:00:00.000Z',
      steps: [{ kind: 'ancestor', n: 1 }],
    });
    expect(parseRefText('commit:01M8W0RP')).toEqual({ base: { commitPrefix: '01M8W0RP' }, steps: [] });
    expect(parseRefText('commit:01M8W0RPR6ZWBKQES5DF7BRSGE^2')).toEqual({
      base: { commit: '01M8W0RPR6ZWBKQES5DF7BRSGE' },
      steps: [{ kind: 'parent', n: 2 }],
    });
    expect(parseRefText('tag:v1.0~3')).toEqual({ base: { tag: 'v1.0' }, steps: [{ kind: 'ancestor', n: 3 }] });
  });

  it('refuses what is not a ref with a sentence', () => {
    const refused = [
      '',
      '~1',
      'main~x',
      'main@{yesterday}',
      'main@{2026-12-01T12:00:00Z',
      'main@{2026-13-45T99:00:00Z}',
      'commit:01M8W0R',
      'commit:01M8W0RPLOWERCASE',
      'commit:01M8W0RPR6ZWBKQES5DF7BRSGE@{2026-12-01T12:00:00Z}',
      'tag:',
      `main~${MAX_REF_GENERATIONS + 1}`,
      `main${'~5000'.repeat(3)}`,
      `main${'^'.repeat(65)}`,
      'main~1@{2026-12-01T12:00:00Z}',
    ];
    for (const text of refused) {
      const r = parseRefText(text);
      expect({ text, refused: 'error' in r }).toEqual({ text, refused: true });
      if ('error' in r) expect(r.error.length).toBeGreaterThan(10);
    }
  });

  it('property: any text parses or is refused, never throws', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (s) => {
        const r = parseRefText(s);
        expect(typeof r).toBe('object');
      }),
      { numRuns: 2000 },
    );
  });
});
