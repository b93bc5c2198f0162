/**
 * A revision's preview: the merge of the request run as a dry run pinned
 * to the heads the action read, with the saved resolutions, and what it
 * would do (its outcome, conflicts and per-table counts). A revision is
 * computed, never guessed. The dry run refuses with `head_moved` when a
 * branch moved after the read; the caller reads again.
 */
import { changeFingerprint, type MergeRequestDoc, type Revision } from '../../model/merge-request.js';
import type { MergeResolutions } from '../../merge/resolutions.js';
import type { RequestContext } from '../request-context.js';
import type { RequestHeads } from './request-heads.js';
import type { ReviewPorts } from './review-ports.js';

export async function previewRevision(
  ports: ReviewPorts,
  at: { doc: MergeRequestDoc; heads: RequestHeads },
  ctx: RequestContext,
): Promise<Omit<Revision, 'n'>> {
  const { doc, heads } = at;
  const ask = {
    source: doc.source,
    into: doc.target,
    dryRun: true,
    expectedSourceState: heads.sourceState,
    expectedTargetHead: heads.target,
    conflictLimit: 1,
    ...(doc.resolutions !== undefined ? { resolutions: doc.resolutions as MergeResolutions } : {}),
  };
  const r = await ports.merge(ports.spec(ask, ctx), ctx);
  const decided = r.status === 'success' ? r.resolved : null;
  const preview =
    r.status === 'conflicts'
      ? { outcome: 'conflicts' as const, conflicts: r.report.total, counts: r.report.counts as Record<string, number>, tables: [] }
      : {
          outcome: r.outcome === 'fast_forward' || r.outcome === 'already_up_to_date' ? r.outcome : ('merged' as const),
          conflicts: 0,
          decided: decided?.total ?? 0,
          counts: {},
          tables: r.tables.map((t) => ({
            table: t.table,
            action: t.action,
            sourceChanges: t.sourceChanges,
            targetChanges: t.targetChanges,
          })),
        };
  return {
    sourceHead: heads.source,
    targetHead: heads.target,
    sourceState: heads.sourceState,
    targetState: heads.targetState,
    base: r.base,
    ...(doc.resolutions !== undefined ? { resolutions: doc.resolutions } : {}),
    decidedDigest: decided?.digest ?? null,
    fingerprint: changeFingerprint({
      source: heads.sourceState,
      base: r.base,
      resolutions: doc.resolutions,
      decided: decided?.digest ?? null,
    }),
    time: ports.now(),
    preview,
  };
}
