/**
 * What merge requests do: open, revise, review, save resolutions, merge
 * and close, over the stored requests (graph/merge-requests.ts) and the
 * merge handler, with the rules in model/merge-request.ts.
 *
 * A revision is computed, never guessed: both heads are read, then the
 * merge runs as a dry run pinned to them with the saved resolutions, and
 * its outcome, conflicts and per-table counts are the revision's preview.
 * Reviews and merges revise first, so a review is tied to the heads it was
 * given and a merge checks the approvals of exactly what it merges.
 *
 * Merging is safe to retry across a crash: the request first records the
 * revision it is merging, the merge runs under an idempotency key derived
 * from that revision (service/idempotent-merge.ts), and only then is the
 * request marked merged. A retry finds the recorded revision and replays
 * the same merge, whose stored result says what landed.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { canonicalJson } from '../model/canonical.js';
import type { ProtectionRule } from '../model/branch-protection.js';
import { headState } from '../graph/head-state.js';
import { requestRevisionKeyHash } from '../graph/idempotency.js';
import { MAX_PUBLICATION_MS } from '../graph/gc.js';
import {
  changeFingerprint,
  mergeability,
  pinnedBy,
  pinsHeads,
  MAX_REVIEWS,
  MAX_REVISIONS,
  type Mergeability,
  type MergeRequestDoc,
  type Revision,
  type Verdict,
} from '../model/merge-request.js';
import type { MergeResolutions } from '../merge/resolutions.js';
import type { MergeResultDto } from './dtos.js';
import { idempotentMerge, landedUnderKey } from './idempotent-merge.js';
import { runMerge, servedMergeRequest } from './merge-handler.js';
import { runRequestChecks, startRequestChecks } from './request-checks.js';
import type { BranchgraphService } from './service.js';
import type { RequestContext } from './request-context.js';

/** A request as clients see it: the stored request, whether it may merge now, and whether its latest revision is current. */
export type MergeRequestDto = Omit<MergeRequestDoc, 'format' | 'seq'> & { version: number; mergeability: Mergeability };

/** A merged or closed request takes no reviews, resolutions or merges. */
function refuseUnlessOpen(doc: MergeRequestDoc): void {
  if (doc.state === 'open') return;
  const how = doc.merged !== undefined ? ` as ${doc.merged.commit}` : '';
  throw new BranchgraphError('request_not_mergeable', `merge request ${doc.id} is ${doc.state}${how}`, {
    details: { reasons: [`the request is ${doc.state}`] },
  });
}

const now = (service: BranchgraphService): string => new Date(service.graph.clock()).toISOString();
const who = (service: BranchgraphService, ctx: RequestContext): string => ctx.actor ?? service.graph.actor;

/** Both branches' heads now, with their content states; undefined when either is gone. */
async function headsOf(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext) {
  try {
    const [source, target] = await Promise.all([
      service.graph.branchHead(doc.source, ctx.signal),
      service.graph.branchHead(doc.target, ctx.signal),
    ]);
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

export async function requestDto(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext): Promise<MergeRequestDto> {
  // A merged or closed request cannot merge whatever the branches say: no need to read them.
  const heads = doc.state === 'open' ? await headsOf(service, doc, ctx) : undefined;
  const { format: _f, seq, ...rest } = doc;
  const at = { heads, rule: heads?.rule };
  return { ...rest, version: seq, mergeability: mergeability(doc, at) };
}

/** The revision the branches make now: both heads, their merge base, and the pinned dry run's preview with the saved resolutions. */
async function revisionNow(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext): Promise<Omit<Revision, 'n'>> {
  for (let attempt = 0; ; attempt++) {
    const heads = await headsOf(service, doc, ctx);
    if (heads === undefined)
      throw new BranchgraphError('not_found', `branch ${doc.source} or ${doc.target} no longer exists`, {
        details: { branch: doc.source },
      });
    const ask = {
      source: doc.source,
      into: doc.target,
      dryRun: true,
      expectedSourceState: heads.sourceState,
      expectedTargetHead: heads.target,
      conflictLimit: 1,
      ...(doc.resolutions !== undefined ? { resolutions: doc.resolutions as MergeResolutions } : {}),
    };
    let r: MergeResultDto;
    try {
      r = await runMerge(service, servedMergeRequest(service, ask, ctx), { ctx });
    } catch (e) {
      // A branch moved between reading its head and the preview: read both again.
      if (isBranchgraphError(e, 'head_moved') && attempt < 5) continue;
      throw e;
    }
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
    const fingerprint = changeFingerprint({
      source: heads.sourceState,
      base: r.base,
      resolutions: doc.resolutions,
      decided: decided?.digest ?? null,
    });
    return {
      sourceHead: heads.source,
      targetHead: heads.target,
      sourceState: heads.sourceState,
      targetState: heads.targetState,
      base: r.base,
      ...(doc.resolutions !== undefined ? { resolutions: doc.resolutions } : {}),
      decidedDigest: decided?.digest ?? null,
      fingerprint,
      time: now(service),
      preview,
    };
  }
}

const sameResolutions = (a: unknown, b: unknown): boolean => canonicalJson(a ?? null) === canonicalJson(b ?? null);

/** `doc` with a new revision when the heads or the resolutions changed since its latest; undefined when none did. */
async function revised(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext): Promise<MergeRequestDoc | undefined> {
  if (doc.state !== 'open') return undefined;
  const latest = doc.revisions.at(-1);
  // Unmoved heads and unchanged resolutions make the same merge: no preview to run again.
  const heads = await headsOf(service, doc, ctx);
  if (latest !== undefined && heads !== undefined && pinsHeads(latest, heads) && sameResolutions(latest.resolutions, doc.resolutions))
    return undefined;
  const rev = await revisionNow(service, doc, ctx);
  if (
    latest !== undefined &&
    pinsHeads(latest, pinnedBy(rev)) &&
    latest.fingerprint === rev.fingerprint &&
    sameResolutions(latest.resolutions, rev.resolutions)
  )
    return undefined;
  if (doc.revisions.length >= MAX_REVISIONS)
    throw new BranchgraphError('payload_too_large', `merge request ${doc.id} has ${MAX_REVISIONS} revisions: close it and open another`);
  return { ...doc, revisions: [...doc.revisions, { n: (latest?.n ?? 0) + 1, ...rev }] };
}

/** Open a request and compute its first revision. */
export async function openRequest(
  service: BranchgraphService,
  input: { source: string; target: string; title: string; description: string },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  if (input.source === input.target)
    throw new BranchgraphError('invalid_input', 'a request merges one branch into another', {
      issues: [{ path: 'target', message: 'same as the source' }],
    });
  const time = now(service);
  const draft = {
    ...input,
    author: who(service, ctx),
    state: 'open' as const,
    createdAt: time,
    updatedAt: time,
    revisions: [],
    reviews: [],
  };
  // The first revision is computed before anything is stored: a request for a branch that does not exist is refused whole.
  const first = await revisionNow(service, { ...draft, format: 1, id: '', seq: 0 }, ctx);
  return checking(service, await service.graph.requests.create({ ...draft, revisions: [{ n: 1, ...first }] }, ctx.signal), ctx);
}

/** `doc`, with the checks of its latest revision started in the background (request-checks.ts). */
function checking(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext): MergeRequestDoc {
  startRequestChecks(service, doc, ctx);
  return doc;
}

export async function reviseRequest(service: BranchgraphService, id: string, ctx: RequestContext): Promise<MergeRequestDoc> {
  return checking(service, await service.graph.requests.update(id, (doc) => revised(service, doc, ctx), ctx.signal), ctx);
}

/** Revise the request, then run every check on its latest revision again and wait for the answers. */
export async function recheckRequest(service: BranchgraphService, id: string, ctx: RequestContext): Promise<MergeRequestDoc> {
  const doc = await service.graph.requests.update(id, (d) => revised(service, d, ctx), ctx.signal);
  refuseUnlessOpen(doc);
  return runRequestChecks(service, { doc, again: true }, ctx);
}

/** Record a review on the request's current revision (revising first). The author may comment, not approve or request changes. */
export async function reviewRequest(
  service: BranchgraphService,
  a: { id: string; verdict: Verdict; body: string; on?: { table: string; key?: string; property?: string } },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  const author = who(service, ctx);
  const stored = await service.graph.requests.update(
    a.id,
    async (stored) => {
      refuseUnlessOpen(stored);
      if (a.verdict !== 'comment' && author === stored.author)
        throw new BranchgraphError('forbidden', 'the author of a request cannot approve it or request changes on it');
      if (stored.reviews.length >= MAX_REVIEWS)
        throw new BranchgraphError('payload_too_large', `merge request ${a.id} has ${MAX_REVIEWS} reviews`);
      const doc = (await revised(service, stored, ctx)) ?? stored;
      const revision = doc.revisions.at(-1)?.n ?? 1;
      const review = {
        n: doc.reviews.length + 1,
        verdict: a.verdict,
        body: a.body,
        author,
        revision,
        time: now(service),
        ...(a.on ? { on: a.on } : {}),
      };
      return { ...doc, reviews: [...doc.reviews, review] };
    },
    ctx.signal,
  );
  return checking(service, stored, ctx);
}

/**
 * A request whose merge was started and not recorded, settled so it may change: refused when the merge
 * landed (the request is marked merged) or may still land; given back with `merging` cleared when it
 * can no longer land (a publication refuses once its snapshots are MAX_PUBLICATION_MS old).
 */
async function settledForChange(service: BranchgraphService, id: string, ctx: RequestContext): Promise<void> {
  const doc = await service.graph.requests.get(id, ctx.signal);
  if (doc.merging === undefined) return;
  if ((await landedRevision(service, doc, ctx)) !== undefined) {
    refuseUnlessOpen(await service.graph.requests.get(id, ctx.signal));
  }
  const since = Date.parse(doc.mergingSince ?? '1970-01-01T00:00:00Z');
  const until = since + MERGING_SETTLES_MS;
  if (service.graph.clock() < until)
    throw new BranchgraphError(
      'publish_contention',
      `merge request ${id} is merging revision ${doc.merging}: merge it again to finish that merge, or retry after ${new Date(until).toISOString()}`,
      { details: { branch: doc.target } },
    );
  await clearMerging(service, { id, revision: doc.merging }, ctx);
}

/** How long after a request merge starts it may still land: a publication's longest life, twice over for clock drift. */
const MERGING_SETTLES_MS = 2 * MAX_PUBLICATION_MS;

/** Refuse a change to a request whose merge is under way (settledForChange decides first). */
function refuseWhileMerging(doc: MergeRequestDoc): void {
  if (doc.merging === undefined) return;
  throw new BranchgraphError('publish_contention', `merge request ${doc.id} is merging revision ${doc.merging}; retry`, {
    details: { branch: doc.target },
  });
}

/** Save the resolutions the merge will apply (checked by a preview now) and revise. */
export async function setResolutions(
  service: BranchgraphService,
  a: { id: string; resolutions: MergeResolutions | null },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  await settledForChange(service, a.id, ctx);
  const stored = await service.graph.requests.update(
    a.id,
    async (stored) => {
      refuseUnlessOpen(stored);
      refuseWhileMerging(stored);
      const { resolutions: _old, ...rest } = stored;
      const doc = a.resolutions === null ? rest : { ...rest, resolutions: a.resolutions };
      return (await revised(service, doc, ctx)) ?? doc;
    },
    ctx.signal,
  );
  return checking(service, stored, ctx);
}

export async function closeRequest(service: BranchgraphService, id: string, ctx: RequestContext): Promise<MergeRequestDoc> {
  await settledForChange(service, id, ctx);
  return service.graph.requests.update(
    id,
    async (doc) => {
      if (doc.state === 'closed') return undefined;
      refuseUnlessOpen(doc);
      refuseWhileMerging(doc);
      return { ...doc, state: 'closed', closed: { by: who(service, ctx), time: now(service) } };
    },
    ctx.signal,
  );
}

/**
 * The merge of one revision, exactly as it was reviewed: the source's content state it pinned, the
 * resolutions stored in it, and the set of conflicts they decided. The target may move meanwhile
 * (the merge plans again on it, as any merge does) unless the rule makes every head move stale.
 */
function revisionMerge(
  service: BranchgraphService,
  a: {
    doc: MergeRequestDoc;
    rev: Revision;
    rule: ProtectionRule | undefined;
    message?: string | undefined;
    deleteBranch?: boolean | undefined;
  },
  ctx: RequestContext,
) {
  const { doc, rev } = a;
  const pinTarget = a.rule?.staleApprovals === 'head_move' || rev.targetState === undefined;
  const ask = {
    source: doc.source,
    into: doc.target,
    ...(rev.sourceState !== undefined ? { expectedSourceState: rev.sourceState } : { expectedSourceHead: rev.sourceHead }),
    ...(pinTarget ? { expectedTargetHead: rev.targetHead } : {}),
    // A revision from before decided sets were recorded decides at most what it decided then: none new.
    ...(rev.decidedDigest !== undefined ? { expectedDecided: rev.decidedDigest } : {}),
    message: a.message ?? `merge request ${doc.id}: ${doc.title}`,
    deleteBranch: a.deleteBranch === true,
    protection: { request: doc.id },
    ...(rev.resolutions !== undefined ? { resolutions: rev.resolutions as MergeResolutions } : {}),
  };
  return idempotentMerge(service, servedMergeRequest(service, ask, ctx), { keyHash: requestRevisionKeyHash(doc.id, rev.n), ctx });
}

/** The merge of `merging`'s revision if it landed (after an attempt still running in this process ends). */
async function landedRevision(service: BranchgraphService, doc: MergeRequestDoc, ctx: RequestContext) {
  const n = doc.merging as number;
  const keyHash = requestRevisionKeyHash(doc.id, n);
  await service.keyedMerges.get(keyHash)?.catch(() => undefined);
  const landed = await landedUnderKey(service, { into: doc.target, keyHash }, ctx);
  if (landed === undefined || landed.result.status !== 'success' || landed.result.commit === null) return undefined;
  const request = await markMerged(service, { id: doc.id, rev: n, commit: landed.result.commit.id }, ctx);
  return { request, result: landed.result };
}

/** Forget a started merge that did not land (only if `revision` is still the one merging). */
function clearMerging(service: BranchgraphService, a: { id: string; revision: number }, ctx: RequestContext): Promise<MergeRequestDoc> {
  return service.graph.requests.update(
    a.id,
    async (d) => {
      if (d.merging !== a.revision) return undefined;
      const { merging: _m, mergingSince: _s, ...rest } = d;
      return rest;
    },
    ctx.signal,
  );
}

/** Record that `rev` merged as `commit`. */
function markMerged(
  service: BranchgraphService,
  a: { id: string; rev: number; commit: string },
  ctx: RequestContext,
): Promise<MergeRequestDoc> {
  return service.graph.requests.update(
    a.id,
    async (d) => {
      if (d.state === 'merged') return undefined;
      const { merging: _m, mergingSince: _s, ...rest } = d;
      return { ...rest, state: 'merged', merged: { commit: a.commit, by: who(service, ctx), time: now(service), revision: a.rev } };
    },
    ctx.signal,
  );
}

/** Target moves a request's merge re-plans through before giving up (each re-checks mergeability). */
const MERGE_ROUNDS = 20;

/**
 * Merge the request's current revision if it is mergeable (`request_not_mergeable` with the reasons
 * otherwise), as a merge commit that records the request, then mark the request merged. A merge
 * started earlier and not recorded is settled first: if it landed, that is the answer; if not, the
 * request is revised and checked again like any other, so nothing unreviewed can land through a
 * retry. A target that moves under the merge makes it revise, re-check and merge again.
 */
export async function mergeRequestNow(
  service: BranchgraphService,
  a: { id: string; message?: string | undefined; deleteBranch?: boolean | undefined },
  ctx: RequestContext,
): Promise<{ request: MergeRequestDoc; result: MergeResultDto }> {
  const stored = await service.graph.requests.get(a.id, ctx.signal);
  refuseUnlessOpen(stored);
  if (stored.merging !== undefined) {
    const landed = await landedRevision(service, stored, ctx);
    if (landed !== undefined) return landed;
    await clearMerging(service, { id: a.id, revision: stored.merging }, ctx);
  }
  for (let round = 1; ; round++) {
    const { doc, rev, rule } = await mergeableRevision(service, a.id, ctx);
    await service.graph.requests.update(
      a.id,
      async (d) => {
        refuseWhileMerging(d);
        if (d.revisions.at(-1)?.n !== rev.n)
          throw new BranchgraphError('publish_contention', `merge request ${a.id} was revised meanwhile; retry`);
        return { ...d, merging: rev.n, mergingSince: now(service) };
      },
      ctx.signal,
    );
    let result: MergeResultDto;
    try {
      result = await revisionMerge(service, { ...a, doc, rev, rule }, ctx);
    } catch (e) {
      // Refused before publishing: nothing landed, so the request is free again; a moved head is revised and re-checked.
      if (isBranchgraphError(e, 'head_moved') || isBranchgraphError(e, 'resolution_stale')) {
        await clearMerging(service, { id: a.id, revision: rev.n }, ctx);
        if (round < MERGE_ROUNDS && isBranchgraphError(e, 'head_moved')) continue;
      }
      throw e;
    }
    if (result.status === 'success' && result.commit !== null)
      return { request: await markMerged(service, { id: a.id, rev: rev.n, commit: result.commit.id }, ctx), result };
    // Conflicts the target brought since, or nothing left to merge: nothing landed.
    return { request: await clearMerging(service, { id: a.id, revision: rev.n }, ctx), result };
  }
}

/** The request revised now, refused unless it may merge: its latest revision and the target's rule. */
async function mergeableRevision(service: BranchgraphService, id: string, ctx: RequestContext) {
  let doc = await service.graph.requests.update(
    id,
    async (d) => {
      refuseUnlessOpen(d);
      return revised(service, d, ctx);
    },
    ctx.signal,
  );
  const latest = doc.revisions.at(-1) as Revision;
  const head = await service.graph.branchHead(doc.target, ctx.signal);
  const rule = head.branch?.protection;
  // A required check without an answer yet is asked now: the merge is decided on answers.
  if (rule?.requiredChecks.some((c) => latest.checks?.[c] === undefined) === true) doc = await runRequestChecks(service, { doc }, ctx);
  // Revising just read both heads: they are the latest revision's.
  const m = mergeability(doc, { heads: pinnedBy(latest), rule });
  if (!m.mergeable)
    throw new BranchgraphError('request_not_mergeable', `merge request ${id} cannot merge: ${m.reasons.join('; ')}`, {
      details: { reasons: m.reasons },
    });
  return { doc, rev: doc.revisions.at(-1) as Revision, rule };
}
