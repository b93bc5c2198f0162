import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import type { DeadLetter } from '../../../graph/hooks.js';
import { defineOperation } from '../../operation.js';

/**
 * Deliveries that never landed (admin), oldest first: out of attempts, turned away by a full queue, or
 * still queued when a server stopped, each with the body it would have sent and the last error.
 */
export const listHookDeadLetters = defineOperation({
  name: 'listHookDeadLetters',
  summary: 'Webhook deliveries that never landed, with why (admin).',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z
    .object({
      cursor: z
        .string()
        .regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a cursor from a previous page')
        .optional(),
      limit: z.number().int().min(1).max(1000).optional(),
    })
    .strict(),
  async run(service, { cursor, limit = 100 }, ctx): Promise<{ deadLetters: Omit<DeadLetter, 'format'>[]; nextCursor: string | null }> {
    const page = await service.graph.hooks.deadLetters({ after: cursor, limit, signal: ctx.signal });
    return { deadLetters: page.letters.map(({ format: _f, ...l }) => l), nextCursor: page.next ?? null };
  },
  output: z.object({
    deadLetters: z.array(
      z.object({
        id: IdZ,
        hook: IdZ,
        url: z.string(),
        delivery: z.string(),
        event: z.string(),
        attempts: z.number().int().describe('Attempts made (0 when the queue was full).'),
        error: z.string(),
        time: z.string(),
        body: z.string().describe('The JSON body it would have carried.'),
      }),
    ),
    nextCursor: z.string().nullable(),
  }),
  http: { method: 'GET', path: '/hooks/dead-letters' },
  graphql: [{ type: 'Query', field: 'hookDeadLetters' }],
});
