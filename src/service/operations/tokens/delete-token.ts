import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { IdZ } from '../../results/scalars.js';
import { TokenZ } from '../../results/token.js';
import { tokenDto } from './token-dto.js';

/** Revoke a managed token: every replica refuses it from its next request on. */
export const deleteToken = defineOperation({
  name: 'deleteToken',
  summary: 'Revoke a managed token; every server refuses it from its next request.',
  role: 'admin',
  access: () => ({ graph: 'write', unscoped: true }),
  input: z.object({ id: IdZ.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a token id') }).strict(),
  async run(service, { id }, ctx) {
    return { revoked: tokenDto(await service.tokens.revoke(id, ctx.signal)) };
  },
  output: z.object({ revoked: TokenZ }),
  http: { method: 'DELETE', path: '/tokens/{id}' },
  graphql: [{ type: 'Mutation', field: 'deleteToken', pick: 'revoked' }],
});
