import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName } from '../../inputs.js';
import { walStatus as readWalStatus } from '../../../wal/wal-status.js';
import type { WalStatusDto } from '../../dtos.js';
import { WalStatusZ } from '../../results/wal.js';

export const walStatus = defineOperation({
  name: 'walStatus',
  summary: "A branch's WAL: per-shard watermarks, pending generations, this process's last catch-up.",
  role: 'read',
  access: ({ branch }) => ({ reads: [{ branch }] }),
  input: z.object({ branch: branchName }).strict(),
  async run(service, { branch }, ctx): Promise<WalStatusDto> {
    const status = await readWalStatus(service.graph.ports.heads, branch, ctx.signal);
    return { ...status, catchUp: { running: service.catchUps.isRunning(branch), last: service.catchUps.lastRun(branch) } };
  },
  output: WalStatusZ,
  http: { method: 'GET', path: '/branches/{id}/wal', params: { id: 'branch' } },
  graphql: [{ type: 'Query', field: 'walStatus' }],
});
