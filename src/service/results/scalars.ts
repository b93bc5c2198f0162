/**
 * Values whose JSON type says less than they are. Their format names them in
 * `openapi.yaml`, and the GraphQL SDL gives each its own type (see
 * graphql/graphql-document.ts).
 */
import { z } from 'zod';

/** An opaque identifier (a commit, a merge request, a hook, a long operation): GraphQL's `ID`. */
export const IdZ = z.string().meta({ format: 'id' });

/**
 * A count that may pass 32 bits (bytes, above all): OpenAPI's `int64`, GraphQL's `Float`, since
 * GraphQL's `Int` stops at 2^31 and a `Float` carries every integer up to 2^53 exactly.
 */
export const Int64Z = z.number().int().nonnegative().meta({ format: 'int64' });
