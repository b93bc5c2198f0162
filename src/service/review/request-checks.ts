/**
 * Pre-merge checks on merge request revisions: every check hook of the
 * graph is asked about each new revision, and its answer is stored on
 * that revision (model/merge-request.ts), where a protected target's
 * `requiredChecks` read it.
 *
 * A new revision starts its checks in the background, so opening or
 * revising a request never waits for a receiver. A merge that finds a
 * required check without a result runs it then and waits (within the
 * hook timeout), so a merge is decided on answers, not on a race with the
 * background run. One revision's checks run once per process at a time:
 * whoever asks second shares the run in flight. Asking again
 * (`runMergeRequestChecks`) runs every check anew, for a check that failed
 * for a reason since fixed.
 */
import type { Hook } from '../../model/hook.js';
import type { MergeRequestDoc, Revision } from '../../model/merge-request.js';
import type { BranchgraphService } from '../service.js';
import type { RequestContext } from '../request-context.js';

/** Check runs in flight, by request and revision. */
const running = new WeakMap<BranchgraphService, Map<string, Promise<MergeRequestDoc>>>();

/**
 * Run the check hooks on `doc`'s latest revision (only those without a result unless `again`) and
 * store their results on it; the request as stored after.
 */
export function runRequestChecks(
  service: BranchgraphService,
  a: { doc: MergeRequestDoc; again?: boolean },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  const rev = a.doc.revisions.at(-1);
  if (rev === undefined || a.doc.state !== 'open') return Promise.resolve(a.doc);
  let runs = running.get(service);
  if (runs === undefined) {
    runs = new Map();
    running.set(service, runs);
  }
  const key = `${a.doc.id}-r${rev.n}${a.again === true ? '-again' : ''}`;
  const inFlight = runs.get(key);
  if (inFlight !== undefined) return inFlight;
  const run = checkRevision(service, { doc: a.doc, rev, again: a.again === true }, ctx).finally(() => runs.delete(key));
  runs.set(key, run);
  return run;
}

async function checkRevision(
  service: BranchgraphService,
  a: { doc: MergeRequestDoc; rev: Revision; again: boolean },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  const { doc, rev } = a;
  const hooks = (await service.graph.hooks.list(ctx.signal)).filter(
    (h): h is Hook & { check: string } => h.kind === 'check' && h.check !== undefined && (a.again || rev.checks?.[h.check] === undefined),
  );
  if (hooks.length === 0) return doc;
  const payload = {
    request: { id: doc.id, title: doc.title, description: doc.description, source: doc.source, target: doc.target, author: doc.author },
    revision: {
      n: rev.n,
      sourceHead: rev.sourceHead,
      targetHead: rev.targetHead,
      base: rev.base,
      fingerprint: rev.fingerprint,
      preview: rev.preview,
    },
  };
  const results = await Promise.all(hooks.map(async (h) => [h.check, await service.hooks.check(h, payload, ctx.signal)] as const));
  return service.graph.requests.update(
    doc.id,
    async (d) => {
      const i = d.revisions.findIndex((r) => r.n === rev.n);
      if (i < 0) return undefined;
      const revisions = [...d.revisions];
      const at = revisions[i] as Revision;
      revisions[i] = { ...at, checks: { ...at.checks, ...Object.fromEntries(results) } };
      return { ...d, revisions };
    },
    ctx.signal,
  );
}

/** Start the checks of a request's new latest revision in the background; the service waits for them when it stops. */
export function startRequestChecks(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext): void {
  const log = ctx.log;
  service.background(
    runRequestChecks(
      service,
      { doc },
      { transport: ctx.transport, signal: service.stopping.signal, ...(ctx.actor ? { actor: ctx.actor } : {}) },
    ).catch((e: unknown) => log?.warn({ err: e, request: doc.id }, 'merge request checks failed to run')),
  );
}
