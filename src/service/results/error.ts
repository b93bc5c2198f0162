/**
 * The one envelope every error travels in.
 */
import { z } from 'zod';

/** ErrorEnvelope. */
export const ErrorEnvelopeZ = z
  .object({
    requestId: z.string(),
    error: z.object({
      code: z.enum([
        'invalid_input',
        'schema_invalid',
        'schema_incompatible',
        'constraint_violation',
        'not_found',
        'ambiguous_ref',
        'branch_exists',
        'branch_protected',
        'graph_exists',
        'tag_exists',
        'head_moved',
        'payload_too_large',
        'unauthorized',
        'forbidden',
        'publish_contention',
        'aborted',
        'resolution_stale',
        'store_unavailable',
        'store_error',
        'corrupt_object',
        'shutting_down',
        'overloaded',
        'internal',
      ]),
      message: z.string(),
      retryable: z.boolean(),
      issues: z
        .array(
          z.object({
            path: z.string(),
            message: z.string(),
          }),
        )
        .optional(),
      details: z
        .record(z.string(), z.unknown())
        .describe(
          'What the code says in fields: `branch`, `expected` and `actual` for head_moved; `branch` for branch_exists and branch_protected; `graph` for graph_exists; `limit` for payload_too_large and overloaded; `key` for corrupt_object; `acknowledged` ({ generations, rows, lastSeq }) on an ingest that failed after making earlier generations durable.',
        )
        .optional(),
    }),
  })
  .meta({ id: 'ErrorEnvelope' });
