/**
 * What deleting a named thing answers: over REST, the name it deleted; over
 * GraphQL, `true` (the field the SDL has always had), which a GraphQL
 * client reads back as the name it asked to delete.
 */
import { z } from 'zod';
import type { GraphqlBinding } from '../operation.js';

export const DeletedZ = z.object({ deleted: z.string() });

/** The GraphQL mutation `field` of a deletion whose input names the deleted thing by `key`. */
export function deletionField(field: string, key: string): GraphqlBinding<{ deleted: string }> {
  return {
    type: 'Mutation',
    field,
    result: () => true,
    output: z.literal(true),
    receive: (_v, input) => ({ deleted: String(input[key]) }),
  };
}
