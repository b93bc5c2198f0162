import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { localEmbedding } from './local-embedder.js';
import { termsOf, textTerms } from './search-text.js';

describe('search text', () => {
  it('splits at Unicode word boundaries, lowercases, and stems only where asked', () => {
    expect(termsOf("The customer's DISPUTES, e-mail: ada@example.com — 東京 ½", false)).toEqual(
      ['the', "customer's", 'disputes', 'e', 'mail', 'ada', 'example.com', '東京', '½'].filter((t) => t !== '½'),
    );
    expect(termsOf('disputes disputed disputing', true)).toEqual(['disput', 'disput', 'disput']);
    expect(textTerms('  ab cd', false)).toEqual([
      { term: 'ab', start: 2, end: 4 },
      { term: 'cd', start: 5, end: 7 },
    ]);
  });

  it('finds in ASCII text exactly the words Intl.Segmenter finds', () => {
    const segmenter = new Intl.Segmenter('en', { granularity: 'word' });
    const ascii = fc.string({ unit: fc.constantFrom(...'aZ09_.,;:\' \t\n-"!?@#$%&*()[]{}<>/\\|+=~`^'.split('')), maxLength: 24 });
    fc.assert(
      fc.property(ascii, (text) => {
        const icu = [...segmenter.segment(text)]
          .filter((s) => s.isWordLike)
          .map((s) => ({ term: s.segment.toLowerCase(), start: s.index, end: s.index + s.segment.length }));
        expect(textTerms(text, false)).toEqual(icu);
      }),
      { numRuns: 20_000 },
    );
  });

  it('embeds locally, deterministically, as unit float32 vectors; shared words bring texts near', () => {
    const a = localEmbedding('invoice dispute', 64);
    expect(localEmbedding('invoice dispute', 64)).toEqual(a);
    expect(a.every((x) => Math.fround(x) === x)).toBe(true);
    expect(Math.abs(a.reduce((n, x) => n + x * x, 0) - 1)).toBeLessThan(1e-6);
    const cos = (x: number[], y: number[]) => x.reduce((n, v, i) => n + v * (y[i] as number), 0);
    expect(cos(a, localEmbedding('disputed invoices', 64))).toBeGreaterThan(cos(a, localEmbedding('lunch sandwiches', 64)));
    expect(localEmbedding('', 4)).toEqual([1, 0, 0, 0]);
  });
});
