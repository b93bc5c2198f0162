/**
 * Rows as reads return them: an entity key with its properties, pages of them, and a diff of one table.
 */
import { z } from 'zod';

/** Row. */
export const RowZ = z
  .object({
    key: z.string(),
    row: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Row' });

/** RowPage. */
export const RowPageZ = z
  .object({
    items: z.array(RowZ),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'RowPage' });

/** TableDiff. */
export const TableDiffZ = z
  .object({
    table: z.string(),
    inserted: z.array(RowZ),
    deleted: z.array(RowZ),
    updated: z.array(
      z.object({
        key: z.string(),
        before: z.record(z.string(), z.unknown()),
        after: z.record(z.string(), z.unknown()),
        changed: z.array(z.string()),
      }),
    ),
  })
  .meta({ id: 'TableDiff' });
