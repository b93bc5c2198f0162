/**
 * A managed token as clients see it: never its secret, which only the answer to its creation holds.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';

export const TokenZ = z
  .object({
    id: IdZ,
    name: z.string().describe('The identity its calls act as: commits record it as their actor, and it owns the branches it creates.'),
    role: z.enum(['read', 'write', 'admin']).meta({ title: 'Role' }),
    graphs: z.array(z.string()).nullable().describe('Graph name patterns it reaches (`default` is the root graph); null: every graph.'),
    read: z.array(z.string()).nullable().describe('Branch name patterns it reads (besides those it writes); null: every branch.'),
    write: z
      .array(z.string())
      .nullable()
      .describe('Branch name patterns it creates, changes, merges into and deletes; null: every branch.'),
    maxBranches: z.number().int().nullable().describe('The most live branches it may own at once; null: no limit.'),
    expiresAt: z.string().nullable(),
    createdAt: z.string(),
    createdBy: z.string(),
  })
  .meta({ id: 'Token' });
