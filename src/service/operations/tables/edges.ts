import { z } from 'zod';
import { BranchgraphError } from '../../../model/errors.js';
import { defineOperation } from '../../operation.js';
import { DirectionZ, entityKey, refOrMain, tableName } from '../../inputs.js';
import { edgesOf, getRow } from '../../../graph/reads.js';
import type { Row } from '../../../model/values.js';

/** A node's edges at a ref, out, in (by the incoming-edge index) or both, optionally of one edge table. */
export const edges = defineOperation({
  name: 'edges',
  summary: "A node's edges at a ref: out, in or both, optionally of one edge table.",
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({ table: tableName, key: entityKey, at: refOrMain, direction: DirectionZ.optional(), edgeTable: tableName.optional() })
    .strict(),
  async run(service, { table, key, at, direction, edgeTable }, ctx): Promise<{ edges: { table: string; key: string; row: Row }[] }> {
    // One snapshot for both the existence check and the edges: resolving the ref twice costs a second head lookup.
    const snap = await service.snapshot(at, ctx);
    const tables = service.graph.ports.tables;
    if ((await getRow({ tables, snap, table, key, signal: ctx.signal })) === null) {
      throw new BranchgraphError('not_found', `${table} ${key} does not exist`, { details: { table, key } });
    }
    const which = { ...(direction !== undefined ? { direction } : {}), ...(edgeTable !== undefined ? { edgeTable } : {}) };
    return { edges: await edgesOf({ tables, snap, nodeTable: table, key, ...which, signal: ctx.signal }) };
  },
  output: z.object({
    edges: z.array(
      z
        .object({
          table: z.string(),
          key: z.string(),
          row: z.record(z.string(), z.unknown()),
        })
        .meta({ title: 'EdgeRow' }),
    ),
  }),
  http: { method: 'GET', path: '/tables/{table}/rows/{key}/edges' },
  graphql: [{ type: 'Query', field: 'edges', pick: 'edges' }],
});
