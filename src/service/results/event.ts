/**
 * One event of the graph's feed.
 */
import { z } from 'zod';

/** GraphEvent. */
export const GraphEventZ = z
  .object({
    seq: z.number().int().describe('Its place in the feed.'),
    kind: z.enum([
      'commit',
      'branch_created',
      'branch_deleted',
      'branch_reset',
      'branch_protected',
      'branch_unprotected',
      'tag_created',
      'request_opened',
      'request_revised',
      'request_reviewed',
      'request_resolutions',
      'request_checked',
      'request_merge_started',
      'request_merged',
      'request_closed',
    ]),
    time: z.string(),
    actor: z.string(),
    branch: z.string().optional(),
    commit: z.string().optional(),
    commitKind: z.string().describe("A commit event's commit kind (write, merge, ...).").optional(),
    tag: z.string().optional(),
    request: z.string().optional(),
  })
  .meta({ id: 'GraphEvent' });
