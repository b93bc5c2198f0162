/**
 * Search over a table at a snapshot: full text (BM25), nearest vectors, or
 * both fused, under a typed filter applied before the top-k is taken. The
 * ranking is search-rank.ts over the version's segments
 * (search-segments.ts); here the ask is checked against the table, the
 * filter is compiled and evaluated on the rows of each candidate position,
 * and the hits' rows and highlights are read.
 */
import { BranchgraphError } from '../model/errors.js';
import { compileRowFilter } from '../model/row-filter.js';

import { checkValue, type Row } from '../model/values.js';
import type { RunData, RunRef } from '../table/run.js';
import { firstIndex } from '../table/merge-walk.js';
import { highlightsOf, queryTerms, rank, type Highlight } from '../table/search-rank.js';
import { searchSpecOf } from '../table/search-segment.js';
import type { Snapshot } from './snapshot.js';
import type { Embedder, TableReader } from './ports.js';
import { embedWith } from './embed-ops.js';

/** Most hits one search returns. */
export const MAX_SEARCH_HITS = 1000;
/** Longest query text. */
export const MAX_SEARCH_TEXT = 4096;

export interface SearchAsk {
  text?: string | undefined;
  /**
   * What to be near: a vector, or a text the embedder turns into one; of the table's vector
   * property `property` (its only one when absent); `k` candidates (default `first`).
   */
  near?:
    | { vector?: readonly number[] | undefined; text?: string | undefined; property?: string | undefined; k?: number | undefined }
    | undefined;
  where?: unknown;
  first?: number | undefined;
}

export interface SearchHit {
  key: string;
  row: Row;
  score: number;
  bm25: number | null;
  distance: number | null;
  highlights: Highlight[];
}

const bad = (path: string, message: string): BranchgraphError =>
  new BranchgraphError('invalid_input', `search: ${path}: ${message}`, { issues: [{ path, message }] });

/** The vector property a `near` names (the table's only one when it names none), checked. */
function nearProperty(spec: ReturnType<typeof searchSpecOf>, near: NonNullable<SearchAsk['near']>, table: string): number {
  if (spec.vectors.length === 0) throw bad('near', `${table} has no vector property`);
  if (near.property === undefined) {
    if (spec.vectors.length > 1) throw bad('near.property', `${table} has ${spec.vectors.length} vector properties: name one`);
    return 0;
  }
  const i = spec.vectors.findIndex((v) => v.prop === near.property);
  if (i < 0) throw bad('near.property', `${near.property} is not a vector property of ${table}`);
  return i;
}

/** A `near` checked against the table: the property's index, the vector (embedded from text when given text) and k. */
async function nearVector(a: {
  spec: ReturnType<typeof searchSpecOf>;
  near: NonNullable<SearchAsk['near']>;
  first: number;
  search: { table: string; embedder?: Embedder | undefined; signal?: AbortSignal | undefined };
}): Promise<{ vector: number[]; property: number; k: number }> {
  const { spec, near, search: s } = a;
  const property = nearProperty(spec, near, s.table);
  const v = spec.vectors[property] as (typeof spec.vectors)[number];
  const { text } = near;
  if ((near.vector === undefined) === (text === undefined)) throw bad('near', 'give near.vector or near.text');
  if (text !== undefined && text.length > MAX_SEARCH_TEXT) throw bad('near.text', `at most ${MAX_SEARCH_TEXT} characters`);
  if (text !== undefined && s.embedder === undefined) throw bad('near.text', 'no embedder is configured');
  const vector =
    text === undefined
      ? near.vector
      : (await embedWith({ embedder: s.embedder as Embedder, texts: [text], dims: v.dims, signal: s.signal }))[0];
  const checked = checkValue(
    { name: 'near.vector', type: { kind: 'vector', dims: v.dims }, optional: false, unique: false, range: null },
    vector,
  );
  if ('error' in checked) throw bad('near.vector', checked.error.replace('near.vector ', ''));
  const k = near.k ?? a.first;
  if (!Number.isInteger(k) || k < 1 || k > MAX_SEARCH_HITS) throw bad('near.k', `an integer from 1 to ${MAX_SEARCH_HITS}`);
  return { vector: checked.value as number[], property, k };
}

/** Search `table` at `snap`; the hits best first, and how many live rows the ranking passed. */
export async function searchTable(s: {
  tables: TableReader;
  snap: Snapshot;
  table: string;
  ask: SearchAsk;
  /** Turns `near.text` into a vector. */
  embedder?: Embedder | undefined;
  signal?: AbortSignal | undefined;
}): Promise<{ hits: SearchHit[]; rowsRead: number }> {
  const { ask } = s;
  const view = s.tables.table(s.snap, s.table, s.signal);
  const spec = searchSpecOf(view.type);
  const first = ask.first ?? 10;
  if (!Number.isInteger(first) || first < 1 || first > MAX_SEARCH_HITS) throw bad('first', `an integer from 1 to ${MAX_SEARCH_HITS}`);
  if (ask.text === undefined && ask.near === undefined) throw bad('text', 'give text, near, or both');
  if (ask.text !== undefined) {
    if (spec.fields.length === 0) throw bad('text', `${s.table} has no @search property`);
    if (ask.text.length > MAX_SEARCH_TEXT) throw bad('text', `at most ${MAX_SEARCH_TEXT} characters`);
  }
  const near = ask.near === undefined ? undefined : await nearVector({ spec, near: ask.near, first, search: s });
  const filter = compileRowFilter({ schema: s.snap.schema, type: view.type, where: ask.where });
  if (filter.ends.from || filter.ends.to) throw bad('where', "a search filters on the row's own properties, not on its endpoints");
  if (view.search === undefined) throw new BranchgraphError('internal', 'this reader keeps no search segments');
  const { runs, index } = await view.search();
  // Rows are read only for what needs them: the filter's candidates and the hits.
  const data = new Map<RunRef, Promise<RunData>>();
  const dataOf = (p: RunRef): Promise<RunData> => {
    const held = data.get(p);
    if (held !== undefined) return held;
    const d = view.load(p);
    data.set(p, d);
    return d;
  };
  /** The piece of run `segment` that holds `position`, and the position within it. */
  const pieceAt = (segment: number, position: number): { piece: RunRef; at: number } => {
    const r = runs[segment] as (typeof runs)[number];
    // The last piece starting at or before `position`.
    const i = firstIndex(r.pieces.length, (n) => (r.starts[n + 1] as number) > position);
    return { piece: r.pieces[i] as RunRef, at: position - (r.starts[i] as number) };
  };
  let admit: ((segment: number, position: number) => boolean) | undefined;
  if (filter.node !== null) {
    const views = new Map<RunRef, (i: number) => Row>();
    await Promise.all(runs.flatMap((r) => r.pieces.map(async (p) => views.set(p, (await dataOf(p)).rowView()))));
    admit = (segment, position) => {
      const { piece, at } = pieceAt(segment, position);
      return filter.test({ key: index.segments[segment]?.keys[position] as string, row: (views.get(piece) as (i: number) => Row)(at) });
    };
  }
  const ranked = await rank(spec, index, { text: ask.text, near, admit, first });
  const terms = ask.text === undefined ? undefined : queryTerms(spec, ask.text);
  const hits = await Promise.all(
    ranked.map(async (h) => {
      const { piece, at } = pieceAt(h.segment, h.position);
      const row = (await dataOf(piece)).propsAt(at);
      const highlights = terms === undefined ? [] : highlightsOf(spec, row, terms);
      return { key: h.key, row, score: h.score, bm25: h.bm25, distance: h.distance, highlights };
    }),
  );
  return { hits, rowsRead: index.liveRows };
}
