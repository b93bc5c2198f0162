/**
 * A tag as clients see it.
 */
import { z } from 'zod';

/** An immutable name for a commit; usable wherever a ref is, as `tag:<name>`. */
export const TagZ = z
  .object({
    name: z.string(),
    commit: z.string(),
    actor: z.string(),
    time: z.string(),
    message: z.string(),
  })
  .meta({ id: 'Tag', description: 'An immutable name for a commit; usable wherever a ref is, as `tag:<name>`.' });
