/**
 * Following the event feed: every event after a cursor, then each new one
 * as it is appended, for as long as the caller listens. The log is polled;
 * between polls that found nothing it yields a pause, naming the undecided
 * event it waits on if any, so a stream can say it is alive and why it is
 * quiet. A cursor past the feed's end is refused. Ends when `signal` aborts (the client left, the server stops).
 */
import { BranchgraphError } from '../model/errors.js';
import { eventDto, refusePastEnd, type GraphEventDto } from './operations/events/list-events.js';
import type { BranchgraphService } from './service.js';
import type { RequestContext } from './request-context.js';
import { visibleEvent } from './access.js';
import type { EventPage } from '../graph/event-log.js';
import { abortableSleep } from '../store/abortable-sleep.js';

/** How often a follower with nothing new looks again. */
export const FOLLOW_POLL_MS = 250;

export function eventCursor(given: string | null | undefined): number {
  const text = given ?? '0';
  if (!/^\d{1,12}$/.test(text))
    throw new BranchgraphError('invalid_input', 'cursor must be a sequence number from the feed', {
      issues: [{ path: 'cursor', message: 'not a cursor' }],
    });
  return Number(text);
}

/** A pause in a followed feed: nothing new, and the undecided event it waits on, if any (event-log.ts). */
export interface FeedPause {
  pause: true;
  waitingOn: EventPage['waitingOn'];
}

export async function* followEvents(
  service: BranchgraphService,
  from: { after: number; signal: AbortSignal; pollMs?: number; ctx: RequestContext },
): AsyncGenerator<GraphEventDto | FeedPause> {
  const { signal, pollMs = FOLLOW_POLL_MS } = from;
  await refusePastEnd(service, from.after, signal);
  let cursor = from.after;
  while (!signal.aborted) {
    const page = await service.graph.events({ after: cursor, limit: 100, signal });
    // A scoped token follows the events of the branches it reads; the cursor still moves past the rest.
    for (const e of page.events) if (visibleEvent(from.ctx, e)) yield eventDto(e);
    cursor = page.next;
    if (page.events.length > 0) continue;
    yield { pause: true, waitingOn: page.waitingOn };
    // Woken early by the client going away; the loop then ends.
    await abortableSleep(pollMs, signal).catch(() => undefined);
  }
}
