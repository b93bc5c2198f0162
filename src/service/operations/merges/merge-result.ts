/**
 * How a merge's result travels: HTTP answers 409 with the conflict report
 * (a result, not an error) and marks an idempotent replay in a header; the
 * GraphQL `MergeResult` union takes each outcome as its own type, with a
 * summary of the metrics.
 */
import { z } from 'zod';
import type { HttpBinding } from '../../operation.js';
import { ConflictZ, MergeConflictsZ, MergeSuccessZ } from '../../results/merge.js';

/** A merge's result: a success, or its exact conflicts (answered with 409 over HTTP). */
export const MergeResultZ = z.union([MergeSuccessZ, MergeConflictsZ]);

/** A merge's metrics as GraphQL sums them up: the store calls in total, the fallbacks counted. */
const MergeSummaryZ = z
  .object({
    phasesMs: z.record(z.string(), z.number()),
    totalMs: z.number(),
    storeCalls: z.number().int(),
    requestedWidth: z.number().int(),
    maxWidth: z.number().int(),
    fallbacks: z.number().int(),
    attempts: z.number().int(),
  })
  .meta({ title: 'MergeSummary' });

/** The `MergeResult` union: each outcome its own type, the conflict report's fields on the conflicts' type. */
export const GraphqlMergeResultZ = z
  .union([
    MergeSuccessZ.omit({ status: true, metrics: true, replayed: true })
      .extend({
        replayed: z.boolean().describe('True when this is the stored result of an earlier request with the same idempotency key.'),
        summary: MergeSummaryZ,
      })
      .meta({ title: 'MergeSuccess' }),
    MergeConflictsZ.omit({ status: true, metrics: true, report: true })
      .extend({
        total: z.number().int(),
        counts: MergeConflictsZ.shape.report.shape.counts.meta({ title: 'ConflictCounts' }),
        conflicts: z.array(ConflictZ),
        nextCursor: z.string().nullable(),
        summary: MergeSummaryZ,
      })
      .meta({ title: 'MergeConflicts' }),
  ])
  .meta({ title: 'MergeResult' });
import type { MergeResultDto } from '../../dtos.js';

export const MERGE_HTTP: Pick<HttpBinding<MergeResultDto>, 'status' | 'resultStatuses' | 'replyHeaders'> = {
  status: (r) => (r.status === 'success' ? 200 : 409),
  resultStatuses: [409],
  replyHeaders: (r): Record<string, string> => (r.status === 'success' && r.replayed === true ? { 'idempotent-replayed': 'true' } : {}),
};

function mergeSummary(m: MergeResultDto['metrics']) {
  return {
    phasesMs: m.phasesMs,
    totalMs: m.totalMs,
    storeCalls: m.storeCalls.total.calls,
    requestedWidth: m.requestedWidth,
    maxWidth: m.maxWidth,
    fallbacks: m.fallbacks.length,
    attempts: m.attempts,
  };
}

type Summary = ReturnType<typeof mergeSummary>;

/** The metrics a GraphQL summary carries, as a result holds them: what it does not carry is zero or empty. */
function metricsOf(s: Summary): MergeResultDto['metrics'] {
  const none = { calls: 0, bytesRead: 0, bytesWritten: 0 };
  return {
    phasesMs: s.phasesMs,
    totalMs: s.totalMs,
    storeCalls: { total: { ...none, calls: s.storeCalls } },
    requestedWidth: s.requestedWidth,
    maxWidth: s.maxWidth,
    fallbacks: [],
    attempts: s.attempts,
    tablesPrepared: 0,
    tablesAdopted: 0,
  } as unknown as MergeResultDto['metrics'];
}

/** A MergeResult union value read back as the merge's result (a GraphQL client's side of graphqlMergeResult). */
export function receiveMergeResult(value: unknown): MergeResultDto {
  const { __typename, summary, ...v } = value as Record<string, unknown> & { __typename: string; summary: Summary };
  if (__typename === 'MergeSuccess') {
    const { replayed, ...rest } = v;
    return { status: 'success', ...rest, ...(replayed === true ? { replayed: true } : {}), metrics: metricsOf(summary) } as MergeResultDto;
  }
  const { total, counts, conflicts, nextCursor, ...heads } = v;
  return {
    status: 'conflicts',
    ...heads,
    report: { total, counts, items: conflicts, nextCursor },
    metrics: metricsOf(summary),
  } as MergeResultDto;
}

/** A merge result as the MergeResult union shows it. */
export function graphqlMergeResult(r: MergeResultDto): unknown {
  if (r.status === 'success') return { __typename: 'MergeSuccess', ...r, replayed: r.replayed === true, summary: mergeSummary(r.metrics) };
  return {
    __typename: 'MergeConflicts',
    sourceHead: r.sourceHead,
    targetHead: r.targetHead,
    base: r.base,
    total: r.report.total,
    counts: r.report.counts,
    conflicts: r.report.items,
    nextCursor: r.report.nextCursor,
    summary: mergeSummary(r.metrics),
  };
}
