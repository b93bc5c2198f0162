import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { refOrMain, tableName } from '../../inputs.js';
import { MAX_SEARCH_HITS, MAX_SEARCH_TEXT, searchTable, type SearchHit } from '../../../graph/table-search.js';
import { MAX_VECTOR_DIMS } from '../../../model/schema.js';
import { SearchResultZ } from '../../results/search.js';

/** What a search asks, on every transport: text, a vector (or text to embed) to be near, a filter and a page size. */
export const SearchAskZ = {
  text: z.string().max(MAX_SEARCH_TEXT).optional().describe('Full-text query over the @search properties (BM25).'),
  near: z
    .object({
      vector: z.array(z.number()).max(MAX_VECTOR_DIMS).optional().describe('The vector to be near.'),
      text: z.string().max(MAX_SEARCH_TEXT).optional().describe('Text the configured embedder turns into the vector.'),
      property: z.string().max(200).optional().describe('The vector property (the table’s only one by default).'),
      k: z.number().int().min(1).max(MAX_SEARCH_HITS).optional().describe('Nearest neighbours taken (default: first).'),
    })
    .strict()
    .optional(),
  where: z.record(z.string(), z.unknown()).optional().describe('A typed filter, as queryRows takes; applied before the top-k.'),
  first: z.number().int().min(1).max(MAX_SEARCH_HITS).optional().describe('Hits returned (default 10).'),
};

/**
 * Full-text, vector or hybrid search over one table at any ref: exact for the rows at that ref,
 * through merges, cherry-picks, reverts and resets alike (graph/table-search.ts).
 */
export const search = defineOperation({
  name: 'search',
  summary: 'Search a table at a ref: full text (BM25), nearest vectors, or both fused, under a typed filter.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z.object({ table: tableName, at: refOrMain, ...SearchAskZ }).strict(),
  async run(service, { table, at, ...ask }, ctx): Promise<{ hits: SearchHit[]; rowsRead: number }> {
    return service.readAt(at, ctx, async ({ tables, snap }) => {
      const value = await searchTable({ tables, snap, table, ask, embedder: service.graph.ports.embedder, signal: ctx.signal });
      return { value, rows: value.rowsRead };
    });
  },
  output: SearchResultZ,
  http: { method: 'POST', path: '/tables/{table}/search' },
  graphql: [{ type: 'Query', field: 'search' }],
  mcp: [
    {
      tool: 'search',
      description:
        'Find entities of one table at a ref (a branch, tag or commit): `text` ranks by full-text relevance (BM25) over its @search properties, `near` by distance to a vector or to a text the server embeds, both together by fused rank. `where` filters first, with the same filter read_rows takes. Use `schema` first for the table and its @search and vector properties. Returns hits best first, each with its row, score and the matched fragments.',
      idempotent: true,
    },
  ],
});
