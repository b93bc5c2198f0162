import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { allPaths, MAX_HOPS } from '../../../graph/graph-walk.js';
import { WalkPathZ } from '../../results/walk.js';
import { BETWEEN_ASK, pathsWithRows, walkAt } from './walk-scope.js';

/** Every simple path between two nodes up to a length, shortest first. */
export const paths = defineOperation({
  name: 'paths',
  summary: 'Every simple path from one node to another at a ref, up to six hops, shortest first.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      ...BETWEEN_ASK,
      maxHops: z.number().int().min(1).max(MAX_HOPS).optional().describe('Longest path listed (default 3).'),
      first: z.number().int().min(1).max(1000).optional().describe('Most paths listed (default 10).'),
    })
    .strict(),
  async run(service, { at, from, to, via, direction = 'out', maxHops = 3, first = 10 }, ctx) {
    return walkAt(service, ctx, {
      at,
      via,
      direction,
      walk: async (scope) => {
        const r = await allPaths(scope, { from, to, maxHops, first });
        return {
          value: { paths: await pathsWithRows(scope, r.paths), hasMore: r.hasMore },
          rows: r.paths.reduce((n, p) => n + p.edges.length, 0),
        };
      },
    });
  },
  output: z.object({ paths: z.array(WalkPathZ), hasMore: z.boolean() }),
  http: { method: 'POST', path: '/walks/paths' },
  graphql: [{ type: 'Query', field: 'paths' }],
});
