import { z } from 'zod';
import { defineOperation } from '../../operation.js';

/**
 * Who the caller acts as, with what role and which branches: what a page shows in its header and
 * an agent checks before it plans its writes. It reads nothing stored, so every token may ask.
 */
export const whoami = defineOperation({
  name: 'whoami',
  summary: 'Who the caller acts as: the identity commits record, the role, and the graphs and branches the token reaches.',
  role: 'read',
  access: () => 'filtered',
  input: z.object({}).strict(),
  async run(_service, _input, ctx) {
    const scope = ctx.scope;
    return {
      actor: ctx.actor ?? null,
      role: ctx.role ?? 'admin',
      graphs: scope?.graphs !== undefined ? [...scope.graphs] : null,
      read: scope?.read !== undefined ? [...scope.read] : null,
      write: scope?.write !== undefined ? [...scope.write] : null,
      maxBranches: scope?.maxBranches ?? null,
    };
  },
  output: z.object({
    actor: z.string().nullable().describe('The identity commits made by this caller record; null when the token names none.'),
    role: z.enum(['read', 'write', 'admin']).meta({ title: 'Role' }),
    graphs: z.array(z.string()).nullable().describe('Graph name patterns the token reaches; null: every graph.'),
    read: z.array(z.string()).nullable().describe('Branch name patterns it reads (besides those it writes); null: every branch.'),
    write: z.array(z.string()).nullable().describe('Branch name patterns it may change; null: every branch.'),
    maxBranches: z.number().int().nullable().describe('The most live branches it may own at once; null: no limit.'),
  }),
  http: { method: 'GET', path: '/whoami' },
  graphql: [{ type: 'Query', field: 'whoami' }],
  mcp: [
    {
      tool: 'whoami',
      description:
        'Who you act as: the identity your commits record, your role (read, write or admin), and the branch name patterns your token may read and write. Call it before planning writes to learn which branches you may change.',
      idempotent: true,
    },
  ],
});
