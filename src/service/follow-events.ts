/**
 * Following the event feed: every event after a cursor, then each new one
 * as it is appended, for as long as the caller listens. The log is polled;
 * between polls that found nothing it yields `idle`, so a stream can say it
 * is alive. Ends when `signal` aborts (the client left, the server stops).
 */
import { BranchgraphError } from '../model/errors.js';
import { eventDto, type GraphEventDto } from './operations/events/list-events.js';
import type { BranchgraphService } from './service.js';
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

export async function* followEvents(
  service: BranchgraphService,
  from: { after: number; signal: AbortSignal; pollMs?: number },
): AsyncGenerator<GraphEventDto | 'idle'> {
  const { signal, pollMs = FOLLOW_POLL_MS } = from;
  let cursor = from.after;
  while (!signal.aborted) {
    const page = await service.graph.events({ after: cursor, limit: 100, signal });
    for (const e of page.events) yield eventDto(e);
    cursor = page.next;
    if (page.events.length > 0) continue;
    yield 'idle';
    // Woken early by the client going away; the loop then ends.
    await abortableSleep(pollMs, signal).catch(() => undefined);
  }
}
