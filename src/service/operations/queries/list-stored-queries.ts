import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { pinnedContext } from '../../request-context.js';
import { branchName } from '../../inputs.js';
import { IdZ } from '../../results/scalars.js';
import { StoredQueryZ, storedQueryDto } from './stored-query-dto.js';

/** The stored queries of a branch at its head, each with its shape against the branch's schema. */
export const listStoredQueries = defineOperation({
  name: 'listStoredQueries',
  summary: "A branch's stored queries: named typed-GraphQL documents, with their variables.",
  role: 'read',
  access: ({ branch }) => ({ reads: [{ branch }] }),
  input: z.object({ branch: branchName }).strict(),
  async run(service, { branch }, given) {
    // One head for the listing and every query's shape.
    const ctx = pinnedContext(given);
    const head = await service.snapshot({ branch }, ctx);
    const queries = await Promise.all((head.schema.queries ?? []).map((query) => storedQueryDto(service, { branch, query, ctx })));
    return { commit: head.manifest.commit.id, queries };
  },
  output: z.object({ commit: IdZ.describe('The head the queries were read at.'), queries: z.array(StoredQueryZ) }),
  http: { method: 'GET', path: '/branches/{id}/queries', params: { id: 'branch' } },
  graphql: [{ type: 'Query', field: 'storedQueries' }],
});
