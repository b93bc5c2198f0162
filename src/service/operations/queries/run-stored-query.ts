import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { pinnedContext } from '../../request-context.js';
import { branchName } from '../../inputs.js';
import { BranchgraphError } from '../../../model/errors.js';
import { storedQueryName, typedPort } from './stored-query-dto.js';

/**
 * Run a branch's stored query with variables, on the branch's typed API, as the caller: a
 * mutation needs the write role and the branch in the token's write scope, checked field by field
 * as any typed mutation is. Answers as GraphQL does: `data` and `errors`.
 */
export const runStoredQuery = defineOperation({
  name: 'runStoredQuery',
  summary: "Run a branch's stored query with variables; answers GraphQL's data and errors.",
  role: 'read',
  access: ({ branch }) => ({ reads: [{ branch }] }),
  input: z
    .object({
      branch: branchName,
      name: storedQueryName,
      variables: z.record(z.string(), z.unknown()).optional().describe("The document's variables."),
    })
    .strict(),
  async run(service, { branch, name, variables }, given) {
    // The document runs on the head it was found in.
    const ctx = pinnedContext(given);
    const head = await service.snapshot({ branch }, ctx);
    const query = (head.schema.queries ?? []).find((q) => q.name === name);
    if (query === undefined) throw new BranchgraphError('not_found', `branch ${branch} stores no query ${name}`, { details: { branch } });
    return typedPort(service).run({ branch, document: query.document, variables, ctx });
  },
  output: z
    .object({
      data: z.record(z.string(), z.unknown()).nullable().optional(),
      errors: z.array(z.object({ message: z.string(), extensions: z.record(z.string(), z.unknown()).optional() }).passthrough()).optional(),
      extensions: z.record(z.string(), z.unknown()).optional(),
    })
    .meta({ id: 'StoredQueryAnswer' }),
  http: { method: 'POST', path: '/branches/{id}/queries/{name}', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'runStoredQuery' }],
});
