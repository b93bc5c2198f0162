import { z } from 'zod';
import { pushTo } from '../../../graph/sync.js';
import { defineOperation } from '../../operation.js';
import { branchName, commitId } from '../../inputs.js';
import { pushDto, withRemote } from '../../remote-sync.js';
import { PushResultZ } from '../../results/remote.js';

/**
 * Push a branch to a remote: the objects it lacks, then its branch moved, fast-forward only unless
 * `forceWithLease` names the head it must still have. On a server the move is a change like any
 * other there: its protection, its scopes, its events.
 */
export const pushBranch = defineOperation({
  name: 'pushBranch',
  summary:
    "Push a branch to a remote: the objects it lacks, then its branch moved (fast-forward only, or with a lease on the remote's head).",
  role: 'write',
  access: ({ branch }) => ({ reads: [{ branch }] }),
  input: z
    .object({
      remote: z.string().min(1).max(64),
      branch: branchName,
      destination: branchName.optional().describe('The branch moved on the remote (the same name by default).'),
      forceWithLease: z
        .union([commitId, z.literal('')])
        .optional()
        .describe("Move the remote branch even if this push does not contain its head, as long as its head is this commit ('' for none)."),
    })
    .strict(),
  async run(service, { remote, branch, destination, forceWithLease }, ctx) {
    const r = await withRemote(service, { remote, kind: 'push', branch, ctx }, (peer, progress) =>
      pushTo(service.graph, {
        remote,
        peer,
        branch,
        ...(destination !== undefined ? { destination } : {}),
        ...(forceWithLease !== undefined ? { forceWithLease } : {}),
        actor: ctx.actor ?? service.graph.actor,
        signal: ctx.signal,
        progress,
      }),
    );
    return pushDto(r);
  },
  output: PushResultZ,
  http: { method: 'POST', path: '/remotes/{remote}/push' },
  graphql: [{ type: 'Mutation', field: 'pushBranch' }],
  mcp: [
    {
      tool: 'remote_push',
      description:
        "Push a branch to a remote, to hand your work to another copy of the graph (the team's server). Fast-forward only: if the remote's branch moved, fetch with remote_fetch, merge remote:<remote>/<branch> in, and push again. A protected branch there refuses a push: push your own branch and open a merge request there instead.",
    },
  ],
});
