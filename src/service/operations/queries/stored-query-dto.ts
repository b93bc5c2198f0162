/**
 * A stored query as clients see it: its document and description, and its
 * shape against the branch's typed schema now (query or mutation, its
 * variables and their JSON Schema, or what makes it invalid since the
 * schema changed). Shared by the stored-query operations.
 */
import { z } from 'zod';
import { BranchgraphError } from '../../../model/errors.js';
import type { StoredQuery } from '../../../model/schema.js';
import type { RequestContext } from '../../request-context.js';
import type { BranchgraphService } from '../../service.js';
import type { StoredQueryShape, TypedGraphqlPort } from '../../typed-graphql-port.js';

/** A stored query's name: it is a URL segment and, prefixed, an MCP tool's name. */
export const storedQueryName = z.string().regex(/^[A-Za-z][A-Za-z0-9_]{0,63}$/, 'a letter, then up to 63 letters, digits or _');

export const StoredQueryZ = z
  .object({
    name: z.string(),
    description: z.string(),
    document: z.string(),
    operation: z.enum(['query', 'mutation']).nullable().describe('What the document does; null when it is no longer valid on this branch.'),
    variables: z.array(z.object({ name: z.string(), type: z.string(), required: z.boolean() })),
    inputSchema: z.record(z.string(), z.unknown()).describe("The variables as a JSON Schema: the input of the query's MCP tool."),
    problems: z.array(z.string()).describe("Why the document no longer runs on this branch's schema; empty when it does."),
  })
  .meta({ id: 'StoredQuery' });
export type StoredQueryDto = z.input<typeof StoredQueryZ>;

/** The typed GraphQL this process serves, or an error saying it serves none. */
export function typedPort(service: BranchgraphService): TypedGraphqlPort {
  if (service.typed !== undefined) return service.typed;
  throw new BranchgraphError('internal', 'this process serves no typed GraphQL; attachTypedGraphql(service) gives it one');
}

/** A stored query with its shape on the branch, worked out under `ctx` (pinned, it reads the branch once). */
export async function storedQueryDto(
  service: BranchgraphService,
  a: { branch: string; query: StoredQuery; ctx: RequestContext },
): Promise<StoredQueryDto> {
  return dtoOf(a.query, await typedPort(service).shape({ branch: a.branch, document: a.query.document, ctx: a.ctx }));
}

/** A stored query with a shape already worked out. */
export function dtoOf(query: StoredQuery, shape: StoredQueryShape): StoredQueryDto {
  const base = { name: query.name, description: query.description, document: query.document };
  if ('problems' in shape) return { ...base, operation: null, variables: [], inputSchema: { type: 'object' }, problems: shape.problems };
  return { ...base, ...shape, problems: [] };
}
