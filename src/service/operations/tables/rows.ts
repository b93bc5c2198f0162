import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { refOrMain, tableName } from '../../inputs.js';
import { LIMITS } from '../../limits.js';
import { scanRows, type Filter, type Page } from '../../../graph/reads.js';
import type { Row } from '../../../model/values.js';
import { RowPageZ } from '../../results/row.js';

/** A row with its entity key. */
export type RowItem = { key: string; row: Record<string, unknown> };

/** A table's rows in key order at a ref, filtered and paged; a cursor belongs to its table and filter. */
export const rows = defineOperation({
  name: 'rows',
  summary: 'Rows of a table in key order at a ref, filtered, a page at a time.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      table: tableName,
      at: refOrMain,
      /** The typed filter grammar (as typed GraphQL's `where`), or the older shorthands (graph/reads.ts). */
      where: z.record(z.string(), z.unknown()).optional(),
      limit: z.number().int().min(1).max(LIMITS.maxPage).optional(),
      cursor: z.string().max(4096).optional(),
    })
    .strict(),
  async run(service, { table, at, where, limit, cursor }, ctx): Promise<Page<RowItem>> {
    const snap = await service.snapshot(at, ctx);
    const page = {
      ...(where !== undefined ? { where: where as Filter } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(cursor !== undefined ? { cursor } : {}),
    };
    return scanRows({ tables: service.graph.ports.tables, snap, table, ...page, at, signal: ctx.signal }) as Promise<
      Page<{ key: string; row: Row }>
    >;
  },
  output: RowPageZ,
  http: { method: 'GET', path: '/tables/{table}/rows' },
  graphql: [{ type: 'Query', field: 'rows' }],
  mcp: [
    {
      tool: 'read_rows',
      description:
        'Rows of one table at a ref (main by default), in key order, a page at a time: pass `nextCursor` back as `cursor` for the next page. `where` filters by property values. Returns `items` ({ key, row }) and `nextCursor` (null on the last page). Use `schema` first for the table and property names.',
      idempotent: true,
    },
  ],
});
