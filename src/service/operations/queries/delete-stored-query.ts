import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, text } from '../../inputs.js';
import { CommitZ } from '../../results/commit.js';
import { publishedCommit } from '../../dtos.js';
import { storedQueryName } from './stored-query-dto.js';

/** Delete a stored query from a branch, as one commit. */
export const deleteStoredQuery = defineOperation({
  name: 'deleteStoredQuery',
  summary: 'Delete a stored query from a branch (one commit).',
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z.object({ branch: branchName, name: storedQueryName, message: text(2000).optional() }).strict(),
  async run(service, { branch, name, message }, ctx) {
    const r = await service.graph.setStoredQuery(branch, { name, query: null }, { signal: ctx.signal, actor: ctx.actor, message });
    return { commit: publishedCommit(r) };
  },
  output: z.object({ commit: CommitZ.nullable() }),
  http: { method: 'DELETE', path: '/branches/{id}/queries/{name}', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'deleteStoredQuery', pick: 'commit' }],
});
