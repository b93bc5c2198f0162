import { z } from 'zod';
import type { GraphEvent } from '../../../graph/event-log.js';
import { defineOperation } from '../../operation.js';

/** An event as clients see it: what changed, who changed it, and where to read on. */
export type GraphEventDto = Omit<GraphEvent, 'format' | 'source'>;

export function eventDto(e: GraphEvent): GraphEventDto {
  const { format: _f, source: _s, ...rest } = e;
  return rest;
}

/**
 * The graph's event feed after a cursor: every commit, branch change, tag and merge request change,
 * once each and in one order, across processes and restarts. `nextCursor` is where to read on
 * (poll it, or stream from it at `GET /events/stream`); an empty page means nothing new yet.
 */
export const listEvents = defineOperation({
  name: 'listEvents',
  summary: 'The event feed after a cursor: each change once, in order.',
  role: 'read',
  input: z
    .object({
      cursor: z
        .string()
        .regex(/^\d{1,12}$/, 'a cursor from a previous page (0 for the start)')
        .optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    })
    .strict(),
  async run(service, { cursor, limit = 100 }, ctx): Promise<{ events: GraphEventDto[]; nextCursor: string }> {
    const page = await service.graph.events({ after: Number(cursor ?? '0'), limit, signal: ctx.signal });
    return { events: page.events.map(eventDto), nextCursor: String(page.next) };
  },
  http: { method: 'GET', path: '/events' },
  graphql: [{ type: 'Query', field: 'events' }],
});
