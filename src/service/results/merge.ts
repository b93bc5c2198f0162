/**
 * What a merge, cherry-pick or revert did: a success with its commit, or the exact conflicts, with its metrics either way.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';
import { CONFLICT_KINDS } from '../../model/conflict.js';
import { CommitZ, ResolvedConflictsZ } from './commit.js';
import { StoreCallCountZ } from './store-calls.js';

/** What a merge cost: time per phase, store calls per operation (and what the caches answered), and the preparation width. */
export const MergeMetricsZ = z
  .object({
    phasesMs: z
      .object({
        resolve: z.number(),
        base: z.number(),
        prepare: z.number(),
        validate: z.number(),
        publish: z.number(),
        cleanup: z.number(),
      })
      .catchall(z.number()),
    totalMs: z.number(),
    storeCalls: z
      .object({
        total: StoreCallCountZ,
        cached: StoreCallCountZ.optional(),
      })
      .catchall(StoreCallCountZ)
      .describe(
        "Object store calls and bytes per operation and in total, and `cached`: reads this server's caches answered instead of the store (calls are hits, bytesRead the stored bytes they stood for). A merge on a warm server reads its runs from memory, so its store bytesRead is 0 and its cached bytesRead is not.",
      ),
    dependentRoundTrips: z
      .number()
      .int()
      .optional()
      .describe('Store calls made one after another: at a fixed latency per call, the merge took about this many of it.'),
    requestedWidth: z.number().int(),
    maxWidth: z.number().int(),
    fallbacks: z.array(z.unknown()),
    tablesPrepared: z.number().int().optional(),
    tablesAdopted: z.number().int().optional(),
    attempts: z.number().int(),
  })
  .meta({ id: 'MergeMetrics' });

/** One conflict: its kind, where it is, each side's value, and a message. */
export const ConflictZ = z
  .object({
    kind: z
      .enum(CONFLICT_KINDS)
      .describe(
        'SchemaConflict: both sides changed a type (property null) or a property differently; key is empty and the values are the definitions.',
      ),
    table: z.string(),
    key: z.string(),
    property: z.string().nullable(),
    base: z.unknown(),
    source: z.unknown(),
    target: z.unknown(),
    message: z.string(),
  })
  .meta({ id: 'Conflict' });

/** A merge that published (or would, on a dry run): its outcome, commit, heads, tables and resolutions. */
export const MergeSuccessZ = z
  .object({
    status: z.literal('success'),
    outcome: z.enum(['already_up_to_date', 'fast_forward', 'merged', 'cherry_picked', 'reverted']),
    dryRun: z.boolean(),
    commit: CommitZ.nullable(),
    sourceHead: IdZ,
    targetHead: IdZ,
    base: IdZ.nullable(),
    tables: z.array(
      z.object({
        table: z.string(),
        action: z.enum(['adopted_source', 'merged']),
        sourceChanges: z.number().int(),
        targetChanges: z.number().int(),
        bothChanged: z.number().int(),
        rowsWritten: z.number().int(),
      }),
    ),
    resolved: ResolvedConflictsZ.nullable(),
    replayed: z
      .boolean()
      .describe('Present and true when this is the stored result of an earlier request with the same Idempotency-Key.')
      .optional(),
    branchDeleted: z.boolean(),
    branchDeleteError: z.string().nullable(),
    metrics: MergeMetricsZ,
  })
  .meta({ id: 'MergeSuccess' });

/** A merge that published nothing: the exact conflicts, a page at a time. */
export const MergeConflictsZ = z
  .object({
    status: z.literal('conflicts'),
    sourceHead: IdZ,
    targetHead: IdZ,
    base: IdZ.nullable(),
    report: z.object({
      total: z.number().int(),
      counts: z
        .object({
          DivergentInsert: z.number().int(),
          DivergentUpdate: z.number().int(),
          DeleteVsUpdate: z.number().int(),
          OrphanEdge: z.number().int(),
          UniqueViolation: z.number().int(),
          CardinalityViolation: z.number().int(),
          ValueConstraintViolation: z.number().int(),
          SchemaConflict: z.number().int(),
        })
        .catchall(z.number().int()),
      items: z.array(ConflictZ),
      nextCursor: z.string().nullable(),
    }),
    metrics: MergeMetricsZ,
  })
  .meta({ id: 'MergeConflicts' });
