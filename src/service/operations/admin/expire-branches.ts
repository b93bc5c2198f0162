import { z } from 'zod';
import { defineOperation } from '../../operation.js';

/**
 * Run the branch expiry sweep now (service/branch-expiry.ts), as a server does every
 * `BRANCH_EXPIRY_INTERVAL_MS`: delete every branch past its expiry that is not protected and that
 * no open merge request holds, and say which expired ones are held and by what.
 */
export const expireBranches = defineOperation({
  name: 'expireBranches',
  summary: 'Delete the branches past their expiry now (the server also does it every minute); open merge requests hold theirs.',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z.object({}).strict(),
  async run(service, _input, ctx) {
    return service.expiry.sweep(ctx.signal);
  },
  output: z
    .object({
      expired: z.array(z.string()).describe('The branches deleted, each a `branch_expired` event in the feed.'),
      held: z
        .array(z.object({ branch: z.string(), request: z.string() }))
        .describe(
          'Expired branches an open merge request holds (as source or target); deleted by the first sweep after it is merged or closed.',
        ),
    })
    .meta({ id: 'ExpirySweep' }),
  http: { method: 'POST', path: '/maintenance/expire-branches' },
  graphql: [{ type: 'Mutation', field: 'expireBranches' }],
});
