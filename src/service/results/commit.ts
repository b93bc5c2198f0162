/**
 * Commits as clients see them: who made each, for whom, of what kind, and what a merge resolved.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';
import { COMMIT_KINDS, ResolvedZ } from '../../graph/manifest.js';

/** The resolutions a merge applied, its strategy and how many; `items` holds the first thousand, named choices first. */
export const ResolvedConflictsZ = ResolvedZ.meta({
  id: 'ResolvedConflicts',
  description: 'The resolutions a merge applied, its strategy and how many; `items` holds the first thousand, named choices first.',
});

/** A commit as clients see it; `parents` are commit ids, the first the branch's previous head. */
export const CommitZ = z
  .object({
    id: IdZ,
    parents: z.array(IdZ),
    branch: z.string(),
    actor: z.string().describe("Who made the commit: the bearer token's identity, or the server's actor when no tokens are configured."),
    author: z.string().describe('Who the client said the commit was for (author in the request); the actor when it said nothing.'),
    message: z.string(),
    time: z.string(),
    kind: z.enum(COMMIT_KINDS),
    resolved: ResolvedConflictsZ.optional(),
    request: IdZ.describe('The merge request this merge landed.').optional(),
    bypass: z.literal(true).describe('An admin landed this on a protected branch past its rule.').optional(),
  })
  .meta({ id: 'Commit' });

/** A commit with each table's live row and run counts. */
export const CommitDetailZ = CommitZ.extend({
  tables: z.array(z.object({ name: z.string(), rows: z.number().int(), runs: z.number().int() })),
}).meta({ id: 'CommitDetail' });
