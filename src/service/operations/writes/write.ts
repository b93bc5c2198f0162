import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, bypassProtection, commitId, text, WriteOpZ } from '../../inputs.js';
import { LIMITS } from '../../limits.js';
import { protectionPass } from '../../protection-pass.js';
import type { WriteOp } from '../../../graph/write-batch.js';
import { writeResult } from './write-result.js';
import type { WriteResultDto } from '../../dtos.js';
import { WriteResultZ } from '../../results/write.js';

/** A write batch: up to 100,000 operations applied as one commit, or none (grouped with concurrent batches, each validated alone). */
export const write = defineOperation({
  name: 'write',
  summary: 'Apply a batch of inserts, updates, upserts and deletes as one commit, or none.',
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      ops: z.array(WriteOpZ).min(1).max(LIMITS.maxBatchOps),
      message: text(2000).optional(),
      author: text(200).optional(),
      expectedHead: commitId.optional(),
      bypassProtection,
    })
    .strict(),
  async run(service, input, ctx): Promise<WriteResultDto> {
    const n = input.ops.length;
    const r = await service.graph.write(input.branch, input.ops as WriteOp[], {
      signal: ctx.signal,
      actor: ctx.actor,
      author: input.author,
      message: input.message ?? `write ${n} ${n === 1 ? 'operation' : 'operations'}`,
      expectedHead: input.expectedHead,
      protection: protectionPass(ctx, input.bypassProtection),
    });
    if (r.status === 'published') service.compactor.touched(input.branch);
    return writeResult(r);
  },
  output: WriteResultZ,
  http: { method: 'POST', path: '/branches/{id}/writes', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'write', input: 'WriteInput' }],
  mcp: [
    {
      tool: 'write',
      description:
        'Insert, update, upsert or delete rows on one branch as one atomic commit: all of them land or none do. Write on a branch of your own (branch_create), not on main: a protected branch refuses direct writes. Give `expectedHead` (the head commit id you read) to refuse the write if the branch moved. Returns the commit and counts of what changed.',
      destructive: true,
    },
  ],
});
