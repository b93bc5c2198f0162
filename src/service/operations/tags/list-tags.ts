import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { tagDto, type TagDto } from '../../dtos.js';
import { TagZ } from '../../results/tag.js';

/** Every tag; a tag object that cannot be read is logged and left out. */
export const listTags = defineOperation({
  name: 'listTags',
  summary: 'Every tag with the commit it names.',
  role: 'read',
  input: z.object({}).strict(),
  async run(service, _input, ctx): Promise<{ tags: TagDto[] }> {
    const { tags, damaged } = await service.graph.listTags(ctx.signal);
    for (const d of damaged) ctx.log?.warn({ key: d.key, error: d.error }, 'a tag cannot be read');
    return { tags: tags.map(tagDto) };
  },
  output: z.object({
    tags: z.array(TagZ),
  }),
  http: { method: 'GET', path: '/tags' },
  graphql: [{ type: 'Query', field: 'tags', pick: 'tags' }],
});
