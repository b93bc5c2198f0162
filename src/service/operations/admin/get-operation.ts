import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import { requireRead } from '../../access.js';
import type { OperationDto } from '../../dtos.js';
import { OperationZ } from '../../results/long-operation.js';

/** A long operation's progress by the id its request was given (`Operation-Id`); not_found before it starts. */
export const getOperation = defineOperation({
  name: 'getOperation',
  summary: "A long operation's progress, by the id its request was given.",
  role: 'read',
  // Judged on what it finds: the branch it changes.
  access: () => 'filtered',
  input: z.object({ id: IdZ.min(1).max(64) }).strict(),
  async run(service, { id }, ctx): Promise<OperationDto> {
    const op = service.operations.get(id);
    requireRead(ctx, op.branch);
    return op;
  },
  output: OperationZ,
  http: { method: 'GET', path: '/operations/{id}' },
  graphql: [{ type: 'Query', field: 'operation' }],
});
