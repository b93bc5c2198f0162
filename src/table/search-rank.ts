/**
 * Ranking over a table version's search segments (search-segment.ts): the
 * segments of the version's runs, oldest first, merged at query time.
 *
 * Which positions are live is decided here, once per version: a position
 * is live when it is not a tombstone and no newer run holds its key
 * (newest wins; a newer tombstone hides it). Walking the runs newest
 * first with the set of keys already seen decides it in one pass, and a
 * version of one run needs no set at all.
 *
 * Full text is BM25 (k1 = 1.2, b = 0.75), per field, summed over a table's
 * `@search` fields. Its statistics are exact for the live rows of the
 * version, never approximated from segment-level counts that still include
 * rows a newer run replaced or deleted:
 * - a field's document count N is the number of live positions with at
 *   least one term in it, and its average length the sum of their lengths
 *   over N: both counted over the live masks, once per version;
 * - a term's document frequency is the number of live positions in its
 *   postings, counted per query over every run.
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
 * Long scans give the event loop turns (model/turns.ts), so a search over a
 * large table never holds it. Pure: no I/O.
 */
import { termsOf, textTerms } from '../model/search-text.js';
import type { Row } from '../model/values.js';
import type { VectorMetric } from '../model/schema.js';
import type { SearchSegment, SearchSpec } from './search-segment.js';
import { compareKey } from './run.js';
import { TopK } from './top-k.js';
import { Slice } from '../model/turns.js';

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
export async function liveIndex(spec: SearchSpec, segments: SearchSegment[]): Promise<LiveIndex> {
  const slice = new Slice();
  const live = segments.map((s) => new Uint8Array(s.keys.length));
  const seen = segments.length > 1 ? new Set<string>() : undefined;
  for (let si = segments.length - 1; si >= 0; si--) {
    const s = segments[si] as SearchSegment;
    const mask = live[si] as Uint8Array;
    for (let i = 0; i < s.keys.length; i++) {
      if ((i & 1023) === 0 && slice.due()) await slice.turn();
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

/** Ahead in a ranking: the higher score, then the lesser key. */
const ahead = (a: Hit, b: Hit): boolean => a.score > b.score || (a.score === b.score && compareKey(a.key, b.key) < 0);

/**
 * The `limit` best live, admitted positions by BM25. Scores add up per segment in a dense array
 * (a position's slot), with the positions touched listed, so a query allocates a hit only for
 * what it may answer.
 */
async function textHits(spec: SearchSpec, ix: LiveIndex, ask: RankAsk & { text: string; limit: number }): Promise<Hit[]> {
  const terms = queryTerms(spec, ask.text);
  const scores = ix.segments.map((s) => scratch(s.keys.length));
  const touched: number[][] = ix.segments.map(() => []);
  try {
    return await scoredHits({ spec, ix, ask, terms, scores, touched });
  } finally {
    // Scratch goes back zeroed, touched slots only: the next query starts from nothing.
    scores.forEach((sc, si) => {
      for (const pos of touched[si] as number[]) sc[pos] = 0;
      release(sc);
    });
  }
}

/** Zeroed score arrays kept between queries, by length: a query over 60,000 rows allocated half a megabyte per segment. */
const spare = new Map<number, Float64Array[]>();

function scratch(n: number): Float64Array {
  return spare.get(n)?.pop() ?? new Float64Array(n);
}

function release(a: Float64Array): void {
  const list = spare.get(a.length) ?? [];
  if (list.length < 4) list.push(a);
  spare.set(a.length, list);
}

async function scoredHits(c: {
  spec: SearchSpec;
  ix: LiveIndex;
  ask: RankAsk & { limit: number };
  terms: string[][];
  scores: Float64Array[];
  touched: number[][];
}): Promise<Hit[]> {
  const { spec, ix, ask, terms, scores, touched } = c;
  const slice = new Slice();
  for (let fi = 0; fi < spec.fields.length; fi++) {
    const stats = ix.fieldStats[fi] as LiveIndex['fieldStats'][number];
    if (stats.docs === 0) continue;
    for (const term of terms[fi] as string[]) {
      const df = liveFrequency(ix, fi, term);
      if (df === 0) continue;
      for (let si = 0; si < ix.segments.length; si++) {
        addTerm({ ix, fi, si, term, idf: bm25Idf(stats.docs, df), avgdl: stats.length / stats.docs, scores, touched });
        if (slice.due()) await slice.turn();
      }
    }
  }
  const best = new TopK<Hit>(ask.limit, ahead);
  for (let si = 0; si < ix.segments.length; si++) {
    const s = ix.segments[si] as SearchSegment;
    const sc = scores[si] as Float64Array;
    const list = touched[si] as number[];
    for (let j = 0; j < list.length; j++) {
      if ((j & 1023) === 0 && slice.due()) await slice.turn();
      const pos = list[j] as number;
      const score = sc[pos] as number;
      const hit = { segment: si, position: pos, key: s.keys[pos] as string, score, bm25: score, distance: null };
      if (best.wants(hit) && (ask.admit === undefined || ask.admit(si, pos))) best.offer(hit);
    }
  }
  return best.sorted();
}

/** How many live positions of the version hold `term` in field `fi`. */
function liveFrequency(ix: LiveIndex, fi: number, term: string): number {
  let df = 0;
  for (let si = 0; si < ix.segments.length; si++) {
    const p = (ix.segments[si] as SearchSegment).fields[fi]?.postings.get(term);
    if (p === undefined) continue;
    const mask = ix.live[si] as Uint8Array;
    for (const pos of p.positions) df += mask[pos] as number;
  }
  return df;
}

/** Add one term's BM25 (bm25Term, inlined: this runs once per posting and allocates nothing) to segment `si`'s live positions. */
function addTerm(c: {
  ix: LiveIndex;
  fi: number;
  si: number;
  term: string;
  idf: number;
  avgdl: number;
  scores: Float64Array[];
  touched: number[][];
}): void {
  const f = (c.ix.segments[c.si] as SearchSegment).fields[c.fi] as SearchSegment['fields'][number];
  const p = f.postings.get(c.term);
  if (p === undefined) return;
  const mask = c.ix.live[c.si] as Uint8Array;
  const sc = c.scores[c.si] as Float64Array;
  const list = c.touched[c.si] as number[];
  const { positions, counts } = p;
  const lengths = f.lengths;
  const lengthNorm = (BM25_K1 * BM25_B) / c.avgdl;
  const base = BM25_K1 * (1 - BM25_B);
  const idf = c.idf;
  for (let j = 0; j < positions.length; j++) {
    const pos = positions[j] as number;
    if (mask[pos] !== 1) continue;
    if (sc[pos] === 0) list.push(pos);
    const tf = counts[j] as number;
    sc[pos] = (sc[pos] as number) + (idf * tf * (BM25_K1 + 1)) / (tf + base + lengthNorm * (lengths[pos] as number));
  }
}

/**
 * How far the vector at position `i` of a segment's matrix is from `q` under a metric (smaller is
 * nearer): cosine distance (1 − cos, and 1 when either vector is all zeros), Euclidean distance, or
 * the negated inner product. Cosine reads the segment's stored norms, so it costs one product.
 */
export function distanceFrom(
  metric: VectorMetric,
  q: ArrayLike<number>,
): (v: { values: Float32Array; norms: Float64Array }, i: number) => number {
  const dims = q.length;
  let qq = 0;
  for (let d = 0; d < dims; d++) qq += (q[d] as number) * (q[d] as number);
  const qn = Math.sqrt(qq);
  if (metric === 'l2')
    return ({ values }, i) => {
      let sum = 0;
      const at = i * dims;
      for (let d = 0; d < dims; d++) {
        const x = (q[d] as number) - (values[at + d] as number);
        sum += x * x;
      }
      return Math.sqrt(sum);
    };
  return ({ values, norms }, i) => {
    let dot = 0;
    const at = i * dims;
    for (let d = 0; d < dims; d++) dot += (q[d] as number) * (values[at + d] as number);
    if (metric === 'dot') return -dot;
    const vn = norms[i] as number;
    return qn === 0 || vn === 0 ? 1 : 1 - dot / (qn * vn);
  };
}

/** The k nearest live, admitted positions with a vector, nearest first. */
async function nearest(spec: SearchSpec, ix: LiveIndex, ask: RankAsk & { near: NonNullable<RankAsk['near']> }): Promise<Hit[]> {
  const slice = new Slice();
  const { property, k } = ask.near;
  // A typed array: the product below reads it once per dimension per vector.
  const distance = distanceFrom((spec.vectors[property] as SearchSpec['vectors'][number]).metric, Float64Array.from(ask.near.vector));
  const best = new TopK<Hit>(k, ahead);
  for (let si = 0; si < ix.segments.length; si++) {
    const s = ix.segments[si] as SearchSegment;
    const v = s.vectors[property] as SearchSegment['vectors'][number];
    const mask = ix.live[si] as Uint8Array;
    for (let pos = 0; pos < s.keys.length; pos++) {
      // An exact scan measures every vector: tens of milliseconds per 60,000 of 384 values.
      if ((pos & 511) === 0 && slice.due()) await slice.turn();
      if (mask[pos] !== 1 || v.present[pos] !== 1) continue;
      const d = distance(v, pos);
      // Farther than the k-th nearest so far: not a hit, and nothing is made for it.
      const bar = best.bar();
      if (bar !== undefined && d > (bar.distance as number)) continue;
      const hit = { segment: si, position: pos, key: s.keys[pos] as string, score: -d, bm25: null, distance: d };
      if (best.wants(hit) && (ask.admit === undefined || ask.admit(si, pos))) best.offer(hit);
    }
  }
  return best.sorted();
}

/**
 * The hits of a query over a version, best first, at most `first`. Text and vector ranks are
 * fused over each side's own best: the text side's best `max(first, k)`, the vector side's `k`.
 */
export async function rank(spec: SearchSpec, ix: LiveIndex, ask: RankAsk): Promise<Hit[]> {
  const near = ask.near === undefined ? undefined : await nearest(spec, ix, { ...ask, near: ask.near });
  const textLimit = near === undefined ? ask.first : Math.max(ask.first, ask.near?.k ?? 0);
  const text = ask.text === undefined ? undefined : await textHits(spec, ix, { ...ask, text: ask.text, limit: textLimit });
  if (text === undefined) return (near ?? []).slice(0, ask.first);
  if (near === undefined) return text;
  const fused = new Map<number, Hit>();
  const fuse = (list: Hit[]): void =>
    list.forEach((h, i) => {
      const key = hitKey(h.segment, h.position);
      const into = fused.get(key);
      if (into === undefined) fused.set(key, { ...h, score: 1 / (RRF_K + i + 1) });
      else {
        into.score += 1 / (RRF_K + i + 1);
        into.bm25 ??= h.bm25;
        into.distance ??= h.distance;
      }
    });
  fuse(text);
  fuse(near);
  const best = new TopK<Hit>(ask.first, ahead);
  for (const h of fused.values()) best.offer(h);
  return best.sorted();
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
export function highlightsOf(spec: SearchSpec, row: Row, terms: readonly string[][]): Highlight[] {
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
