import { z } from 'zod';
import { BranchgraphError } from '../../../model/errors.js';
import { defineOperation } from '../../operation.js';
import { entityKey, refOrMain, tableName } from '../../inputs.js';
import { getRow as readRow } from '../../../graph/reads.js';
import type { RowItem } from './rows.js';
import { RowZ } from '../../results/row.js';

/** One entity by key at a ref (edge keys are JSON arrays such as ["a","b"]); not_found when it does not exist. */
export const getRow = defineOperation({
  name: 'getRow',
  summary: 'One entity by key at a ref.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z.object({ table: tableName, key: entityKey, at: refOrMain }).strict(),
  async run(service, { table, key, at }, ctx): Promise<RowItem> {
    const snap = await service.snapshot(at, ctx);
    const row = await readRow({ tables: service.graph.ports.tables, snap, table, key, signal: ctx.signal });
    if (row === null) throw new BranchgraphError('not_found', `${table} ${key} does not exist`, { details: { table, key } });
    return { key, row };
  },
  output: RowZ,
  http: { method: 'GET', path: '/tables/{table}/rows/{key}' },
  graphql: [{ type: 'Query', field: 'row', pick: 'row' }],
  mcp: [
    {
      tool: 'get_row',
      description:
        "One entity by its key at a ref (main by default): its properties. An edge's key is the JSON array of its ends' keys. not_found when it does not exist.",
      idempotent: true,
    },
  ],
});
