import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { refOrMain, tableName } from '../../inputs.js';
import { aggregateTable, MAX_GROUP_BY } from '../../../graph/table-aggregate.js';
import { AggregateResultZ } from '../../results/aggregate.js';

/** Counts and numbers of a table at a ref under a typed filter, optionally per group of property values. */
export const aggregate = defineOperation({
  name: 'aggregate',
  summary: 'Count a table at a ref under a typed filter, with min, max, sum and mean per numeric property, optionally per group.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      table: tableName,
      at: refOrMain,
      where: z.record(z.string(), z.unknown()).optional().describe('A typed filter, as queryRows takes.'),
      groupBy: z.array(z.string().min(1).max(200)).max(MAX_GROUP_BY).optional().describe('Properties whose values form groups.'),
      numbers: z.boolean().optional().describe('false: counts only (a whole table may then be counted from run statistics).'),
    })
    .strict(),
  async run(service, { table, at, ...ask }, ctx) {
    return service.readAt(at, ctx, async ({ tables, snap }) => {
      const value = await aggregateTable({ tables, snap, table, ask, signal: ctx.signal });
      return { value, rows: value.rowsRead };
    });
  },
  output: AggregateResultZ,
  http: { method: 'POST', path: '/tables/{table}/aggregate' },
  graphql: [{ type: 'Query', field: 'aggregate' }],
  mcp: [
    {
      tool: 'aggregate',
      description:
        'Count the entities of one table at a ref that a `where` filter admits, with count, min, max, sum and avg of each numeric property; `groupBy` (up to 4 properties) answers the same per group of values. Use it instead of reading every row to count or total.',
      idempotent: true,
    },
  ],
});
