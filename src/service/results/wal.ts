/**
 * A branch's WAL: its watermarks, what is pending, and what a catch-up did.
 */
import { z } from 'zod';
import { IdZ, Int64Z } from './scalars.js';
import { StoreCallCountZ } from './store-calls.js';

/** What a catch-up folded: batches, generations, rows and bytes, its time and store calls. */
export const CatchUpReportZ = z
  .object({
    branch: z.string(),
    outcome: z.enum(['caught_up', 'nothing_pending', 'incomplete']),
    batches: z.number().int(),
    generations: z.number().int(),
    rows: z.number().int(),
    bytes: Int64Z,
    staleRounds: z.number().int().describe('Rounds started over because another publication moved the watermarks.'),
    pendingAfter: z.number().int(),
    overlapped: z.number().int().describe('Batches read while the previous one committed.'),
    retries: z.number().int().describe('Oversized prefetches retried alone.'),
    maxAlive: z.number().int(),
    maxReservedBytes: Int64Z,
    totalMs: z.number(),
    phasesMs: z.record(z.string(), z.number()),
    storeCalls: z.record(z.string(), StoreCallCountZ),
  })
  .meta({ id: 'CatchUpReport' });

/** A branch's WAL: watermarks and pending generations per shard, and this process's last catch-up. */
export const WalStatusZ = z
  .object({
    branch: z.string(),
    head: IdZ,
    pendingGenerations: z.number().int(),
    shards: z.array(
      z.object({
        shard: z.string(),
        watermark: z.number().int(),
        pendingGenerations: z.number().int(),
        pendingRows: z.record(z.string(), z.number().int()).describe('Pending rows by table.'),
        pendingBytes: Int64Z,
        oldestPendingStamp: z.string().nullable(),
      }),
    ),
    catchUp: z.object({
      running: z.boolean(),
      last: z
        .object({
          trigger: z.enum(['request', 'background']),
          startedAt: z.string(),
          finishedAt: z.string(),
          outcome: z.enum(['caught_up', 'nothing_pending', 'incomplete', 'error']),
          report: CatchUpReportZ.optional(),
          error: z
            .object({
              code: z.string(),
              message: z.string(),
            })
            .optional(),
        })
        .nullable()
        .describe("This server's last catch-up of the branch, or null when it ran none."),
    }),
  })
  .meta({ id: 'WalStatus' });
