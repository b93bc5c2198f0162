/**
 * A request as clients see it: the stored request, whether it may merge
 * now, and whether its latest revision is current. An action answers with
 * the heads it already read; a plain read reads them (an open request's
 * only).
 */
import { mergeability, type Mergeability, type MergeRequestDoc } from '../../model/merge-request.js';
import type { RequestContext } from '../request-context.js';
import type { BranchgraphService } from '../service.js';
import { readHeads, type RequestHeads } from './request-heads.js';
import { reviewPorts } from './review-ports.js';

export type MergeRequestDto = Omit<MergeRequestDoc, 'format' | 'seq'> & { version: number; mergeability: Mergeability };

export async function requestDto(
  service: BranchgraphService,
  at: { doc: MergeRequestDoc; heads?: RequestHeads | undefined },
  ctx: RequestContext,
): Promise<MergeRequestDto> {
  const { doc } = at;
  // A merged or closed request cannot merge whatever the branches say: no need to read them.
  const heads = doc.state !== 'open' ? undefined : (at.heads ?? (await readHeads(reviewPorts(service), doc, ctx.signal)));
  const { format: _f, seq, ...rest } = doc;
  return { ...rest, version: seq, mergeability: mergeability(doc, { heads, rule: heads?.rule }) };
}
