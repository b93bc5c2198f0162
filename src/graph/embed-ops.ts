/**
 * `@embed` vectors filled as a write lands: for every operation that sets a
 * vector's source text and does not give the vector itself, the embedder
 * turns the text into the vector (all texts of a batch in one call per
 * vector length). A source set to null clears its vector. An operation that
 * gives the vector explicitly keeps it. Operations on tables with nothing to
 * embed pass through untouched, and a batch without any costs one scan.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { localEmbedding } from '../model/local-embedder.js';
import { findType, type Schema, type TableType } from '../model/schema.js';
import type { Embedder } from './ports.js';

/** Texts embedded in one call. */
const EMBED_BATCH = 256;

type Embed = { prop: string; from: string; dims: number };
const NO_EMBEDS: readonly Embed[] = [];
const embedsByType = new WeakMap<TableType, readonly Embed[]>();

/** The vector properties of a table that are filled from another property (found once per type: a load asks per row). */
function embedsOf(t: TableType | undefined): readonly Embed[] {
  if (t === undefined) return NO_EMBEDS;
  let e = embedsByType.get(t);
  if (e === undefined) {
    e = t.props.flatMap((p) =>
      p.embed !== undefined && p.type.kind === 'vector' ? [{ prop: p.name, from: p.embed.from, dims: p.type.dims }] : [],
    );
    embedsByType.set(t, e);
  }
  return e;
}

/** What an operation of a write batch carries (write-batch.ts `WriteOp`). */
interface EmbeddableOp {
  op: string;
  table: string;
  values: Record<string, unknown>;
}

/** `ops` with every `@embed` vector they imply filled in (a new list; the input is not changed). */
export async function fillEmbeddings<T extends EmbeddableOp>(a: {
  schema: Schema;
  ops: readonly T[];
  embedder: Embedder;
  signal?: AbortSignal | undefined;
}): Promise<readonly T[]> {
  const { schema, ops, embedder, signal } = a;
  // Most schemas embed nothing: then a batch of a million operations is passed through as it is.
  if (!schema.types.some((t) => embedsOf(t).length > 0)) return ops;
  const wanted: { op: number; prop: string; text: string; dims: number }[] = [];
  const out = ops.slice();
  ops.forEach((o, i) => {
    if (o.op === 'delete' || o.values === null || typeof o.values !== 'object') return;
    for (const e of embedsOf(findType(schema, o.table))) {
      if (!Object.hasOwn(o.values, e.from) || Object.hasOwn(o.values, e.prop)) continue;
      const text = o.values[e.from];
      if (typeof text === 'string') wanted.push({ op: i, prop: e.prop, text, dims: e.dims });
      else if (text === null) out[i] = { ...(out[i] as T), values: { ...(out[i] as T).values, [e.prop]: null } };
    }
  });
  if (wanted.length === 0) return out;
  const byDims = new Map<number, typeof wanted>();
  for (const w of wanted) {
    const list = byDims.get(w.dims);
    if (list === undefined) byDims.set(w.dims, [w]);
    else list.push(w);
  }
  for (const [dims, list] of byDims) {
    for (let at = 0; at < list.length; at += EMBED_BATCH) {
      const batch = list.slice(at, at + EMBED_BATCH);
      const vectors = await embedWith({ embedder, texts: batch.map((w) => w.text), dims, signal });
      batch.forEach((w, j) => {
        const o = out[w.op] as T;
        out[w.op] = { ...o, values: { ...o.values, [w.prop]: vectors[j] } };
      });
    }
  }
  return out;
}

/** Vectors for `texts` from `embedder`, checked: one per text, each of `dims` values; anything else is `embedding_failed`. */
export async function embedWith(a: {
  embedder: Embedder;
  texts: readonly string[];
  dims: number;
  signal?: AbortSignal | undefined;
}): Promise<number[][]> {
  const { embedder, texts, dims, signal } = a;
  let vectors: number[][];
  try {
    vectors = await embedder.embed(texts, dims, signal);
  } catch (e) {
    if (isBranchgraphError(e) && (e.code === 'embedding_failed' || e.code === 'aborted')) throw e;
    throw new BranchgraphError('embedding_failed', `the ${embedder.name} embedder failed: ${(e as Error).message}`, {
      details: { embedder: embedder.name },
    });
  }
  if (vectors.length !== texts.length || vectors.some((v) => !Array.isArray(v) || v.length !== dims))
    throw new BranchgraphError(
      'embedding_failed',
      `the ${embedder.name} embedder did not answer ${texts.length} vectors of ${dims} values`,
      {
        details: { embedder: embedder.name },
      },
    );
  return vectors;
}

/** The embedder every graph has unless told otherwise: the local one (model/local-embedder.ts). */
export const LOCAL_EMBEDDER: Embedder = {
  name: 'local',
  embed: async (texts, dims) => texts.map((t) => localEmbedding(t, dims)),
};
