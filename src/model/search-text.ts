/**
 * How text becomes search terms, for indexing and for queries alike (so a
 * query term matches exactly the terms a document was indexed under).
 *
 * Words are found at Unicode word boundaries (UAX #29) by `Intl.Segmenter`,
 * which Node carries with its ICU data: the standard rules, for every script,
 * with no dictionary of our own to keep. A segment counts as a word when the
 * segmenter says it is word-like (letters, digits, ideographs), so
 * punctuation and spaces are never terms. Each word is lowercased
 * (`toLowerCase`, locale-independent, so an index reads the same on every
 * machine). A property declared `@search(stem: english)` also passes each
 * word through the Porter stemmer of the `stemmer` package (a small, typed,
 * dependency-free implementation of the published algorithm), so "disputes",
 * "disputed" and "disputing" meet at "disput".
 *
 * Pure: no I/O.
 */
import { stemmer } from 'stemmer';

/** One term of a text, with where its word lies (UTF-16 offsets), for highlights. */
export interface TextTerm {
  term: string;
  start: number;
  end: number;
}

/** Longest word kept as a term: longer runs of letters are not words anyone searches for. */
export const MAX_TERM_CHARS = 64;

const segmenter = new Intl.Segmenter('en', { granularity: 'word' });

/** The terms of `text`, in order, with their offsets. */
export function textTerms(text: string, stem: boolean): TextTerm[] {
  const out: TextTerm[] = [];
  for (const s of segmenter.segment(text)) {
    if (s.isWordLike !== true || s.segment.length > MAX_TERM_CHARS) continue;
    const word = s.segment.toLowerCase();
    out.push({ term: stem ? stemmer(word) : word, start: s.index, end: s.index + s.segment.length });
  }
  return out;
}

/** The terms of `text` alone. */
export function termsOf(text: string, stem: boolean): string[] {
  return textTerms(text, stem).map((t) => t.term);
}
