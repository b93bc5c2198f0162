import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { commitId } from '../../inputs.js';
import { commitDto, type CommitDetailDto } from '../../dtos.js';
import { CommitDetailZ } from '../../results/commit.js';

/** One commit with its tables' live row and run counts. */
export const commit = defineOperation({
  name: 'commit',
  summary: 'One commit with its tables.',
  role: 'read',
  access: ({ id }) => ({ reads: [{ commit: id }] }),
  input: z.object({ id: commitId }).strict(),
  async run(service, { id }, ctx): Promise<CommitDetailDto> {
    const snap = await service.graph.commitSnapshot(id, ctx.signal);
    const tables = Object.entries(snap.manifest.tables).map(([name, t]) => ({
      name,
      rows: t.runs.reduce((n, r) => n + r.rows - r.tombstones, 0),
      runs: t.runs.length,
    }));
    return { ...commitDto(snap.manifest.commit), tables };
  },
  output: CommitDetailZ,
  http: { method: 'GET', path: '/commits/{id}' },
  graphql: [{ type: 'Query', field: 'commit' }],
});
