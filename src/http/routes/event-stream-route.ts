/**
 * The event feed as server-sent events: `GET /events/stream?cursor=N` (or
 * a reconnecting client's `Last-Event-ID`) sends every event after the
 * cursor, then each new one as it is appended, each with its sequence as
 * the SSE id, so a client that reconnects resumes exactly where it was. A
 * comment line keeps an idle connection open; a `waiting` event (no id)
 * names the undecided event the feed waits on and its deadline, and
 * `waiting` with `null` says it no longer waits. A cursor past the feed's
 * end is a 400. The stream ends when the client goes away or the server
 * stops.
 */
import type { Hono } from 'hono';
import { streamSSE } from 'hono/streaming';
import { requireRole } from '../../service/auth.js';
import { eventCursor, followEvents } from '../../service/follow-events.js';
import type { BranchgraphService } from '../../service/service.js';
import { ctxOf, type Env } from '../http-context.js';

const KEEPALIVE_MS = 15_000;

export function eventStreamRoute(app: Hono<Env>, service: BranchgraphService): void {
  app.get('/events/stream', (c) => {
    requireRole(c.get('role'), 'read');
    const after = eventCursor(c.req.header('last-event-id') ?? c.req.query('cursor'));
    const signal = AbortSignal.any([c.req.raw.signal, service.stopping.signal]);
    return streamSSE(
      c,
      async (stream) => {
        let spoke = Date.now();
        let waiting = 'null';
        for await (const e of followEvents(service, { after, signal, ctx: ctxOf(c) })) {
          if (!('pause' in e)) {
            await stream.writeSSE({ id: String(e.seq), event: e.kind, data: JSON.stringify(e) });
            spoke = Date.now();
            waiting = 'null';
          } else if (JSON.stringify(e.waitingOn) !== waiting) {
            // The feed waits on an event whose writer may still be publishing: say so, once per event.
            waiting = JSON.stringify(e.waitingOn);
            await stream.writeSSE({ event: 'waiting', data: waiting });
            spoke = Date.now();
          } else if (Date.now() - spoke >= KEEPALIVE_MS) {
            await stream.write(': keep-alive\n\n');
            spoke = Date.now();
          }
        }
      },
      async (err) => {
        c.get('log')?.warn({ err }, 'event stream ended by an error');
      },
    );
  });
}
