/** Open a request: its first revision is computed before anything is stored, so a request for a branch that does not exist is refused whole. */
import { BranchgraphError } from '../../model/errors.js';
import type { MergeRequestDoc } from '../../model/merge-request.js';
import type { RequestContext } from '../request-context.js';
import type { RequestHeads } from './request-heads.js';
import type { ReviewPorts } from './review-ports.js';
import { prepareRevision, withRevision } from './revising.js';

export async function openRequest(
  ports: ReviewPorts,
  input: { source: string; target: string; title: string; description: string },
  ctx: RequestContext,
): Promise<{ doc: MergeRequestDoc; heads: RequestHeads | undefined }> {
  if (input.source === input.target)
    throw new BranchgraphError('invalid_input', 'a request merges one branch into another', {
      issues: [{ path: 'target', message: 'same as the source' }],
    });
  const time = ports.now();
  const draft = {
    ...input,
    author: ports.actor(ctx),
    state: 'open' as const,
    createdAt: time,
    updatedAt: time,
    revisions: [],
    reviews: [],
  };
  const prepared = await prepareRevision(ports, { ...draft, format: 1, id: '', seq: 0 }, ctx);
  const { revisions } = withRevision({ ...draft, format: 1, id: '', seq: 0 }, prepared);
  const doc = await ports.requests.create({ ...draft, revisions }, ctx.signal);
  ports.checks.start(doc, ctx);
  return { doc, heads: prepared.heads };
}
