import { z } from 'zod';
import { QueriedRowZ } from '../../results/row.js';
import { defineOperation } from '../../operation.js';
import { entityKey, refOrMain, tableName } from '../../inputs.js';
import { MAX_BATCH_KEYS, neighborsOf, type NodeEdges } from '../../../graph/row-query.js';
import { PAGE_ASK } from './query-rows.js';

/**
 * The edges of one edge table leaving or reaching each of many nodes, in one batch, filtered
 * (edge properties, and `_from` / `_to` for the endpoint nodes), ordered and paged per node.
 */
export const neighbors = defineOperation({
  name: 'neighbors',
  summary: 'Edges of an edge table leaving or reaching each of many nodes, in one batch, filtered, ordered and paged per node.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      table: tableName,
      at: refOrMain,
      direction: z.enum(['out', 'in']),
      keys: z.array(entityKey).min(1).max(MAX_BATCH_KEYS),
      ...PAGE_ASK,
    })
    .strict(),
  async run(service, { table, at, direction, keys, ...ask }, ctx): Promise<{ items: NodeEdges[] }> {
    const items = await service.readAt(at, ctx, async ({ tables, snap }) => {
      const r = await neighborsOf({ tables, snap, edgeTable: table, direction, keys, ask, signal: ctx.signal });
      return { value: r.nodes, rows: r.rowsRead };
    });
    return { items };
  },
  output: z.object({
    items: z.array(
      z.object({
        node: z.string(),
        items: z.array(QueriedRowZ),
        hasNextPage: z.boolean(),
        totalCount: z.number().int().optional(),
      }),
    ),
  }),
  http: { method: 'POST', path: '/tables/{table}/neighbors' },
});
