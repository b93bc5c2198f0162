import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { DeletedZ, deletionField } from '../../results/deletion.js';

/** Remove a remote and its tracking refs; what they named stays while anything else reaches it. */
export const deleteRemote = defineOperation({
  name: 'deleteRemote',
  summary: 'Remove a remote and its tracking refs (admin, unscoped).',
  role: 'admin',
  access: () => ({ unscoped: true }),
  input: z.object({ name: z.string().min(1).max(64) }).strict(),
  async run(service, { name }, ctx): Promise<{ deleted: string }> {
    await service.graph.remotes.remove({ name, actor: ctx.actor ?? service.graph.actor, signal: ctx.signal });
    return { deleted: name };
  },
  output: DeletedZ,
  http: { method: 'DELETE', path: '/remotes/{name}' },
  graphql: [deletionField('deleteRemote', 'name')],
});
