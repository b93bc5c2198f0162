import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { DeletedZ, deletionField } from '../../results/deletion.js';
import { hookId } from './hook-id.js';

/** Remove a hook (admin): no server calls it after its next registry refresh; its dead letters stay. */
export const deleteHook = defineOperation({
  name: 'deleteHook',
  summary: 'Remove a webhook or check (admin).',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z.object({ id: hookId }).strict(),
  async run(service, { id }, ctx): Promise<{ deleted: string }> {
    await service.graph.hooks.delete(id, ctx.signal);
    return { deleted: id };
  },
  output: DeletedZ,
  http: { method: 'DELETE', path: '/hooks/{id}' },
  graphql: [deletionField('deleteHook', 'id')],
});
