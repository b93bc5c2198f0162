import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { DeletedZ, deletionField } from '../../results/deletion.js';
import { branchName } from '../../inputs.js';

/** Delete a branch (never main); one whose record is damaged can be deleted too. Its commits stay readable until GC. */
export const deleteBranch = defineOperation({
  name: 'deleteBranch',
  summary: 'Delete a branch (never main); its commits stay readable until GC.',
  role: 'write',
  access: ({ name }) => ({ writes: [name] }),
  input: z.object({ name: branchName }).strict(),
  async run(service, { name }, ctx): Promise<{ deleted: string }> {
    await service.graph.deleteBranch(name, { signal: ctx.signal, actor: ctx.actor });
    service.catchUps.forget(name);
    return { deleted: name };
  },
  output: DeletedZ,
  http: { method: 'DELETE', path: '/branches/{id}', params: { id: 'name' } },
  graphql: [deletionField('deleteBranch', 'name')],
  mcp: [
    {
      tool: 'branch_delete',
      description:
        'Delete a branch (never main). Its commits stay readable by id until garbage collection. Use it for a branch whose work was merged or abandoned.',
      destructive: true,
    },
  ],
});
