/**
 * Object store calls and bytes, as merges and catch-ups report them.
 */
import { z } from 'zod';

/** Calls and bytes read and written for one kind of store call. */
export const StoreCallCountZ = z
  .object({
    calls: z.number().int(),
    bytesRead: z.number().int(),
    bytesWritten: z.number().int(),
  })
  .meta({ id: 'StoreCallCount' });
