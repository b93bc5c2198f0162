import { z } from 'zod';
import { QueriedRowZ } from '../../results/row.js';
import { defineOperation } from '../../operation.js';
import { refOrMain, tableName } from '../../inputs.js';
import { LIMITS } from '../../limits.js';
import { queryRows as runQuery, type QueryPage } from '../../../graph/row-query.js';
import { MAX_ORDER_TERMS } from '../../../model/row-filter.js';

/** An order: properties (or `_key`), each ascending or descending; the key breaks ties. */
export const OrderByZ = z
  .array(z.object({ prop: z.string().min(1).max(200), direction: z.enum(['asc', 'desc']).optional() }).strict())
  .max(MAX_ORDER_TERMS)
  .transform((terms) => terms.map((t) => ({ prop: t.prop, direction: t.direction ?? ('asc' as const) })));

/** What a typed page asks: a filter (model/row-filter.ts), an order, a page size, a cursor, and whether to count. */
export const PAGE_ASK = {
  where: z.record(z.string(), z.unknown()).optional(),
  orderBy: OrderByZ.optional(),
  first: z.number().int().min(0).max(LIMITS.maxPage).optional(),
  after: z.string().max(8200).optional(),
  count: z.boolean().optional(),
};

/** A page of a table's rows at a ref under a typed filter and any order, with an exact count when asked. */
export const queryRows = defineOperation({
  name: 'queryRows',
  summary: 'Rows of a table at a ref under a typed filter, in any order, a page at a time, with an exact count.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z.object({ table: tableName, at: refOrMain, ...PAGE_ASK }).strict(),
  async run(service, { table, at, ...ask }, ctx): Promise<QueryPage> {
    return service.readAt(at, ctx, async ({ tables, snap }) => {
      const value = await runQuery({ tables, snap, table, ask, signal: ctx.signal });
      return { value, rows: value.rowsRead };
    });
  },
  output: z.object({
    items: z.array(QueriedRowZ),
    hasNextPage: z.boolean(),
    totalCount: z.number().int().describe('Present when count was asked.').optional(),
    rowsRead: z.number().int().describe('Rows the plan read to answer.'),
  }),
  http: { method: 'POST', path: '/tables/{table}/query' },
});
