/**
 * The event feed as server-sent events: `GET /events/stream?cursor=N` (or
 * a reconnecting client's `Last-Event-ID`) sends every event after the
 * cursor, then each new one as it is appended, each with its sequence as
 * the SSE id, so a client that reconnects resumes exactly where it was.
 * The log is polled; a comment line keeps idle connections open. The
 * stream ends when the client goes away or the server stops.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { BranchgraphError } from '../../model/errors.js';
import { requireRole } from '../../service/auth.js';
import { eventDto } from '../../service/operations/events/list-events.js';
import type { BranchgraphService } from '../../service/service.js';
import type { Env } from '../http-context.js';

/** How often an idle stream looks for new events, and how often it says it is alive. */
export const STREAM_POLL_MS = 250;
const KEEPALIVE_MS = 15_000;

export function eventStreamRoute(app: Hono<Env>, service: BranchgraphService): void {
  app.get('/events/stream', (c) => {
    requireRole(c.get('role'), 'read');
    const given = c.req.header('last-event-id') ?? c.req.query('cursor') ?? '0';
    if (!/^\d{1,12}$/.test(given))
      throw new BranchgraphError('invalid_input', 'cursor must be a sequence number from the feed', {
        issues: [{ path: 'cursor', message: 'not a cursor' }],
      });
    const signal = AbortSignal.any([c.req.raw.signal, service.stopping.signal]);
    return streamSSE(
      c,
      async (stream) => {
        let cursor = Number(given);
        let quietSince = Date.now();
        while (!signal.aborted) {
          const page = await service.graph.events({ after: cursor, limit: 100, signal });
          for (const e of page.events) await stream.writeSSE({ id: String(e.seq), event: e.kind, data: JSON.stringify(eventDto(e)) });
          cursor = page.next;
          if (page.events.length > 0) {
            quietSince = Date.now();
            continue;
          }
          if (Date.now() - quietSince >= KEEPALIVE_MS) {
            await stream.write(': keep-alive\n\n');
            quietSince = Date.now();
          }
          await new Promise<void>((resolve) => {
            const t = setTimeout(resolve, STREAM_POLL_MS);
            signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
          });
        }
      },
      async (err) => {
        c.get('log')?.warn({ err }, 'event stream ended by an error');
      },
    );
  });
}
