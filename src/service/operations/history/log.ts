import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { refOrMain } from '../../inputs.js';
import { commitLog } from '../../../graph/reads.js';
import { commitDto, type CommitDto } from '../../dtos.js';

/** Commits at a ref, newest first, along first parents and merged sides. */
export const log = defineOperation({
  name: 'log',
  summary: 'Commits at a ref, newest first.',
  role: 'read',
  input: z.object({ at: refOrMain, limit: z.number().int().min(1).max(1000).optional() }).strict(),
  async run(service, { at, limit }, ctx): Promise<{ commits: CommitDto[] }> {
    const snap = await service.snapshot(at, ctx);
    return { commits: (await commitLog(service.graph.ports.manifests, snap, { limit, signal: ctx.signal })).map(commitDto) };
  },
  http: { method: 'GET', path: '/commits' },
  graphql: [{ type: 'Query', field: 'log', result: (r) => r.commits }],
});
