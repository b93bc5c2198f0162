import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, text } from '../../inputs.js';
import { BranchgraphError } from '../../../model/errors.js';
import { CommitZ } from '../../results/commit.js';
import { publishedCommit } from '../../dtos.js';
import { dtoOf, StoredQueryZ, storedQueryName, typedPort } from './stored-query-dto.js';

/**
 * Store a typed-GraphQL document on a branch under a name, as one commit (graph/stored-query.ts).
 * It must be one query or mutation that is valid on the branch's schema now; its variables become
 * the input of its MCP tool. It is versioned with the branch and merged as the schema is.
 */
export const putStoredQuery = defineOperation({
  name: 'putStoredQuery',
  summary: 'Store a named typed-GraphQL document on a branch (one commit); it becomes an MCP tool.',
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      name: storedQueryName,
      document: text(100_000).min(1).describe("One GraphQL query or mutation on the branch's typed API, with its variables declared."),
      description: text(2000).optional().describe('What it answers and when to use it: the MCP tool shows it to a model.'),
      message: text(2000).optional(),
    })
    .strict(),
  async run(service, input, ctx) {
    const { branch, name, document } = input;
    const shape = await typedPort(service).shape({ branch, document, ctx });
    if ('problems' in shape)
      throw new BranchgraphError('invalid_input', `the document does not run on ${branch}: ${shape.problems[0]}`, {
        issues: shape.problems.map((message) => ({ path: 'document', message })),
      });
    const query = { name, description: input.description ?? '', document };
    const r = await service.graph.setStoredQuery(branch, { name, query }, { signal: ctx.signal, actor: ctx.actor, message: input.message });
    return { commit: publishedCommit(r), query: dtoOf(query, shape) };
  },
  output: z.object({
    commit: CommitZ.nullable().describe('The commit that stored it; null when the branch held this very query already.'),
    query: StoredQueryZ,
  }),
  http: { method: 'PUT', path: '/branches/{id}/queries/{name}', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'putStoredQuery' }],
});
