import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { readableHistories, seesEverything } from '../../access.js';
import { tagDto, type TagDto } from '../../dtos.js';
import { TagZ } from '../../results/tag.js';

/**
 * Every tag; a tag object that cannot be read is logged and left out. A scoped token sees the tags
 * whose commit a branch it reads holds (service/access.ts).
 */
export const listTags = defineOperation({
  name: 'listTags',
  summary: 'Every tag with the commit it names.',
  role: 'read',
  access: () => 'filtered',
  input: z.object({}).strict(),
  async run(service, _input, ctx): Promise<{ tags: TagDto[] }> {
    const { tags, damaged } = await service.graph.listTags(ctx.signal);
    for (const d of damaged) ctx.log?.warn({ key: d.key, error: d.error }, 'a tag cannot be read');
    if (seesEverything(ctx)) return { tags: tags.map(tagDto) };
    const holds = await readableHistories(service, ctx);
    const seen = await Promise.all(tags.map(async (t) => holds(await service.graph.commitSnapshot(t.commit, ctx.signal))));
    return { tags: tags.filter((_, i) => seen[i]).map(tagDto) };
  },
  output: z.object({
    tags: z.array(TagZ),
  }),
  http: { method: 'GET', path: '/tags' },
  graphql: [{ type: 'Query', field: 'tags', pick: 'tags' }],
});
