import { z } from 'zod';
import { fetchFrom } from '../../../graph/sync.js';
import { defineOperation } from '../../operation.js';
import { fetchDto, withRemote } from '../../remote-sync.js';
import { FetchResultZ } from '../../results/remote.js';

/**
 * Fetch a remote: the objects this graph lacks of its branches and tags, then its tracking refs
 * (`remote:<remote>/<branch>`) and the tags this graph does not have. Changes no branch. A long
 * operation, listed with its progress and cancelled by abort.
 */
export const fetchRemote = defineOperation({
  name: 'fetchRemote',
  summary: "Fetch a remote's branches and tags: the objects missing here, then its tracking refs (remote:<remote>/<branch>).",
  role: 'write',
  access: () => ({ graph: 'write' }),
  input: z.object({ remote: z.string().min(1).max(64), prune: z.boolean().optional() }).strict(),
  async run(service, { remote, prune }, ctx) {
    const r = await withRemote(service, { remote, kind: 'fetch', branch: remote, ctx }, (peer, progress) =>
      fetchFrom(service.graph, { remote, peer, prune: prune === true, signal: ctx.signal, progress }),
    );
    return fetchDto(r);
  },
  output: FetchResultZ,
  http: { method: 'POST', path: '/remotes/{remote}/fetch' },
  graphql: [{ type: 'Mutation', field: 'fetchRemote' }],
  mcp: [
    {
      tool: 'remote_fetch',
      description:
        'Fetch a remote (another copy of this graph: a server, a bucket, a directory) so its branches read here as remote:<remote>/<branch> (in read_rows, diff, log, merge_preview). Moves no branch of this graph; merge a remote branch in with merge, source remote:<remote>/<branch>.',
    },
  ],
});
