import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { ownerName, timeInput } from '../../inputs.js';
import { ROLES } from '../../auth.js';
import { BranchgraphError } from '../../../model/errors.js';
import { TokenZ } from '../../results/token.js';
import { tokenDto } from './token-dto.js';

/** A name pattern of a scope: branch-name characters, with `*` for any run and `?` for one. */
const pattern = z
  .string()
  .regex(/^[A-Za-z0-9._\-/*?@]{1,200}$/, "1-200 of letters, digits, '.', '_', '-', '/', '@', and '*' or '?' as wildcards");
const patterns = z.array(pattern).max(64);

/**
 * Create a managed token (service/managed-tokens.ts): its role and its scope, the graphs and
 * branches it may touch (model/token-scope.ts), kept hashed in the store so every replica honours
 * it at once. The answer holds the token's secret text, shown this once. Only an admin token
 * without a scope creates tokens, so no token can mint one wider than itself.
 */
export const createToken = defineOperation({
  name: 'createToken',
  summary: 'Create a token with a role and a scope of graphs and branches; its secret is in this answer only.',
  role: 'admin',
  access: () => ({ graph: 'write', unscoped: true }),
  input: z
    .object({
      name: ownerName.describe('Who uses it: commits record it as their actor, and it owns the branches it creates.'),
      role: z.enum(ROLES).meta({ title: 'Role' }),
      graphs: patterns.optional().describe('Graph name patterns it reaches (`default` is the root graph); every graph when left out.'),
      read: patterns.optional().describe('Branch name patterns it reads, besides those it writes; every branch when left out.'),
      write: patterns
        .optional()
        .describe('Branch name patterns it creates, changes, merges into and deletes (`agent/alice/*`); every branch when left out.'),
      maxBranches: z.number().int().min(1).max(1_000_000).optional().describe('The most live branches it may own at once.'),
      expiresAt: z.string().max(64).optional().describe('When it stops working (RFC 3339).'),
    })
    .strict(),
  async run(service, { expiresAt, ...spec }, ctx) {
    let expires: string | undefined;
    if (expiresAt !== undefined) {
      const at = timeInput.safeParse(expiresAt);
      if (!at.success || at.data <= service.graph.clock())
        throw new BranchgraphError('invalid_input', 'expiresAt must be an RFC 3339 time in the future', {
          issues: [{ path: 'expiresAt', message: 'an RFC 3339 time in the future' }],
        });
      expires = new Date(at.data).toISOString();
    }
    const { record, token } = await service.tokens.create(
      { ...spec, ...(expires !== undefined ? { expiresAt: expires } : {}) },
      { actor: ctx.actor ?? service.graph.actor, signal: ctx.signal },
    );
    return { token, record: tokenDto(record) };
  },
  output: z
    .object({
      token: z.string().describe('The bearer token: send it as `Authorization: Bearer <token>`. It is not shown again.'),
      record: TokenZ,
    })
    .meta({ id: 'CreatedToken' }),
  http: { method: 'POST', path: '/tokens', status: 201 },
  graphql: [{ type: 'Mutation', field: 'createToken' }],
});
