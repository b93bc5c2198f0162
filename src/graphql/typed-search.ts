/**
 * The typed search field of a table with `@search` or vector properties:
 * `searchT(text, near, where, first, at)`, answering hits best first, each
 * `{ score, bm25, distance, highlights, node }`. It runs the `search`
 * operation, with `where` in the table's typed filter (converted to the
 * engine's as a connection's is).
 */
import {
  GraphQLFloat,
  GraphQLInputObjectType,
  GraphQLInt,
  GraphQLList,
  GraphQLNonNull,
  GraphQLObjectType,
  GraphQLString,
  type GraphQLFieldConfig,
} from 'graphql';
import { searchable, type TableType } from '../model/schema.js';
import type { Row } from '../model/values.js';
import { guarded, type ResolverCall, type TypedContext, type TypedSchema } from './typed-context.js';
import { engineWhere, givenArgs, VectorType } from './typed-inputs.js';
import type { TableNames } from './typed-names.js';

const list = <T extends GraphQLObjectType | GraphQLInputObjectType | typeof GraphQLInt>(t: T) =>
  new GraphQLNonNull(new GraphQLList(new GraphQLNonNull(t)));

/** The input and output types every search field shares. */
export function searchTypes(): { near: GraphQLInputObjectType; highlight: GraphQLObjectType } {
  const near = new GraphQLInputObjectType({
    name: 'Near',
    description: 'What a vector search is near: a vector, or a text the server embeds; of one vector property (the only one by default).',
    fields: {
      vector: { type: VectorType },
      text: { type: GraphQLString },
      property: { type: GraphQLString },
      k: { type: GraphQLInt, description: 'Nearest neighbours taken before fusion (default: first).' },
    },
  });
  const highlight = new GraphQLObjectType({
    name: 'Highlight',
    description: 'Where a hit matched the text: a fragment of one @search property and the matched words as [start, end) offsets into it.',
    fields: {
      property: { type: new GraphQLNonNull(GraphQLString) },
      fragment: { type: new GraphQLNonNull(GraphQLString) },
      matches: { type: new GraphQLNonNull(new GraphQLList(list(GraphQLInt))) },
    },
  });
  return { near, highlight };
}

interface HitValue {
  score: number;
  bm25: number | null;
  distance: number | null;
  highlights: unknown[];
  node: { table: string; key: string; row: Row; at: string; level: number };
}

interface SearchArgs {
  text?: string | null;
  near?: { vector?: number[] | null; text?: string | null; property?: string | null; k?: number | null } | null;
  where?: unknown;
  first?: number | null;
  at?: string | null;
}

/** The search field of a table, or undefined when it has nothing to search. */
export function searchField(
  c: { t: TableType; n: TableNames; ts: TypedSchema; node: GraphQLObjectType; where: GraphQLInputObjectType },
  shared: ReturnType<typeof searchTypes>,
): { name: string; field: GraphQLFieldConfig<unknown, TypedContext> } | undefined {
  const { t, n, ts } = c;
  if (!searchable(t)) return undefined;
  const hit = new GraphQLObjectType<HitValue>({
    name: n.searchHit,
    fields: {
      score: {
        type: new GraphQLNonNull(GraphQLFloat),
        description: 'Higher is better: BM25 for text, the negated distance for near, the fused rank for both.',
      },
      bm25: { type: GraphQLFloat },
      distance: { type: GraphQLFloat },
      highlights: { type: list(shared.highlight) },
      node: { type: new GraphQLNonNull(c.node) },
    },
  });
  const field: GraphQLFieldConfig<unknown, TypedContext> = {
    type: list(hit),
    description: `${t.name} entities by full-text relevance (text), by distance (near), or both fused; where filters before the top-k.`,
    args: {
      text: { type: GraphQLString },
      near: { type: shared.near },
      where: { type: c.where },
      first: { type: GraphQLInt, description: 'Hits returned, 1 to 1000 (default 10).' },
      at: { type: GraphQLString, description: 'The ref to search: a branch, commit:<id> or tag:<name> (default: this branch).' },
    },
    resolve: guarded('read', async ({ args, ctx }: ResolverCall<unknown, SearchArgs>) => {
      const at = args.at ?? ctx.branch;
      const near = args.near === null || args.near === undefined ? undefined : givenArgs(args.near);
      const where = args.where === undefined || args.where === null ? undefined : engineWhere(args.where, t.name, ts.fieldMaps);
      const r = await ctx.reads.search({ table: t.name, at, ask: givenArgs({ text: args.text, near, where, first: args.first }) });
      return r.hits.map((h) => ({ ...h, node: { table: t.name, key: h.key, row: h.row, at, level: 1 } }));
    }),
  };
  return { name: n.search, field };
}
