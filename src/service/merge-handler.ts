/**
 * The merge handler, once, for merges, cherry-picks and reverts on every
 * transport. The ask is normalised here into its spec (merge/merge-spec.ts):
 * every merge entering over HTTP (REST or GraphQL) is capped at width one
 * whatever the request or configuration asks; embedded callers, the CLI and
 * GQT may choose 1, 2 or 4. The caller's abort signal (a disconnected
 * client) is the merge's abort signal. A keyed request goes through
 * idempotent-merge.ts first.
 */
import { BranchgraphError } from '../model/errors.js';
import { mergeBranches, mergeSpec, type MergeAsk, type MergeSpec } from '../merge/merge.js';
import type { Commit } from '../graph/manifest.js';
import { commitDto, type MergeResultDto } from './dtos.js';
import type { BranchgraphService } from './service.js';
import type { RequestContext } from './request-context.js';
import { protectionPass } from './protection-pass.js';
import { MERGE_PHASES, PhaseTimer } from '../model/phase-timer.js';
import { inSpan, phaseSpans } from './tracing.js';

/** The request with this service's defaults: its configured width, HTTP's cap of one, its memory budget, the caller as actor. */
export function servedMergeRequest(
  service: BranchgraphService,
  a: MergeAsk & { bypassProtection?: boolean },
  ctx: RequestContext,
): MergeSpec {
  const { defaultWidth, budgetBytes } = service.opts;
  const { bypassProtection, ...ask } = a;
  const pass = ask.protection ?? protectionPass(ctx, bypassProtection);
  return mergeSpec(
    { ...ask, actor: ctx.actor, ...(pass !== undefined ? { protection: pass } : {}) },
    { width: defaultWidth, maxWidth: ctx.transport === 'http' ? 1 : undefined, budgetBytes },
  );
}

/** Run one normalised merge under the service's gauges, metrics, progress and log. */
export async function runMerge(
  service: BranchgraphService,
  spec: MergeSpec,
  on: { ctx: RequestContext; idempotency?: Commit['idempotency'] },
): Promise<MergeResultDto> {
  const { ctx } = on;
  const log = ctx.log?.child({ merge: { source: spec.source, into: spec.into } });
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  service.metrics.mergesInFlight++;
  try {
    const attributes = {
      'branchgraph.merge.source': spec.source,
      'branchgraph.merge.into': spec.into,
      'branchgraph.merge.dry_run': spec.dryRun,
    };
    return await service.tracked({ kind: 'merge', branch: spec.into, source: spec.source, log }, ctx, (progress) =>
      inSpan(`merge ${spec.apply}`, { attributes }, async (span) => {
        const timer = new PhaseTimer(MERGE_PHASES, phaseSpans('merge'));
        const env = { signal: ctx.signal, gauges: service.metrics.gauges, progress, idempotency: on.idempotency, timer };
        const result = await mergeBranches(service.graph.ports, spec, env);
        span.setAttribute('branchgraph.merge.outcome', result.status === 'success' ? result.outcome : 'conflicts');
        const outcome = result.status === 'success' ? result.outcome : 'conflicts';
        service.metrics.recordMerge(outcome, seconds(), result.metrics);
        if (result.status === 'success' && result.commit !== null) service.compactor.touched(spec.into);
        if (result.status === 'success' && result.branchDeleted) service.catchUps.forget(spec.source);
        log?.info(
          {
            outcome,
            commit: result.status === 'success' && result.commit !== null ? result.commit.id : null,
            sourceHead: result.sourceHead,
            targetHead: result.targetHead,
            dryRun: spec.dryRun,
            conflicts: result.status === 'conflicts' ? result.report.total : 0,
            width: { effective: spec.width, max: result.metrics.maxWidth, fallbacks: result.metrics.fallbacks.length },
            phasesMs: result.metrics.phasesMs,
            storeCalls: result.metrics.storeCalls.total.calls,
            attempts: result.metrics.attempts,
          },
          'merge finished',
        );
        return result.status === 'success' ? { ...result, commit: result.commit === null ? null : commitDto(result.commit) } : result;
      }),
    );
  } catch (e) {
    const code = e instanceof BranchgraphError ? e.code : 'internal';
    service.metrics.recordMerge(code === 'aborted' ? 'aborted' : 'error', seconds(), undefined);
    if (code === 'aborted') log?.warn({ outcome: 'aborted' }, 'merge aborted by the client; preparation drained, nothing published');
    else log?.warn({ outcome: 'error', code }, 'merge failed');
    throw e;
  } finally {
    service.metrics.mergesInFlight--;
  }
}
