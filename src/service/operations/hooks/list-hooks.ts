import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { hookDto, type HookDto } from './hook-dto.js';
import { HookZ } from '../../results/hook.js';

/** Every hook registered for the graph (admin), oldest first, with this server's delivery counts. */
export const listHooks = defineOperation({
  name: 'listHooks',
  summary: 'Registered webhooks and checks, with delivery counts (admin).',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z.object({}).strict(),
  async run(service, _input, ctx): Promise<{ hooks: HookDto[] }> {
    const hooks = await service.graph.hooks.list(ctx.signal, { fresh: true });
    return { hooks: hooks.map((h) => hookDto(service, h)) };
  },
  output: z.object({
    hooks: z.array(HookZ),
  }),
  http: { method: 'GET', path: '/hooks' },
  graphql: [{ type: 'Query', field: 'hooks', pick: 'hooks' }],
});
