/**
 * What the review workflow needs of the rest of the service, and nothing
 * more: the stored requests, branch heads, the clock and the caller, a
 * merge (a dry run, or one under an idempotency key), what a key landed,
 * and the pre-merge checks. The workflow's files take these ports, never
 * the service, so this list is everything a merge request can touch.
 */
import type { MergeRequests } from '../../graph/merge-requests.js';
import type { Snapshot } from '../../graph/snapshot.js';
import type { MergeAsk, MergeSpec } from '../../merge/merge.js';
import type { MergeRequestDoc } from '../../model/merge-request.js';
import type { MergeResultDto } from '../dtos.js';
import { idempotentMerge, landedUnderKey } from '../idempotent-merge.js';
import { runMerge, servedMergeRequest } from '../merge-handler.js';
import type { RequestContext } from '../request-context.js';
import type { BranchgraphService } from '../service.js';
import { runRequestChecks, startRequestChecks } from './request-checks.js';

export interface ReviewPorts {
  requests: Pick<MergeRequests, 'get' | 'create' | 'update' | 'replace'>;
  branchHead(name: string, signal?: AbortSignal): Promise<Snapshot>;
  /** The service clock's time, as requests record it. */
  now(): string;
  /** Who the caller is: the token's identity, or the server's actor. */
  actor(ctx: RequestContext): string;
  /** A merge spec with the service's defaults, for this caller. */
  spec(ask: MergeAsk, ctx: RequestContext): MergeSpec;
  /** Run a merge (the workflow's are dry runs) and answer its result. */
  merge(spec: MergeSpec, ctx: RequestContext): Promise<MergeResultDto>;
  /** Run a merge under an idempotency key: a retry replays what the first landed. */
  keyedMerge(spec: MergeSpec, keyHash: string, ctx: RequestContext): Promise<MergeResultDto>;
  /**
   * Run `work` with this process's other publications on `branch` held until it ends (the work's own
   * go ahead): it must not wait for another request's publication on the branch.
   */
  holdingWriters<T>(branch: string, work: () => Promise<T>, signal?: AbortSignal): Promise<T>;
  /** What landed under a key, if anything, after any merge under it still running in this process ends. */
  landed(a: { into: string; keyHash: string }, ctx: RequestContext): Promise<{ result: MergeResultDto } | undefined>;
  checks: {
    /** Start the checks of a new latest revision in the background. */
    start(doc: MergeRequestDoc, ctx: RequestContext): void;
    /** Run the checks (those without an answer, or all `again`) and wait: the request as stored after. */
    run(a: { doc: MergeRequestDoc; again?: boolean }, ctx: RequestContext): Promise<MergeRequestDoc>;
  };
}

const made = new WeakMap<BranchgraphService, ReviewPorts>();

/** The service's ports for the review workflow (one set per service). */
export function reviewPorts(service: BranchgraphService): ReviewPorts {
  const had = made.get(service);
  if (had !== undefined) return had;
  const ports: ReviewPorts = {
    requests: service.graph.requests,
    branchHead: (name, signal) => service.graph.branchHead(name, signal),
    now: () => new Date(service.graph.clock()).toISOString(),
    actor: (ctx) => ctx.actor ?? service.graph.actor,
    spec: (ask, ctx) => servedMergeRequest(service, ask, ctx),
    merge: (spec, ctx) => runMerge(service, spec, { ctx }),
    keyedMerge: (spec, keyHash, ctx) => idempotentMerge(service, spec, { keyHash, ctx }),
    holdingWriters: (branch, work, signal) => service.graph.holdingWriters(branch, work, signal),
    landed: async (a, ctx) => {
      await service.keyedMerges.get(a.keyHash)?.catch(() => undefined);
      return landedUnderKey(service, a, ctx);
    },
    checks: {
      start: (doc, ctx) => startRequestChecks(service, doc, ctx),
      run: (a, ctx) => runRequestChecks(service, a, ctx),
    },
  };
  made.set(service, ports);
  return ports;
}
