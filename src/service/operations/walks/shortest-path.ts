import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { MAX_HOPS, shortestPath as walkShortest } from '../../../graph/graph-walk.js';
import { WalkPathZ } from '../../results/walk.js';
import { BETWEEN_ASK, pathsWithRows, walkAt } from './walk-scope.js';

/** The shortest path between two nodes (the first in walk order when several are as short), or null. */
export const shortestPath = defineOperation({
  name: 'shortestPath',
  summary: 'The shortest path from one node to another at a ref, within at most six hops, or null.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      ...BETWEEN_ASK,
      maxHops: z.number().int().min(1).max(MAX_HOPS).optional().describe(`Longest path looked for (default ${MAX_HOPS}).`),
    })
    .strict(),
  async run(service, { at, from, to, via, direction = 'out', maxHops = MAX_HOPS }, ctx) {
    return walkAt(service, ctx, {
      at,
      via,
      direction,
      walk: async (scope) => {
        const path = await walkShortest(scope, { from, to, maxHops });
        const [value] = path === null ? [null] : await pathsWithRows(scope, [path]);
        return { value: { path: value ?? null }, rows: path === null ? 0 : path.nodes.length + path.edges.length };
      },
    });
  },
  output: z.object({ path: WalkPathZ.nullable().describe('Null when no path of at most maxHops joins them.') }),
  http: { method: 'POST', path: '/walks/shortest-path' },
  graphql: [{ type: 'Query', field: 'shortestPath', pick: 'path' }],
  mcp: [
    {
      tool: 'shortest_path',
      description:
        'How two nodes are connected at a ref: the shortest path from one to the other (at most six hops), as its nodes and edges, or null. `via` limits the edge tables; `direction` is out (along edges, default), in or both.',
      idempotent: true,
    },
  ],
});
