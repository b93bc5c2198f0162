/**
 * A branch as clients see it: its head commit, where it came from, and its protection rule.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';
import { CommitZ } from './commit.js';

/** A branch as clients see it: its head commit, when it was created, where it forked from, and its protection rule. */
export const BranchZ = z
  .object({
    name: z.string(),
    head: CommitZ,
    createdAt: z.string(),
    forkedFrom: IdZ.nullable(),
    protection: z
      .object({
        requiredApprovals: z.number().int().min(0).max(100),
        allowAdminBypass: z.boolean(),
        staleApprovals: z.enum(['result_change', 'head_move']),
        requiredChecks: z.array(z.string()),
        setBy: z.string(),
        time: z.string(),
      })
      .nullable()
      .describe("The branch's protection rule, who set it and when; null when it has none."),
    expiresAt: z
      .string()
      .nullable()
      .describe(
        'When the maintenance sweep deletes the branch (unless it is protected, or the source of an open merge request); null when it lives until deleted.',
      ),
    owner: z.string().nullable().describe('Who the branch is for; null when nobody was named.'),
    labels: z.array(z.string()).describe('Labels listings filter by (`task`, `task=1234`).'),
  })
  .meta({ id: 'Branch' });
