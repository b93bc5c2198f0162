import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { BranchgraphError } from '../../../model/errors.js';
import { defineOperation } from '../../operation.js';

/**
 * Deliver a dead letter again (admin): its body and delivery id, to its hook as registered now, with
 * a fresh count of attempts. The letter is removed once its delivery is queued; a delivery that
 * fails again becomes a new dead letter. A hook removed since cannot be redelivered to.
 */
export const redeliverHookDeadLetter = defineOperation({
  name: 'redeliverHookDeadLetter',
  summary: 'Deliver a dead letter again (admin).',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z.object({ id: IdZ.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a dead letter id') }).strict(),
  async run(service, { id }, ctx): Promise<{ redelivered: string; delivery: string }> {
    const letter = await service.graph.hooks.deadLetter(id, ctx.signal);
    const hook = await service.graph.hooks.get(letter.hook, ctx.signal).catch((e: unknown) => {
      if (e instanceof BranchgraphError && e.code === 'not_found')
        throw new BranchgraphError('not_found', `hook ${letter.hook} of dead letter ${id} was removed; nothing to deliver to`, {
          details: { key: letter.hook },
        });
      throw e;
    });
    service.hooks.redeliver(hook, letter);
    await service.graph.hooks.deleteDeadLetters([id], ctx.signal);
    return { redelivered: id, delivery: letter.delivery };
  },
  output: z.object({
    redelivered: IdZ,
    delivery: z.string(),
  }),
  http: { method: 'POST', path: '/hooks/dead-letters/{id}/redeliver' },
  graphql: [{ type: 'Mutation', field: 'redeliverHookDeadLetter' }],
});
