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
 * Text that is all ASCII (most of it) takes a fast path: one regular
 * expression that spells the same UAX #29 rules for ASCII (letters and
 * digits run together, with `_` joining them; `'`, `.` and `:` join
 * letters and `'`, `.`, `,` and `;` join digits when one stands between
 * two; a lone `_` is not a word, two are). A property test holds it to
 * `Intl.Segmenter` on random ASCII, so both paths give the same terms.
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

/** Stems already computed: text repeats its words, and the stemmer is the cost of indexing and highlighting. */
const stems = new Map<string, string>();
const MAX_STEMS = 100_000;

function stemOf(word: string): string {
  let s = stems.get(word);
  if (s === undefined) {
    if (stems.size >= MAX_STEMS) stems.clear();
    s = stemmer(word);
    stems.set(word, s);
  }
  return s;
}

/** Words of ASCII text, by UAX #29's rules as they apply to ASCII (see the header). */
const ASCII_WORD = /[A-Za-z0-9_]+(?:(?:(?<=[A-Za-z])['.:](?=[A-Za-z])|(?<=[0-9])[.,;'](?=[0-9]))[A-Za-z0-9_]+)*/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the test is for ASCII, control characters included.
const ASCII = /^[\x00-\x7f]*$/;

/** The terms of `text`, in order, with their offsets. */
export function textTerms(text: string, stem: boolean): TextTerm[] {
  const out: TextTerm[] = [];
  if (ASCII.test(text)) {
    for (const m of text.matchAll(ASCII_WORD)) {
      const word = m[0];
      if (word === '_' || word.length > MAX_TERM_CHARS) continue;
      const lower = word.toLowerCase();
      out.push({ term: stem ? stemOf(lower) : lower, start: m.index, end: m.index + word.length });
    }
    return out;
  }
  for (const s of segmenter.segment(text)) {
    if (s.isWordLike !== true || s.segment.length > MAX_TERM_CHARS) continue;
    const word = s.segment.toLowerCase();
    out.push({ term: stem ? stemOf(word) : word, start: s.index, end: s.index + s.segment.length });
  }
  return out;
}

/** The terms of `text` alone. */
export function termsOf(text: string, stem: boolean): string[] {
  return textTerms(text, stem).map((t) => t.term);
}
