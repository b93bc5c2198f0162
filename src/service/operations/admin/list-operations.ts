import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { visibleBranch } from '../../access.js';
import type { OperationDto } from '../../dtos.js';
import { OperationZ } from '../../results/long-operation.js';

/** Long operations (merges, loads) running in this process, then those finished in the last minutes, with their progress. */
export const listOperations = defineOperation({
  name: 'listOperations',
  summary: 'Long operations running here, then those finished recently, with their progress.',
  role: 'read',
  access: () => 'filtered',
  input: z.object({}).strict(),
  async run(service, _input, ctx): Promise<{ operations: OperationDto[] }> {
    return { operations: service.operations.list().filter((op) => visibleBranch(ctx, op.branch)) };
  },
  output: z.object({
    operations: z.array(OperationZ),
  }),
  http: { method: 'GET', path: '/operations' },
  graphql: [{ type: 'Query', field: 'operations', pick: 'operations' }],
});
