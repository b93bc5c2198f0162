/**
 * An event hook as clients see it (never its secret, except once when it is created).
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';
import { HOOK_KINDS } from '../../model/hook.js';

/** A registered webhook or check, without its secret, with this server's delivery counts since it started. */
export const HookZ = z
  .object({
    id: IdZ,
    kind: z.enum(HOOK_KINDS),
    url: z.string(),
    events: z.array(z.string()),
    check: z.string().optional(),
    createdBy: z.string(),
    createdAt: z.string(),
    stats: z.object({
      delivered: z.number().int(),
      failedAttempts: z.number().int(),
      deadLetters: z.number().int(),
      queued: z.number().int(),
      lastError: z.string().nullable(),
      lastLatencyMs: z.number().int().nullable().describe("From the change landing to the receiver's answer, of the latest delivery."),
    }),
  })
  .meta({
    id: 'Hook',
    description: "A registered webhook or check, without its secret, with this server's delivery counts since it started.",
  });
