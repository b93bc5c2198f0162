import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import { tagDto, type TagDto } from '../../dtos.js';
import { TagZ } from '../../results/tag.js';

export const getTag = defineOperation({
  name: 'getTag',
  summary: 'One tag with the commit it names.',
  role: 'read',
  access: ({ name }) => ({ reads: [{ tag: name }] }),
  input: z.object({ name: branchName }).strict(),
  async run(service, { name }, ctx): Promise<TagDto> {
    return tagDto(await service.graph.tag(name, ctx.signal));
  },
  output: TagZ,
  http: { method: 'GET', path: '/tags/{name}' },
  graphql: [{ type: 'Query', field: 'tag' }],
});
