/**
 * Idempotent merges. With an Idempotency-Key, a retry of the same request
 * returns the first result (marked `replayed`) instead of merging again;
 * the same key with a different request is refused. Requests with one key
 * run one at a time in this process; across processes the key's record
 * (graph/idempotency.ts) and the key recorded on the merge commit decide:
 * an attempt whose record was lost is found by its commit among the
 * target's recent ones, and an attempt that lost a race to another
 * process's attempt with the same key answers with that one's result.
 */
import { emptyCounts } from '../store/counting-store.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { canonicalJson, contentHash } from '../model/canonical.js';
import { MERGE_PHASES } from '../model/phase-timer.js';
import type { Commit } from '../graph/manifest.js';
import type { IdempotencyRecord } from '../graph/idempotency.js';
import { commitLog } from '../graph/commit-log.js';
import type { MergeMetrics, MergeSpec } from '../merge/merge.js';
import { commitDto, type MergeResultDto } from './dtos.js';
import { runMerge } from './merge-handler.js';
import type { BranchgraphService } from './service.js';
import type { RequestContext } from './request-context.js';

/** How far back a retry looks for the merge commit of an attempt whose record was lost. */
const IDEMPOTENT_COMMIT_SEARCH = 200;

interface Key {
  keyHash: string;
  fingerprint: string;
}

/**
 * The merge under a key (`idempotencyKeyHash` of a client's key, or a merge request revision's):
 * the first result on a retry, one attempt at a time per key in this process.
 */
export async function idempotentMerge(
  service: BranchgraphService,
  spec: MergeSpec,
  on: { keyHash: string; ctx: RequestContext },
): Promise<MergeResultDto> {
  const { keyHash } = on;
  const key = { keyHash, fingerprint: mergeFingerprint(spec) };
  const running = service.keyedMerges;
  const job = (running.get(keyHash) ?? Promise.resolve()).catch(() => undefined).then(() => mergeOnce(service, spec, { key, ctx: on.ctx }));
  running.set(keyHash, job);
  try {
    return await job;
  } finally {
    if (running.get(keyHash) === job) running.delete(keyHash);
  }
}

async function mergeOnce(service: BranchgraphService, spec: MergeSpec, on: { key: Key; ctx: RequestContext }): Promise<MergeResultDto> {
  const { key, ctx } = on;
  const records = service.graph.idempotency;
  const found = await records.find(key.keyHash, ctx.signal);
  if (found.record !== undefined) return replayedRecord(found.record, key);
  if (found.started) {
    // An earlier attempt may have published and lost its record: its commit carries the key.
    const landed = await landedWithKey(service, spec, on);
    if (landed !== undefined) return landed;
  }
  let result: MergeResultDto;
  try {
    result = await runMerge(service, spec, { ctx, idempotency: key });
  } catch (e) {
    // A concurrent attempt (another process) that published first moves the target under this one.
    const landed = isBranchgraphError(e, 'aborted') ? undefined : await landedWithKey(service, spec, on);
    if (landed !== undefined) return landed;
    throw e;
  }
  if (result.status === 'success' && result.commit !== null) {
    const saved = records.save({ ...key, result }, ctx.signal);
    await saved.catch((e: unknown) => ctx.log?.warn({ err: e }, 'idempotency record not written; a retry finds the merge by its commit'));
    return result;
  }
  // Not a commit of ours ("already up to date", most often): an attempt with this key running at
  // the same time in another process may have landed the merge first. Then that is the result.
  return (await landedWithKey(service, spec, on)) ?? result;
}

/** The replay of a merge with this key that already landed: its record, else its commit among the target's recent ones. */
async function landedWithKey(
  service: BranchgraphService,
  spec: MergeSpec,
  on: { key: Key; ctx: RequestContext },
): Promise<MergeResultDto | undefined> {
  const { key, ctx } = on;
  const landed = await landedUnderKey(service, { into: spec.into, keyHash: key.keyHash }, ctx);
  if (landed === undefined) return undefined;
  refuseOtherRequest(landed.fingerprint, key.fingerprint);
  return landed.result;
}

/**
 * What a merge under `keyHash` into `into` landed, if one did: its record, else its commit among the
 * target's recent ones.
 */
export async function landedUnderKey(
  service: BranchgraphService,
  a: { into: string; keyHash: string },
  ctx: RequestContext,
): Promise<{ fingerprint: string; result: MergeResultDto } | undefined> {
  const found = await service.graph.idempotency.find(a.keyHash, ctx.signal);
  if (found.record !== undefined) return { fingerprint: found.record.fingerprint, result: replayOf(found.record) };
  const head = await service.snapshot({ branch: a.into }, ctx);
  const recent = await commitLog(service.graph.ports.manifests, head, { limit: IDEMPOTENT_COMMIT_SEARCH, signal: ctx.signal });
  const landed = recent.find((c) => c.idempotency?.keyHash === a.keyHash);
  if (landed === undefined) return undefined;
  return { fingerprint: landed.idempotency?.fingerprint ?? '', result: replayedFromCommit(landed) };
}

/** What makes two keyed requests the same merge (width, budget and conflict paging do not change what lands). */
function mergeFingerprint(spec: MergeSpec): string {
  const { width: _w, budgetBytes: _b, conflictLimit: _l, conflictCursor: _c, actor: _a, apply: _k, ...rest } = spec;
  const { deleteBranch, dryRun, ...named } = rest;
  // Defaults spelled out or left out are one request: only what differs from them is fingerprinted.
  return contentHash(canonicalJson({ ...named, ...(deleteBranch ? { deleteBranch } : {}), ...(dryRun ? { dryRun } : {}) }));
}

/** The same Idempotency-Key with a different request is refused: the key names one request. */
function refuseOtherRequest(stored: string, fingerprint: string): void {
  if (stored === fingerprint) return;
  throw new BranchgraphError(
    'invalid_input',
    'this Idempotency-Key was used for a different merge request; use a new key for a new request',
    {
      issues: [{ path: 'idempotencyKey', message: 'already used for another request' }],
    },
  );
}

function replayedRecord(record: IdempotencyRecord, key: Key): MergeResultDto {
  refuseOtherRequest(record.fingerprint, key.fingerprint);
  return replayOf(record);
}

/** The first result as its record keeps it, marked replayed. */
function replayOf(record: IdempotencyRecord): MergeResultDto {
  return { ...(record.result as Extract<MergeResultDto, { status: 'success' }>), replayed: true };
}

/** The first result, rebuilt from its commit when its record was lost (tables and metrics are not kept there). */
function replayedFromCommit(c: Commit): MergeResultDto {
  const metrics: MergeMetrics = {
    phasesMs: Object.fromEntries(MERGE_PHASES.map((p) => [p, 0])) as MergeMetrics['phasesMs'],
    totalMs: 0,
    storeCalls: emptyCounts(),
    dependentRoundTrips: 0,
    requestedWidth: 1,
    maxWidth: 0,
    fallbacks: [],
    tablesPrepared: 0,
    tablesAdopted: 0,
    attempts: 0,
  };
  return {
    status: 'success',
    outcome: c.kind === 'fast_forward' ? 'fast_forward' : 'merged',
    dryRun: false,
    commit: commitDto(c),
    sourceHead: c.parentIds[1] ?? '',
    targetHead: c.parentIds[0] ?? '',
    base: null,
    tables: [],
    resolved: c.resolved ?? null,
    branchDeleted: false,
    branchDeleteError: null,
    metrics,
    replayed: true,
  };
}
