/**
 * `subscription { events(cursor) { … } }`: the event feed as a GraphQL
 * subscription, served by Yoga over server-sent events. The same follower
 * as `GET /events/stream` (service/follow-events.ts); it ends when the
 * client goes away or the server stops. The role and the cursor are
 * checked before the stream starts, so a refusal is a typed error.
 */
import { requireRole, type Role } from '../service/auth.js';
import { eventCursor, followEvents } from '../service/follow-events.js';
import type { GraphEventDto } from '../service/operations/events/list-events.js';
import type { BranchgraphService } from '../service/service.js';
import type { RequestContext } from '../service/request-context.js';
import { toGraphqlError } from './graphql-errors.js';

/** What a subscription reads of the GraphQL context (graphql-schema.ts). */
interface FeedContext {
  service: BranchgraphService;
  role: Role;
  request: Request;
  requestCtx: RequestContext;
}

async function* events(ctx: FeedContext, after: number): AsyncGenerator<{ events: GraphEventDto }> {
  const signal = AbortSignal.any([ctx.request.signal, ctx.service.stopping.signal]);
  for await (const e of followEvents(ctx.service, { after, signal, ctx: ctx.requestCtx })) if (!('pause' in e)) yield { events: e };
}

export const eventSubscription = {
  events: {
    subscribe: (_parent: unknown, args: { cursor?: string | null }, ctx: FeedContext) => {
      try {
        requireRole(ctx.role, 'read');
        return events(ctx, eventCursor(args.cursor));
      } catch (e) {
        throw toGraphqlError(e, ctx.requestCtx);
      }
    },
  },
};
