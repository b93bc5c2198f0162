import { z } from 'zod';
import { Int64Z } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import type { CatchUpReport } from '../../../wal/catch-up.js';
import { CatchUpReportZ } from '../../results/wal.js';

/** Fold pending WAL generations into the branch's tables now, in batches (pipelined unless asked not to). */
export const catchUp = defineOperation({
  name: 'catchUp',
  summary: "Fold pending WAL generations into the branch's tables.",
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      maxGenerations: z.number().int().min(0).max(1_000_000).optional(),
      maxBytes: Int64Z.min(1).optional(),
      pipeline: z.boolean().optional(),
    })
    .strict(),
  async run(service, { branch, ...input }, ctx): Promise<CatchUpReport> {
    const report = await service.catchUps.run(branch, input, { signal: ctx.signal });
    if (report.batches > 0) service.compactor.touched(branch);
    return report;
  },
  output: CatchUpReportZ,
  http: { method: 'POST', path: '/branches/{id}/catchup', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'catchUp' }],
});
