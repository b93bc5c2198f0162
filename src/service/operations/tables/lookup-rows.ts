import { z } from 'zod';
import { BranchgraphError } from '../../../model/errors.js';
import { defineOperation } from '../../operation.js';
import { entityKey, refOrMain, tableName } from '../../inputs.js';
import { lookupMany, MAX_BATCH_KEYS } from '../../../graph/row-query.js';
import type { Value } from '../../../model/values.js';
import type { RowItem } from './rows.js';

/** Many entities in one batch, by key or by a `@unique` property's values: one item per asked key or value, null where none. */
export const lookupRows = defineOperation({
  name: 'lookupRows',
  summary: 'Many entities at a ref in one batch, by key or by the values of a @unique property.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      table: tableName,
      at: refOrMain,
      keys: z.array(entityKey).max(MAX_BATCH_KEYS).optional(),
      unique: z
        .object({ prop: z.string().min(1).max(200), values: z.array(z.unknown()).max(MAX_BATCH_KEYS) })
        .strict()
        .optional(),
    })
    .strict(),
  async run(service, { table, at, keys, unique }, ctx): Promise<{ items: (RowItem | null)[] }> {
    if ((keys === undefined) === (unique === undefined))
      throw new BranchgraphError('invalid_input', 'give keys or unique, not both', {
        issues: [{ path: 'keys', message: 'keys or unique' }],
      });
    const by = keys !== undefined ? { keys } : { unique: unique as { prop: string; values: Value[] } };
    const items = await service.readAt(at, ctx, async ({ tables, snap }) => {
      const value = await lookupMany({ tables, snap, table, ...by, signal: ctx.signal });
      return { value, rows: value.filter((x) => x !== null).length };
    });
    return { items };
  },
  output: z.object({
    items: z.array(
      z
        .object({
          key: z.string(),
          row: z.record(z.string(), z.unknown()),
        })
        .nullable(),
    ),
  }),
  http: { method: 'POST', path: '/tables/{table}/lookup' },
});
