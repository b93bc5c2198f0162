import { z } from 'zod';
import type { EventPage, GraphEvent } from '../../../graph/event-log.js';
import { BranchgraphError } from '../../../model/errors.js';
import type { BranchgraphService } from '../../service.js';
import { defineOperation } from '../../operation.js';
import { visibleEvent } from '../../access.js';
import { GraphEventZ } from '../../results/event.js';

/** An event as clients see it: what changed, who changed it, and where to read on. */
export type GraphEventDto = Omit<GraphEvent, 'format' | 'source' | 'writer'>;

export function eventDto(e: GraphEvent): GraphEventDto {
  const { format: _f, source: _s, writer: _w, ...rest } = e;
  return rest;
}

/** A cursor past the feed's end names no event: refused, rather than waited on forever. */
export async function refusePastEnd(service: BranchgraphService, after: number, signal?: AbortSignal): Promise<void> {
  if (!(await service.graph.eventCursorPastEnd(after, signal))) return;
  throw new BranchgraphError('invalid_input', `cursor ${after} is past the end of the event feed`, {
    issues: [{ path: 'cursor', message: 'past the end of the feed: resume from a cursor the feed gave' }],
  });
}

/**
 * The graph's event feed after a cursor: every commit, branch change, tag and merge request change,
 * once each and in one order, across processes and restarts. `nextCursor` is where to read on
 * (poll it, or stream from it at `GET /events/stream`); an empty page means nothing new yet, and
 * `waitingOn` names the undecided event the feed waits on (its writer may still be publishing) with
 * its deadline. A cursor past the feed's end is `invalid_input`.
 */
export const listEvents = defineOperation({
  name: 'listEvents',
  summary: 'The event feed after a cursor: each change once, in order.',
  role: 'read',
  access: () => 'filtered',
  input: z
    .object({
      cursor: z
        .string()
        .regex(/^\d{1,12}$/, 'a cursor from a previous page (0 for the start)')
        .optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    })
    .strict(),
  async run(
    service,
    { cursor, limit = 100 },
    ctx,
  ): Promise<{ events: GraphEventDto[]; nextCursor: string; waitingOn: EventPage['waitingOn'] }> {
    const after = Number(cursor ?? '0');
    const page = await service.graph.events({ after, limit, signal: ctx.signal });
    if (page.events.length === 0) await refusePastEnd(service, after, ctx.signal);
    // A scoped token reads the events of the branches it reads; the cursor still moves past the rest.
    const events = page.events.filter((e) => visibleEvent(ctx, e)).map(eventDto);
    return { events, nextCursor: String(page.next), waitingOn: page.waitingOn };
  },
  output: z.object({
    events: z.array(GraphEventZ),
    nextCursor: z.string(),
    waitingOn: z
      .object({
        seq: z.number().int(),
        writer: z.string().nullable(),
        deadline: z.string(),
      })
      .nullable()
      .describe(
        'The event whose change is still being published, which holds the page, and the latest it can hold it; null when none does.',
      ),
  }),
  http: { method: 'GET', path: '/events' },
  graphql: [{ type: 'Query', field: 'events' }],
});
