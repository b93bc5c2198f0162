/**
 * A tag as clients see it.
 */
import { z } from 'zod';
import { IdZ } from './scalars.js';

/** An immutable name for a commit; usable wherever a ref is, as `tag:<name>`. */
export const TagZ = z
  .object({
    name: z.string(),
    commit: IdZ,
    actor: z.string(),
    time: z.string(),
    message: z.string(),
  })
  .meta({ id: 'Tag', description: 'An immutable name for a commit; usable wherever a ref is, as `tag:<name>`.' });
