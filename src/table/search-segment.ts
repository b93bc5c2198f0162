/**
 * A search segment: the full-text and vector index of one immutable run,
 * as Lucene and Tantivy keep an index segment per immutable segment of
 * documents. A segmented run (one stored in pieces) has one search segment
 * over all its pieces, in order.
 *
 * A segment indexes every position of its run, in the run's key order:
 * for each `@search` property (a *field*), the postings of each term (the
 * positions holding it and how often) and each position's field length in
 * terms; for each vector property, the vectors as one float32 matrix and
 * which positions hold one. Tombstones are indexed as empty positions. It
 * says nothing about which positions are live: that depends on the newer
 * runs above it in a table version, and is decided at query time
 * (search-rank.ts). So a segment never changes once built, and a table
 * version's segments are exactly its runs' segments: every ref is
 * searchable as of that ref, with no index to repair after a merge,
 * cherry-pick, revert or reset.
 *
 * A segment is derived from its run and the table's search spec alone,
 * so it can be built again at any time; its bytes are stored beside the run
 * as a derived object (see graph/search-segments.ts). Pure: no I/O.
 */
import { canonicalJson, contentHash } from '../model/canonical.js';
import { termsOf } from '../model/search-text.js';
import { rowProps, type TableType, type VectorMetric } from '../model/schema.js';
import type { RunData } from './run.js';
import { Slice } from '../model/turns.js';

/** What a table's search indexes: its `@search` fields (with their stemming) and vector properties (with their metric). */
export interface SearchSpec {
  fields: { prop: string; stem: boolean }[];
  vectors: { prop: string; dims: number; metric: VectorMetric }[];
}

const specs = new WeakMap<TableType, SearchSpec & { hash: string }>();

/** A table's search spec, and its hash (a segment is built for one spec: another spec builds another). */
export function searchSpecOf(t: TableType): SearchSpec & { hash: string } {
  let s = specs.get(t);
  if (s === undefined) {
    const fields: SearchSpec['fields'] = [];
    const vectors: SearchSpec['vectors'] = [];
    for (const p of rowProps(t)) {
      if (p.search !== undefined && p.type.kind === 'string') fields.push({ prop: p.name, stem: p.search.stem });
      if (p.type.kind === 'vector') vectors.push({ prop: p.name, dims: p.type.dims, metric: p.index?.metric ?? 'cosine' });
    }
    s = { fields, vectors, hash: contentHash(canonicalJson({ format: SEGMENT_FORMAT, fields, vectors })).slice(0, 16) };
    specs.set(t, s);
  }
  return s;
}

/** Postings of one term in one field: the positions holding it (ascending) and its count at each. */
export interface Postings {
  positions: Int32Array;
  counts: Int32Array;
}

export interface FieldIndex {
  /** Terms of the field at each position (0 where the value is null, or the position is a tombstone). */
  lengths: Int32Array;
  postings: Map<string, Postings>;
}

export interface VectorIndex {
  dims: number;
  /** Position i's vector is `values[i * dims … (i + 1) * dims)`, when `present[i]` is 1. */
  values: Float32Array;
  present: Uint8Array;
  /** Each vector's length, for cosine distance (computed when built or read, never stored). */
  norms: Float64Array;
}

export interface SearchSegment {
  keys: readonly string[];
  tombs: readonly boolean[];
  /** One per field of the spec, in its order. */
  fields: FieldIndex[];
  /** One per vector property of the spec, in its order. */
  vectors: VectorIndex[];
  /** Bytes the segment holds in memory (its cache weight). */
  bytes: number;
}

const SEGMENT_FORMAT = 'branchgraph.search/1';

/** Index one run under a spec: its pieces (the run, or its segments in order), as one sequence of positions. */
export async function buildSegment(spec: SearchSpec, pieces: readonly RunData[]): Promise<SearchSegment> {
  // A run of many rows is indexed a slice at a time: tokenizing them all at once held the loop for seconds.
  const slice = new Slice();
  const keys = pieces.flatMap((d) => d.keys);
  const tombs = pieces.flatMap((d) => d.tombs);
  const views = pieces.map((d) => d.rowView());
  const starts = pieceStarts(pieces.map((d) => d.length));
  const n = keys.length;
  let piece = 0;
  const view = (i: number) => {
    while (i >= (starts[piece + 1] ?? Number.POSITIVE_INFINITY)) piece++;
    return (views[piece] as (i: number) => Record<string, unknown>)(i - (starts[piece] as number));
  };
  const fields: FieldIndex[] = spec.fields.map(() => ({ lengths: new Int32Array(n), postings: new Map() }));
  const lists = spec.fields.map(() => new Map<string, { positions: number[]; counts: number[] }>());
  const vectors = spec.vectors.map((v) => ({
    dims: v.dims,
    values: new Float32Array(n * v.dims),
    present: new Uint8Array(n),
  }));
  for (let i = 0; i < n; i++) {
    if ((i & 63) === 0 && slice.due()) await slice.turn();
    if (tombs[i]) continue;
    const row = view(i);
    spec.fields.forEach((f, fi) => {
      const text = row[f.prop];
      if (typeof text !== 'string') return;
      const terms = termsOf(text, f.stem);
      (fields[fi] as FieldIndex).lengths[i] = terms.length;
      const counts = new Map<string, number>();
      for (const t of terms) counts.set(t, (counts.get(t) ?? 0) + 1);
      const list = lists[fi] as Map<string, { positions: number[]; counts: number[] }>;
      for (const [t, c] of counts) {
        let p = list.get(t);
        if (p === undefined) {
          p = { positions: [], counts: [] };
          list.set(t, p);
        }
        p.positions.push(i);
        p.counts.push(c);
      }
    });
    spec.vectors.forEach((v, vi) => {
      const value = row[v.prop];
      if (!Array.isArray(value) || value.length !== v.dims) return;
      const ix = vectors[vi] as (typeof vectors)[number];
      ix.values.set(value as number[], i * v.dims);
      ix.present[i] = 1;
    });
  }
  lists.forEach((list, fi) => {
    const postings = (fields[fi] as FieldIndex).postings;
    for (const [t, p] of list) postings.set(t, { positions: Int32Array.from(p.positions), counts: Int32Array.from(p.counts) });
  });
  return withBytes({ keys, tombs, fields, vectors: vectors.map(withNorms) });
}

/** Where each piece starts among a run's positions (piece lengths in; one more entry than pieces, the last the total). */
export function pieceStarts(lengths: readonly number[]): number[] {
  const out = [0];
  for (const n of lengths) out.push((out.at(-1) as number) + n);
  return out;
}

/** The length of each of a matrix's `dims`-long vectors. */
export function vectorNorms(values: Float32Array, dims: number): Float64Array {
  const n = values.length / dims;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let sum = 0;
    for (let d = i * dims; d < (i + 1) * dims; d++) sum += (values[d] as number) * (values[d] as number);
    out[i] = Math.sqrt(sum);
  }
  return out;
}

function withNorms(v: Omit<VectorIndex, 'norms'>): VectorIndex {
  return { ...v, norms: vectorNorms(v.values, v.dims) };
}

function withBytes(s: Omit<SearchSegment, 'bytes'>): SearchSegment {
  let bytes = 0;
  for (const k of s.keys) bytes += 16 + k.length * 2;
  for (const f of s.fields) {
    bytes += f.lengths.byteLength;
    for (const [t, p] of f.postings) bytes += 48 + t.length * 2 + p.positions.byteLength + p.counts.byteLength;
  }
  for (const v of s.vectors) bytes += v.values.byteLength + v.present.byteLength + v.norms.byteLength;
  return { ...s, bytes };
}

/*
 * Stored form: a JSON header (format, keys, tombstones, and per field its terms in order) and,
 * after it, the binary arrays back to back (field lengths, then per term its positions and
 * counts, then per vector its presence and values), each at a 4-byte boundary so it is read in
 * place. A segment is derived data: a header that does not read back is rebuilt, never trusted.
 */

/** A segment's stored bytes. */
export function encodeSegment(s: SearchSegment): Uint8Array {
  const parts: Uint8Array[] = [];
  const header = {
    format: SEGMENT_FORMAT,
    keys: s.keys,
    tombs: s.tombs.map((t) => (t ? 1 : 0)),
    fields: s.fields.map((f) => [...f.postings].map(([t, p]) => [t, p.positions.length])),
    vectors: s.vectors.map((v) => v.dims),
  };
  const add = (a: ArrayBufferView): void => {
    parts.push(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
  };
  for (const f of s.fields) {
    add(f.lengths);
    for (const p of f.postings.values()) {
      add(p.positions);
      add(p.counts);
    }
  }
  for (const v of s.vectors) {
    add(padded(v.present));
    add(v.values);
  }
  const head = Buffer.from(JSON.stringify(header), 'utf8');
  const headLen = new Uint32Array([head.length]);
  return Buffer.concat([new Uint8Array(headLen.buffer), padded(head), ...parts]);
}

function padded(a: Uint8Array): Uint8Array {
  const rem = a.byteLength % 4;
  if (rem === 0) return a;
  const out = new Uint8Array(a.byteLength + 4 - rem);
  out.set(a);
  return out;
}

/** A segment read back from its stored bytes; undefined when they are not a segment of this format. */
export function decodeSegment(bytes: Uint8Array): SearchSegment | undefined {
  try {
    // Copied once to an aligned buffer, so every array is a view of it.
    const buf = new Uint8Array(bytes.byteLength);
    buf.set(bytes);
    const headLen = new DataView(buf.buffer).getUint32(0, true);
    const header = JSON.parse(Buffer.from(buf.buffer, 4, headLen).toString('utf8')) as {
      format: string;
      keys: string[];
      tombs: number[];
      fields: [string, number][][];
      vectors: number[];
    };
    if (header.format !== SEGMENT_FORMAT) return undefined;
    const n = header.keys.length;
    let at = 4 + headLen + ((4 - (headLen % 4)) % 4);
    const ints = (count: number): Int32Array => {
      const a = new Int32Array(buf.buffer, at, count);
      at += count * 4;
      return a;
    };
    const fields: FieldIndex[] = header.fields.map((terms) => {
      const lengths = ints(n);
      const postings = new Map<string, Postings>();
      for (const [t, count] of terms) postings.set(t, { positions: ints(count), counts: ints(count) });
      return { lengths, postings };
    });
    const vectors: VectorIndex[] = header.vectors.map((dims) => {
      const present = new Uint8Array(buf.buffer, at, n);
      at += n + ((4 - (n % 4)) % 4);
      const values = new Float32Array(buf.buffer, at, n * dims);
      at += n * dims * 4;
      return withNorms({ dims, values, present });
    });
    if (at !== buf.byteLength) return undefined;
    return withBytes({ keys: header.keys, tombs: header.tombs.map((t) => t === 1), fields, vectors });
  } catch {
    return undefined;
  }
}
