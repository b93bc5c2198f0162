import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import { writeResult } from './write-result.js';
import type { WriteResultDto } from '../../dtos.js';
import { WriteResultZ } from '../../results/write.js';

/** NDJSON operations as one all-or-nothing commit, followed as a long operation (parse, validate, write). */
export const load = defineOperation({
  name: 'load',
  summary: 'Bulk load NDJSON operations as one all-or-nothing commit.',
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z.object({ branch: branchName, ndjson: z.string() }).strict(),
  async run(service, { branch, ndjson }, ctx): Promise<WriteResultDto> {
    const r = await service.tracked({ kind: 'load', branch, source: null, log: ctx.log }, ctx, (progress) =>
      service.graph.load(branch, ndjson, { signal: ctx.signal, actor: ctx.actor, message: 'bulk load', progress }),
    );
    if (r.status === 'published') service.compactor.touched(branch);
    return writeResult(r);
  },
  output: WriteResultZ,
  http: { method: 'POST', path: '/branches/{id}/load', params: { id: 'branch' }, body: 'text', bodyField: 'ndjson' },
  graphql: [{ type: 'Mutation', field: 'load' }],
});
