/**
 * Ranking over a table version's search segments (search-segment.ts): the
 * segments of the version's pieces, oldest first, merged at query time.
 *
 * Which positions are live is decided here, once per version: a position
 * is live when it is not a tombstone and no newer piece holds its key
 * (newest wins; a newer tombstone hides it). Walking the pieces newest
 * first with the set of keys already seen decides it in one pass, and a
 * version of one piece needs no set at all.
 *
 * Full text is BM25 (k1 = 1.2, b = 0.75), per field, summed over a table's
 * `@search` fields. Its statistics are exact for the live rows of the
 * version, never approximated from segment-level counts that still include
 * rows a newer piece replaced or deleted:
 * - a field's document count N is the number of live positions with at
 *   least one term in it, and its average length the sum of their lengths
 *   over N: both counted over the live masks, once per version;
 * - a term's document frequency is the number of live positions in its
 *   postings, counted per query over every piece.
 * A query's text is analyzed as each field is (stemmed or not), so a term
 * meets exactly the terms its field was indexed under. The `where` filter
 * narrows which positions may be hits, before any top-k is taken; it does not
 * change the statistics, which describe the table at the ref.
 *
 * Vector search is exact: every live, admitted position with a vector is
 * measured (cosine distance 1 − cos, Euclidean distance, or the negated
 * inner product) and the k nearest kept. Text and vector ranks are fused by
 * reciprocal rank fusion (score = Σ 1 / (60 + rank)) when both are asked.
 * Ties are broken by key, so every answer has one order.
 *
 * Pure: no I/O.
 */
import { termsOf, textTerms } from '../model/search-text.js';
import type { Row } from '../model/values.js';
import type { VectorMetric } from '../model/schema.js';
import type { SearchSegment, SearchSpec } from './search-segment.js';
import { compareKey } from './run.js';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;
export const RRF_K = 60;

/** A version's live positions and per-field statistics, decided once per version. */
export interface LiveIndex {
  segments: SearchSegment[];
  /** Per segment, 1 at each live position. */
  live: Uint8Array[];
  /** Per field: live documents with a term in it, and their total length. */
  fieldStats: { docs: number; length: number }[];
  /** Live positions over all segments. */
  liveRows: number;
}

/** Decide the live positions of `segments` (oldest first) and count the field statistics. */
export function liveIndex(spec: SearchSpec, segments: SearchSegment[]): LiveIndex {
  const live = segments.map((s) => new Uint8Array(s.keys.length));
  const seen = segments.length > 1 ? new Set<string>() : undefined;
  for (let si = segments.length - 1; si >= 0; si--) {
    const s = segments[si] as SearchSegment;
    const mask = live[si] as Uint8Array;
    for (let i = 0; i < s.keys.length; i++) {
      const key = s.keys[i] as string;
      if (!s.tombs[i] && seen?.has(key) !== true) mask[i] = 1;
      seen?.add(key);
    }
  }
  let liveRows = 0;
  for (const m of live) for (const x of m) liveRows += x;
  const fieldStats = spec.fields.map((_, fi) => {
    let docs = 0;
    let length = 0;
    segments.forEach((s, si) => {
      const lengths = (s.fields[fi] as SearchSegment['fields'][number]).lengths;
      const mask = live[si] as Uint8Array;
      for (let i = 0; i < lengths.length; i++) {
        if (mask[i] === 1 && (lengths[i] as number) > 0) {
          docs++;
          length += lengths[i] as number;
        }
      }
    });
    return { docs, length };
  });
  return { segments, live, fieldStats, liveRows };
}

/** A position of a version: segment and position in it. */
export interface Hit {
  segment: number;
  position: number;
  key: string;
  /** Higher is better: BM25 for text, the negated distance for a vector, the fused rank for both. */
  score: number;
  bm25: number | null;
  distance: number | null;
}

export interface RankAsk {
  text?: string | undefined;
  near?: { vector: readonly number[]; property: number; k: number } | undefined;
  /** Positions a hit may be at (the `where` filter); all live positions when absent. */
  admit?: ((segment: number, position: number) => boolean) | undefined;
  first: number;
}

/** The BM25 inverse document frequency of a term held by `df` of `n` documents. */
export function bm25Idf(n: number, df: number): number {
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** One term's BM25 contribution for a document where it occurs `tf` times in `dl` terms. */
export function bm25Term(c: { idf: number; tf: number; dl: number; avgdl: number }): number {
  return (c.idf * c.tf * (BM25_K1 + 1)) / (c.tf + BM25_K1 * (1 - BM25_B + (BM25_B * c.dl) / c.avgdl));
}

/** Unique query terms of each field, as the field analyzes text, in the order they first occur. */
export function queryTerms(spec: SearchSpec, text: string): string[][] {
  return spec.fields.map((f) => [...new Set(termsOf(text, f.stem))]);
}

const hitKey = (segment: number, position: number): number => segment * 2 ** 26 + position;

/** BM25 of every live, admitted position that holds a query term, keyed by `hitKey`. */
function textScores(spec: SearchSpec, ix: LiveIndex, ask: RankAsk & { text: string }): Map<number, Hit> {
  const out = new Map<number, Hit>();
  const terms = queryTerms(spec, ask.text);
  spec.fields.forEach((_, fi) => {
    const stats = ix.fieldStats[fi] as LiveIndex['fieldStats'][number];
    if (stats.docs === 0) return;
    const avgdl = stats.length / stats.docs;
    for (const term of terms[fi] as string[]) {
      let df = 0;
      ix.segments.forEach((s, si) => {
        const p = s.fields[fi]?.postings.get(term);
        if (p === undefined) return;
        const mask = ix.live[si] as Uint8Array;
        for (const pos of p.positions) df += mask[pos] as number;
      });
      if (df === 0) continue;
      const idf = bm25Idf(stats.docs, df);
      ix.segments.forEach((s, si) => {
        const f = s.fields[fi] as SearchSegment['fields'][number];
        const p = f.postings.get(term);
        if (p === undefined) return;
        const mask = ix.live[si] as Uint8Array;
        for (let j = 0; j < p.positions.length; j++) {
          const pos = p.positions[j] as number;
          if (mask[pos] !== 1 || (ask.admit !== undefined && !ask.admit(si, pos))) continue;
          const add = bm25Term({ idf, tf: p.counts[j] as number, dl: f.lengths[pos] as number, avgdl });
          const k = hitKey(si, pos);
          const hit = out.get(k);
          if (hit === undefined)
            out.set(k, { segment: si, position: pos, key: s.keys[pos] as string, score: add, bm25: add, distance: null });
          else {
            hit.score += add;
            hit.bm25 = (hit.bm25 as number) + add;
          }
        }
      });
    }
  });
  return out;
}

/**
 * How far vectors are from `q` under a metric (smaller is nearer): a function of the vector that
 * starts at `at` in `values`, so a scan over a segment's matrix makes no view per position.
 */
export function distanceFrom(metric: VectorMetric, q: ArrayLike<number>): (values: ArrayLike<number>, at: number) => number {
  const dims = q.length;
  if (metric === 'l2')
    return (values, at) => {
      let sum = 0;
      for (let d = 0; d < dims; d++) {
        const x = (q[d] as number) - (values[at + d] as number);
        sum += x * x;
      }
      return Math.sqrt(sum);
    };
  return (values, at) => {
    let dot = 0;
    let nq = 0;
    let nv = 0;
    for (let d = 0; d < dims; d++) {
      const a = q[d] as number;
      const b = values[at + d] as number;
      dot += a * b;
      nq += a * a;
      nv += b * b;
    }
    if (metric === 'dot') return -dot;
    return nq === 0 || nv === 0 ? 1 : 1 - dot / Math.sqrt(nq * nv);
  };
}

/** The k nearest live, admitted positions with a vector, nearest first. */
function nearest(spec: SearchSpec, ix: LiveIndex, ask: RankAsk & { near: NonNullable<RankAsk['near']> }): Hit[] {
  const { vector, property, k } = ask.near;
  const distance = distanceFrom((spec.vectors[property] as SearchSpec['vectors'][number]).metric, vector);
  const hits: Hit[] = [];
  ix.segments.forEach((s, si) => {
    const v = s.vectors[property] as SearchSegment['vectors'][number];
    const mask = ix.live[si] as Uint8Array;
    for (let pos = 0; pos < s.keys.length; pos++) {
      if (mask[pos] !== 1 || v.present[pos] !== 1 || (ask.admit !== undefined && !ask.admit(si, pos))) continue;
      const d = distance(v.values, pos * v.dims);
      hits.push({ segment: si, position: pos, key: s.keys[pos] as string, score: -d, bm25: null, distance: d });
    }
  });
  return hits.sort((a, b) => (a.distance as number) - (b.distance as number) || compareKey(a.key, b.key)).slice(0, k);
}

const byScore = (a: Hit, b: Hit): number => b.score - a.score || compareKey(a.key, b.key);

/** The hits of a query over a version, best first, at most `first`. */
export function rank(spec: SearchSpec, ix: LiveIndex, ask: RankAsk): Hit[] {
  const text = ask.text === undefined ? undefined : [...textScores(spec, ix, { ...ask, text: ask.text }).values()].sort(byScore);
  const near = ask.near === undefined ? undefined : nearest(spec, ix, { ...ask, near: ask.near });
  if (text === undefined) return (near ?? []).slice(0, ask.first);
  if (near === undefined) return text.slice(0, ask.first);
  const fused = new Map<number, Hit>();
  const fuse = (list: Hit[]): void =>
    list.forEach((h, i) => {
      const k = hitKey(h.segment, h.position);
      const into = fused.get(k);
      if (into === undefined) fused.set(k, { ...h, score: 1 / (RRF_K + i + 1) });
      else {
        into.score += 1 / (RRF_K + i + 1);
        into.bm25 ??= h.bm25;
        into.distance ??= h.distance;
      }
    });
  fuse(text);
  fuse(near);
  return [...fused.values()].sort(byScore).slice(0, ask.first);
}

/** Where a hit's text matched: a fragment of one field's value and the matched words' offsets in it. */
export interface Highlight {
  property: string;
  fragment: string;
  matches: [number, number][];
}

/** Fragments around the first matches, at most this long. */
export const FRAGMENT_CHARS = 200;

/** The highlights of a row for a query's text: per field with a match, a fragment around the first matched word. */
export function highlightsOf(spec: SearchSpec, row: Row, text: string): Highlight[] {
  const terms = queryTerms(spec, text);
  const out: Highlight[] = [];
  spec.fields.forEach((f, fi) => {
    const value = row[f.prop];
    if (typeof value !== 'string') return;
    const wanted = new Set(terms[fi]);
    const matched = textTerms(value, f.stem).filter((t) => wanted.has(t.term));
    if (matched.length === 0) return;
    const first = matched[0] as (typeof matched)[number];
    const start = Math.max(0, Math.min(first.start - 40, value.length - FRAGMENT_CHARS));
    const end = Math.min(value.length, start + FRAGMENT_CHARS);
    out.push({
      property: f.prop,
      fragment: value.slice(start, end),
      matches: matched.filter((t) => t.end <= end).map((t) => [t.start - start, t.end - start]),
    });
  });
  return out;
}
