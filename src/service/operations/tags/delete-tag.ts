import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { DeletedZ, deletionField } from '../../results/deletion.js';
import { branchName } from '../../inputs.js';

/** Remove a tag; the commits it named stay while anything else reaches them. */
export const deleteTag = defineOperation({
  name: 'deleteTag',
  summary: 'Remove a tag (admin); its commits stay while anything else reaches them.',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z.object({ name: branchName }).strict(),
  async run(service, { name }, ctx): Promise<{ deleted: string }> {
    await service.graph.deleteTag(name, ctx.signal);
    return { deleted: name };
  },
  output: DeletedZ,
  http: { method: 'DELETE', path: '/tags/{name}' },
  graphql: [deletionField('deleteTag', 'name')],
});
