/**
 * What a search answers: hits in rank order, each an entity with how it
 * ranked and where its text matched.
 */
import { z } from 'zod';

export const HighlightZ = z
  .object({
    property: z.string().describe('The @search property that matched.'),
    fragment: z.string().describe('Up to 200 characters of its value around the first match.'),
    matches: z
      .array(z.tuple([z.number().int(), z.number().int()]))
      .describe('Each matched word as [start, end) offsets into the fragment (UTF-16 units).'),
  })
  .meta({ id: 'Highlight' });

export const SearchHitZ = z
  .object({
    key: z.string(),
    row: z.record(z.string(), z.unknown()),
    score: z
      .number()
      .describe(
        'Higher is better: the BM25 score for text alone, the negated distance for near alone, the reciprocal-rank-fusion score for both.',
      ),
    bm25: z.number().nullable().describe('The BM25 score, when the hit matched the text.'),
    distance: z.number().nullable().describe("The distance from `near` under the vector's metric, when the hit was among the k nearest."),
    highlights: z.array(HighlightZ),
  })
  .meta({ id: 'SearchHit' });

export const SearchResultZ = z.object({
  hits: z.array(SearchHitZ),
  rowsRead: z.number().int().describe('Live rows of the table the ranking passed.'),
});
