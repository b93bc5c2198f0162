import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { RemoteZ } from '../../results/remote.js';
import { remoteDto } from './remote-dto.js';

/** Every remote, with its branches as last fetched. */
export const listRemotes = defineOperation({
  name: 'listRemotes',
  summary: 'Every remote, with its branches as last fetched.',
  role: 'read',
  access: () => ({ graph: 'read' }),
  input: z.object({}).strict(),
  async run(service, _input, ctx) {
    const remotes = await service.graph.remotes.list(ctx.signal);
    return {
      remotes: await Promise.all(remotes.map(async (r) => remoteDto(r, await service.graph.remotes.trackingRefs(r.name, ctx.signal)))),
    };
  },
  output: z.object({ remotes: z.array(RemoteZ) }),
  http: { method: 'GET', path: '/remotes' },
  graphql: [{ type: 'Query', field: 'remotes', pick: 'remotes' }],
});
