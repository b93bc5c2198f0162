import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, refOrMain, text } from '../../inputs.js';
import { tagDto, type TagDto } from '../../dtos.js';
import { TagZ } from '../../results/tag.js';

/** Name the commit a ref resolves to (main's head by default); a tag never moves. */
export const createTag = defineOperation({
  name: 'createTag',
  summary: 'Name the commit a ref resolves to (default main); tags never move.',
  role: 'write',
  access: ({ from }) => ({ reads: [from], graph: 'write' }),
  input: z.object({ name: branchName, from: refOrMain, message: text(2000).optional() }).strict(),
  async run(service, { name, from, message }, ctx): Promise<TagDto> {
    return tagDto(
      await service.graph.createTag(name, from, { signal: ctx.signal, actor: ctx.actor, ...(message !== undefined ? { message } : {}) }),
    );
  },
  output: TagZ,
  http: { method: 'POST', path: '/tags', status: 201 },
  graphql: [{ type: 'Mutation', field: 'createTag' }],
});
