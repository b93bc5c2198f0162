import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { RemoteZ } from '../../results/remote.js';
import { normalizeRemoteUrl } from '../../sync-peers.js';
import { remoteDto } from './remote-dto.js';

/**
 * Add a remote, or point one at a new URL: a directory, `s3://bucket/prefix`, or a server
 * (`http(s)://host:port[/graphs/NAME]`). Only a token without a scope may: a remote reaches
 * stores and servers past any scope.
 */
export const setRemote = defineOperation({
  name: 'setRemote',
  summary: 'Add a remote, or point one at a new URL: a directory, s3://bucket/prefix or a server (admin, unscoped).',
  role: 'admin',
  access: () => ({ unscoped: true }),
  input: z.object({ name: z.string().min(1).max(64), url: z.string().min(1).max(2048) }).strict(),
  async run(service, { name, url }, ctx) {
    const rec = await service.graph.remotes.set({
      name,
      url: normalizeRemoteUrl(url),
      actor: ctx.actor ?? service.graph.actor,
      signal: ctx.signal,
    });
    return remoteDto(rec, await service.graph.remotes.trackingRefs(name, ctx.signal));
  },
  output: RemoteZ,
  http: { method: 'PUT', path: '/remotes/{name}' },
  graphql: [{ type: 'Mutation', field: 'setRemote' }],
});
