/**
 * The local embedder: a deterministic vector for any text, computed here,
 * with no model and no network. It is for tests, demos and offline use, and
 * it is not semantic: texts that share words and word pieces get near
 * vectors, texts that mean the same in other words do not.
 *
 * It hashes features into the vector's positions (the "hashing trick"):
 * each word (lowercased and stemmed, as search-text.ts reads words) and
 * each three-character piece of each word adds ±1 at the position its hash
 * picks, the sign from another bit of the hash so collisions cancel rather
 * than pile up. The vector is then scaled to length 1 (a text with no words
 * gets the first unit vector), and each value rounded to float32 as stored.
 *
 * Pure: no I/O.
 */
import { textTerms } from './search-text.js';

/** FNV-1a over UTF-16 units: a fixed, fast hash, the same on every machine. */
function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** The local embedding of `text` in `dims` dimensions. */
export function localEmbedding(text: string, dims: number): number[] {
  const v = new Float64Array(dims);
  const add = (feature: string, weight: number): void => {
    const h = fnv1a(feature);
    v[h % dims] = (v[h % dims] as number) + (h & 0x80000000 ? -weight : weight);
  };
  for (const { term } of textTerms(text, true)) {
    add(`w:${term}`, 1);
    const padded = `^${term}$`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`g:${padded.slice(i, i + 3)}`, 0.5);
  }
  let norm = 0;
  for (const x of v) norm += x * x;
  if (norm === 0) return Array.from({ length: dims }, (_, i) => (i === 0 ? 1 : 0));
  const scale = 1 / Math.sqrt(norm);
  return Array.from(v, (x) => Math.fround(x * scale));
}
