import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, labelText, ownerName, refOrMain, timeInput } from '../../inputs.js';
import type { BranchDto } from '../../dtos.js';
import { BranchZ } from '../../results/branch.js';
import { BranchgraphError } from '../../../model/errors.js';
import type { BranchTraits } from '../../../graph/branch-record.js';
import type { RequestContext } from '../../request-context.js';
import { withinBranchQuota } from '../../branch-quota.js';

/** The longest a branch may be given to live by `ttlSeconds`: ten years. */
const MAX_TTL_SECONDS = 10 * 366 * 24 * 3600;

/**
 * A branch at any ref (main's head by default); it shares its parent's data and copies nothing.
 * An agent's branch is usually throw-away: `ttlSeconds` (or `expiresAt`) lets the maintenance
 * sweep delete it (service/branch-expiry.ts), and `owner` and `labels` let listings find it.
 */
export const createBranch = defineOperation({
  name: 'createBranch',
  summary: 'Create a branch at a ref (default main); it copies nothing. It may expire, and carry an owner and labels.',
  role: 'write',
  access: ({ name, from }) => ({ reads: [from], writes: [name] }),
  input: z
    .object({
      name: branchName,
      from: refOrMain,
      ttlSeconds: z
        .number()
        .int()
        .min(1)
        .max(MAX_TTL_SECONDS)
        .optional()
        .describe('Delete the branch this many seconds from now (the maintenance sweep does it).'),
      expiresAt: z.string().max(64).optional().describe('Delete the branch at this RFC 3339 time; give this or ttlSeconds.'),
      owner: ownerName.optional(),
      labels: z.array(labelText).max(32).optional(),
    })
    .strict(),
  async run(service, input, ctx): Promise<BranchDto> {
    const { name, from } = input;
    const traits = branchTraits(input, { now: service.graph.clock(), ctx });
    const r = await withinBranchQuota(service.graph, { owner: traits.owner, ctx }, () =>
      service.graph.createBranch(name, from, { signal: ctx.signal, actor: ctx.actor, traits }),
    );
    return service.branchDto({ name, head: r.head.manifest.commit, rec: r.record }, ctx);
  },
  output: BranchZ,
  http: { method: 'POST', path: '/branches', status: 201 },
  graphql: [{ type: 'Mutation', field: 'createBranch' }],
  mcp: [
    {
      tool: 'branch_create',
      description:
        'Create a branch from a ref (main by default). It copies nothing, so make one per task: write there, then merge_preview and merge it back (or merge_request_open when the target is protected). Give ttlSeconds so a throw-away branch deletes itself (an hour: 3600), and labels to find it again. Returns the branch with its head commit and expiry.',
    },
  ],
});

/** A new branch's expiry, owner and labels from the request: the owner is the caller unless named. */
function branchTraits(
  input: { ttlSeconds?: number | undefined; expiresAt?: string | undefined; owner?: string | undefined; labels?: string[] | undefined },
  at: { now: number; ctx: RequestContext },
): BranchTraits {
  if (input.ttlSeconds !== undefined && input.expiresAt !== undefined)
    throw new BranchgraphError('invalid_input', 'give ttlSeconds or expiresAt, not both', {
      issues: [{ path: 'expiresAt', message: 'ttlSeconds is given too' }],
    });
  let expires: number | undefined;
  if (input.ttlSeconds !== undefined) expires = at.now + input.ttlSeconds * 1000;
  if (input.expiresAt !== undefined) {
    const parsed = timeInput.safeParse(input.expiresAt);
    if (!parsed.success || parsed.data <= at.now)
      throw new BranchgraphError(
        'invalid_input',
        `expiresAt must be an RFC 3339 time in the future, not ${JSON.stringify(input.expiresAt)}`,
        {
          issues: [{ path: 'expiresAt', message: 'an RFC 3339 time in the future' }],
        },
      );
    expires = parsed.data;
  }
  const owner = input.owner ?? at.ctx.actor;
  const labels = input.labels === undefined ? [] : [...new Set(input.labels)].sort();
  return {
    ...(expires !== undefined ? { expiresAt: new Date(expires).toISOString() } : {}),
    ...(owner !== undefined ? { owner } : {}),
    ...(labels.length > 0 ? { labels } : {}),
  };
}
