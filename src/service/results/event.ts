/**
 * One event of the graph's feed.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';
import { EVENT_KINDS } from '../../graph/event-log.js';

/** One event of the feed: its place, kind, time and actor, and what it names. */
export const GraphEventZ = z
  .object({
    seq: z.number().int().describe('Its place in the feed.'),
    kind: z.enum(EVENT_KINDS),
    time: z.string(),
    actor: z.string(),
    branch: z.string().optional(),
    commit: IdZ.optional(),
    commitKind: z.string().describe("A commit event's commit kind (write, merge, ...).").optional(),
    tag: z.string().optional(),
    request: IdZ.optional(),
  })
  .meta({ id: 'GraphEvent' });
