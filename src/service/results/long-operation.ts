/**
 * A long operation (a merge, a load) and its progress.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';

/** A long operation (a merge, a load) and its progress, rows walked of rows planned. */
export const OperationZ = z
  .object({
    id: IdZ,
    kind: z.enum(['merge', 'load']),
    branch: z.string().describe("The branch it changes (a merge's target)."),
    source: z.string().nullable().describe("A merge's source branch or commit."),
    startedAt: z.string(),
    state: z.enum(['running', 'succeeded', 'failed']),
    rowsPlanned: z
      .number()
      .int()
      .describe('Rows this attempt (or phase) plans to walk; a merge that plans again after a lost race starts over.'),
    rowsDone: z.number().int(),
    phase: z.string().nullable().describe('What the rows are going through now (a load: parse, validate or write); null for a merge.'),
  })
  .meta({ id: 'Operation', description: 'A long operation (a merge, a load) and its progress, rows walked of rows planned.' });
