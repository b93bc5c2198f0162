import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, tableName } from '../../inputs.js';
import { publishedCommit, type CompactResultDto } from '../../dtos.js';
import { CommitZ } from '../../results/commit.js';

/** Compact a branch's tables now: what the size-tiered policy says is due (`tiered`), or each table as one run (`full`). */
export const compact = defineOperation({
  name: 'compact',
  summary: "Compact a branch's tables now (servers also compact in the background).",
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      tables: z.array(tableName).max(10_000).optional(),
      mode: z.enum(['tiered', 'full']).meta({ title: 'CompactionMode' }).optional(),
    })
    .strict(),
  async run(service, { branch, ...input }, ctx): Promise<CompactResultDto> {
    const r = await service.compactor.run(branch, { ...input, signal: ctx.signal, actor: ctx.actor });
    return { commit: publishedCommit(r), tables: r.result.tables };
  },
  output: z.object({
    commit: CommitZ.nullable(),
    tables: z.array(
      z.object({
        table: z.string(),
        runsBefore: z.number().int(),
        runsAfter: z.number().int(),
        runsMerged: z.number().int(),
        indexRunsMerged: z.number().int().describe("Runs of the table's secondary indexes merged alongside."),
      }),
    ),
  }),
  http: { method: 'POST', path: '/branches/{id}/compact', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'compact' }],
});
