/**
 * Object store calls and bytes, as merges and catch-ups report them.
 */
import { z } from 'zod';
import { Int64Z } from './scalars.js';

/** Calls and bytes read and written for one kind of store call. */
export const StoreCallCountZ = z
  .object({
    calls: z.number().int(),
    bytesRead: Int64Z,
    bytesWritten: Int64Z,
  })
  .meta({ id: 'StoreCallCount' });
