import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { TokenZ } from '../../results/token.js';
import { tokenDto } from './token-dto.js';

/** Every managed token, newest first, without secrets. */
export const listTokens = defineOperation({
  name: 'listTokens',
  summary: 'Every managed token with its scope, newest first; secrets are never listed.',
  role: 'admin',
  access: () => ({ graph: 'write', unscoped: true }),
  input: z.object({}).strict(),
  async run(service, _input, ctx) {
    return { tokens: (await service.tokens.list(ctx.signal)).map(tokenDto) };
  },
  output: z.object({ tokens: z.array(TokenZ) }),
  http: { method: 'GET', path: '/tokens' },
  graphql: [{ type: 'Query', field: 'tokens', pick: 'tokens' }],
});
