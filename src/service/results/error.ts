/**
 * The one envelope every error travels in.
 */
import { z } from 'zod';
import { ERROR_CODES, type PublicErrorCode } from '../../model/errors.js';

/** An error: a stable code from the closed set, whether a retry may succeed, the problems by path, and the request id the log files it under. */
export const ErrorEnvelopeZ = z
  .object({
    requestId: z.string(),
    error: z.object({
      code: z.enum(Object.keys(ERROR_CODES) as [PublicErrorCode, ...PublicErrorCode[]]),
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
