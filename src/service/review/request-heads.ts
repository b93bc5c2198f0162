/**
 * A request's two branch heads as one read gives them: their commits,
 * their content states, and the target's protection rule. Every action
 * reads them once and hands them on: to the preview, to the
 * mergeability check and to the answer.
 */
import { headState } from '../../graph/head-state.js';
import type { ProtectionRule } from '../../model/branch-protection.js';
import { isBranchgraphError } from '../../model/errors.js';
import type { MergeRequestDoc, PinnedHeads } from '../../model/merge-request.js';
import type { ReviewPorts } from './review-ports.js';

export interface RequestHeads extends PinnedHeads {
  sourceState: string;
  targetState: string;
  /** The target's protection rule, if it has one. */
  rule: ProtectionRule | undefined;
}

/** Both branches' heads now (read together); undefined when either is gone. */
export async function readHeads(
  ports: ReviewPorts,
  doc: Pick<MergeRequestDoc, 'source' | 'target'>,
  signal?: AbortSignal,
): Promise<RequestHeads | undefined> {
  try {
    const [source, target] = await Promise.all([ports.branchHead(doc.source, signal), ports.branchHead(doc.target, signal)]);
    return {
      source: source.manifest.commit.id,
      target: target.manifest.commit.id,
      sourceState: headState(source),
      targetState: headState(target),
      rule: target.branch?.protection,
    };
  } catch (e) {
    if (isBranchgraphError(e, 'not_found')) return undefined;
    throw e;
  }
}
