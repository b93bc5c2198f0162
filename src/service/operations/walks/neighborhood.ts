import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { refOrMain } from '../../inputs.js';
import { MAX_HOPS, neighborhood as walkNeighborhood } from '../../../graph/graph-walk.js';
import { DirectionZ, NodeRefZ, WalkEdgeZ, WalkNodeZ } from '../../results/walk.js';
import { ViaZ, walkAt, withRows } from './walk-scope.js';

/** Most nodes one neighbourhood answers. */
export const MAX_NEIGHBORHOOD_NODES = 10_000;

/** The nodes within some hops of one node, each at its least depth, and the edges between them the walk took. */
export const neighborhood = defineOperation({
  name: 'neighborhood',
  summary: 'The nodes within some hops of a node at a ref, and the edges the walk took, a level at a time.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      at: refOrMain,
      from: NodeRefZ,
      hops: z.number().int().min(1).max(MAX_HOPS).optional().describe('How far to walk (default 1).'),
      via: ViaZ,
      direction: DirectionZ.optional().describe('Along edges (out), against them (in) or both (default).'),
      first: z
        .number()
        .int()
        .min(1)
        .max(MAX_NEIGHBORHOOD_NODES)
        .optional()
        .describe('Most nodes answered, the start included (default 100).'),
    })
    .strict(),
  async run(service, { at, from, hops = 1, via, direction = 'both', first = 100 }, ctx) {
    return walkAt(service, ctx, {
      at,
      via,
      direction,
      walk: async (scope) => {
        const r = await walkNeighborhood(scope, { from, hops, first });
        return {
          value: { nodes: await withRows(scope, r.nodes), edges: r.edges, truncated: r.truncated },
          rows: r.nodes.length + r.edges.length,
        };
      },
    });
  },
  output: z.object({
    nodes: z.array(WalkNodeZ.extend({ depth: z.number().int() })),
    edges: z.array(WalkEdgeZ),
    truncated: z.boolean().describe('The walk reached more nodes than first: those past it are left out.'),
  }),
  http: { method: 'POST', path: '/walks/neighborhood' },
  graphql: [{ type: 'Query', field: 'neighborhood' }],
  mcp: [
    {
      tool: 'neighborhood',
      description:
        'The nodes within `hops` (1 to 6) of one node at a ref, each with its depth and row, and the edges the walk took. `via` limits the edge tables, `direction` walks along edges (out), against them (in) or both. Use it to see what an entity is connected to.',
      idempotent: true,
    },
  ],
});
