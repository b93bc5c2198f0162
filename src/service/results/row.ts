/**
 * Rows as reads return them: an entity key with its properties, pages of them, and a diff of one table.
 */
import { z } from 'zod';

/** An entity: its key and its properties. */
export const RowZ = z
  .object({
    key: z.string(),
    row: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'Row' });

/** One page of rows and the cursor of the next. */
export const RowPageZ = z
  .object({
    items: z.array(RowZ),
    nextCursor: z.string().nullable(),
  })
  .meta({ id: 'RowPage' });

/** What changed in one table between two commits. */
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

/** A row of a query's page, with the cursor that continues after it. */
export const QueriedRowZ = z.object({ key: z.string(), row: z.record(z.string(), z.unknown()), cursor: z.string() });
