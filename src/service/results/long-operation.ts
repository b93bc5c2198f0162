/**
 * A long operation (a merge, a load, a fetch, a push) and its progress.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';

/** A long operation (a merge, a load, a fetch, a push) and its progress: rows walked of rows planned, or for a sync objects. */
export const OperationZ = z
  .object({
    id: IdZ,
    kind: z.enum(['merge', 'load', 'fetch', 'push']),
    branch: z.string().describe("The branch it changes (a merge's target, a push's branch; a fetch's remote)."),
    source: z.string().nullable().describe("A merge's source branch or commit; a sync's remote URL."),
    startedAt: z.string(),
    state: z.enum(['running', 'succeeded', 'failed']),
    rowsPlanned: z
      .number()
      .int()
      .describe(
        'Rows this attempt (or phase) plans to walk; a merge that plans again after a lost race starts over. A fetch or push (phase `objects`) counts objects instead.',
      ),
    rowsDone: z.number().int(),
    phase: z
      .string()
      .nullable()
      .describe('What the rows are going through now (a load: parse, validate or write; a sync: objects); null for a merge.'),
  })
  .meta({ id: 'Operation', description: 'A long operation (a merge, a load, a fetch, a push) and its progress.' });
