/**
 * Sync between two copies of a graph: fetch, push and clone, each a
 * transfer (transfer.ts) followed by a ref move at the end.
 *
 * - Fetch reads the remote's branch heads and tags, sends what this store
 *   lacks of them, then moves this store's tracking refs
 *   (`remote:<remote>/<branch>`) and adopts the tags it does not have. A
 *   tag this store holds under the same name for another commit is kept
 *   and reported: tags never move. With `prune`, tracking refs of
 *   branches the remote no longer has are forgotten.
 * - Push sends what the remote lacks of one branch's head and moves the
 *   remote's branch with the remote's own operations: a creation, or a
 *   reset from the head it had. Fast-forward only: the pushed commit must
 *   contain the remote's head; `forceWithLease` instead requires the
 *   remote's head to be exactly the commit given. A push racing another
 *   meets it at the reset's expected head, and one of them is refused as
 *   `non_fast_forward`. Protection holds: a protected branch refuses
 *   resets, so a push to it is refused as a direct write is.
 * - Clone is a fetch into a store with no graph (or one an interrupted clone
 *   of the same remote left), then a branch per tracking ref. Each branch
 *   starts a lineage of the destination's own at the fetched head, so the
 *   two copies never write the same manifest key: a key both hold holds
 *   the same object, which is what lets a transfer stop at a held manifest.
 *
 * Pending WAL rows are not commits and stay where they were acknowledged;
 * the next fetch or push after the remote folds them carries them.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { Graph } from './graph.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { Snapshot } from './snapshot.js';
import type { TagRecord } from './tags.js';
import type { TransferProgress, TransferReport } from './transfer.js';

/** How a sync runs: objects sent at once, cancellation, progress. */
export interface SyncOptions {
  width?: number | undefined;
  signal?: AbortSignal | undefined;
  progress?: TransferProgress | undefined;
}

export interface FetchReport {
  remote: string;
  /** Each remote branch whose tracking ref moved: where it was (absent when new) and where it is. */
  updated: { branch: string; from?: string; to: string }[];
  /** Tracking refs forgotten because the remote no longer has their branch (with `prune`). */
  pruned: string[];
  /** Tags adopted, and tags kept because this store names another commit so. */
  tags: { fetched: string[]; kept: string[] };
  transfer: TransferReport;
}

export interface PushReport {
  remote: string;
  branch: string;
  destination: string;
  /** `created`, `fast_forward`, `forced`, or `up_to_date` when the remote already had the commit. */
  outcome: 'created' | 'fast_forward' | 'forced' | 'up_to_date';
  /** The remote branch's head before the push (absent when it did not exist), and after. */
  from?: string;
  to: string;
  transfer: TransferReport;
}

const NOTHING_SENT: TransferReport = { objects: 0, bytes: 0, present: 0, manifests: 0 };

export async function fetchFrom(local: Graph, a: SyncOptions & { remote: string; peer: Graph; prune?: boolean }): Promise<FetchReport> {
  const { remote, peer, signal } = a;
  await local.remotes.get(remote, signal);
  const [theirs, tracked, tags] = await Promise.all([
    peer.listBranches({ signal }),
    local.remotes.trackingRefs(remote, signal),
    peer.listTags(signal),
  ]);
  const adopt: TagRecord[] = [];
  const kept: string[] = [];
  for (const t of tags.tags) {
    const mine = await local.tag(t.name, signal).catch((e: unknown) => {
      if (isBranchgraphError(e, 'not_found')) return undefined;
      throw e;
    });
    if (mine === undefined) adopt.push(t);
    else if (mine.commit !== t.commit) kept.push(t.name);
  }
  const plan = await peer.planTransfer({
    wants: [...theirs.branches.map((b) => b.head), ...adopt.map((t) => t.manifest)],
    haves: tracked.map((t) => t.manifest),
    holds: (r) => local.holds(r, signal),
    signal,
  });
  const transfer = await peer.sendTransfer({ plan, destination: local.store, width: a.width, signal, progress: a.progress });
  // Refs move last: everything they name is here now.
  const was = new Map(tracked.map((t) => [t.branch, t]));
  const updated: FetchReport['updated'] = [];
  for (const b of theirs.branches) {
    const before = was.get(b.record.name);
    if (before !== undefined && sameRef(before.manifest, b.head)) continue;
    await local.remotes.track({ remote, branch: b.record.name, commit: b.commit.id, manifest: b.head, signal });
    updated.push({ branch: b.record.name, ...(before !== undefined ? { from: before.commit } : {}), to: b.commit.id });
  }
  for (const t of adopt) await local.adoptTag(t, signal);
  const pruned: string[] = [];
  if (a.prune === true) {
    const live = new Set(theirs.branches.map((b) => b.record.name));
    for (const t of tracked)
      if (!live.has(t.branch)) {
        await local.remotes.prune(t, signal);
        pruned.push(t.branch);
      }
  }
  return { remote, updated, pruned, tags: { fetched: adopt.map((t) => t.name), kept }, transfer };
}

export async function pushTo(
  local: Graph,
  a: SyncOptions & { remote: string; peer: Graph; branch: string; destination?: string; forceWithLease?: string; actor: string },
): Promise<PushReport> {
  const { remote, peer, branch, signal } = a;
  const destination = a.destination ?? branch;
  await local.remotes.get(remote, signal);
  const ours = await local.branchHead(branch, signal, { withoutPending: true });
  const theirs = await peer.branchHead(destination, signal, { withoutPending: true }).catch((e: unknown) => {
    if (isBranchgraphError(e, 'not_found')) return undefined;
    throw e;
  });
  const to = ours.manifest.commit.id;
  const from = theirs?.manifest.commit.id;
  const report = { remote, branch, destination, ...(from !== undefined ? { from } : {}), to };
  if (a.forceWithLease !== undefined && (from ?? '') !== a.forceWithLease)
    throw new BranchgraphError('head_moved', `${remote} has ${destination} at ${from ?? 'nothing'}, not ${a.forceWithLease}`, {
      details: { branch: destination, expected: a.forceWithLease, ...(from !== undefined ? { actual: from } : {}) },
    });
  if (from === to) {
    await local.remotes.track({ remote, branch: destination, commit: to, manifest: ours.ref, signal });
    return { ...report, outcome: 'up_to_date', transfer: NOTHING_SENT };
  }
  if (a.forceWithLease === undefined && theirs !== undefined && !contains(ours.manifest, theirs)) throw nonFastForward(destination, from, to);
  const plan = await local.planTransfer({
    wants: [ours.ref],
    haves: theirs !== undefined ? [theirs.ref] : [],
    holds: (r) => peer.holds(r, signal),
    signal,
  });
  const transfer = await local.sendTransfer({ plan, destination: peer.store, width: a.width, signal, progress: a.progress });
  // The ref moves last, through the remote's own branch operations, which check protection and
  // refuse a head that moved since it was read: a racing push lands first, or this one does.
  try {
    if (theirs === undefined) await peer.createBranch(destination, { commit: to }, { signal, actor: a.actor });
    else await peer.resetBranch(destination, { commit: to }, { signal, actor: a.actor, expectedHead: theirs.manifest.commit.id });
  } catch (e) {
    if (a.forceWithLease === undefined && (isBranchgraphError(e, 'head_moved') || isBranchgraphError(e, 'branch_exists')))
      throw nonFastForward(destination, from, to);
    throw e;
  }
  await local.remotes.track({ remote, branch: destination, commit: to, manifest: ours.ref, signal });
  const outcome = theirs === undefined ? 'created' : a.forceWithLease !== undefined && !contains(ours.manifest, theirs) ? 'forced' : 'fast_forward';
  return { ...report, outcome, transfer };
}

/** Whether `ours` contains the head `theirs`: its commit, as published or as re-laid. */
function contains(ours: Manifest, theirs: Snapshot): boolean {
  return ours.ancestry.contains(theirs.ref) || (theirs.manifest.layout !== undefined && ours.ancestry.contains(theirs.manifest.layout.of));
}

function sameRef(x: ManifestRef, y: ManifestRef): boolean {
  return x.lineage === y.lineage && x.version === y.version;
}

function nonFastForward(branch: string, head: string | undefined, pushed: string): BranchgraphError {
  return new BranchgraphError(
    'non_fast_forward',
    `${branch} is at ${head ?? 'a commit created meanwhile'} there, which ${pushed} does not contain: fetch, merge, and push again (or push with a lease on the head you mean to replace)`,
    { details: { branch, ...(head !== undefined ? { head } : {}), pushed } },
  );
}

export interface CloneReport extends FetchReport {
  /** The branches made here, one per remote branch this store did not have. */
  branches: string[];
}

/**
 * Clone `peer` into `local`: add the remote (`origin` unless named), fetch it, and start a branch at
 * every tracking ref this store has no branch for. Run again after an interruption, it finishes.
 * A store holding another graph (branches, and no remote of that name at that URL) is refused.
 */
export async function cloneFrom(
  local: Graph,
  a: SyncOptions & { remote: string; url: string; peer: Graph; actor: string },
): Promise<CloneReport> {
  const { remote, url, signal } = a;
  const existing = await local.remotes.get(remote, signal).catch((e: unknown) => {
    if (isBranchgraphError(e, 'not_found')) return undefined;
    throw e;
  });
  if (existing === undefined) {
    const mine = await local.listBranches({ limit: 1, signal });
    if (mine.branches.length > 0 || mine.damaged.length > 0)
      throw new BranchgraphError('invalid_input', 'the destination already holds a graph: clone into an empty store', {
        issues: [{ path: 'destination', message: 'not empty' }],
      });
    await local.remotes.set({ name: remote, url, actor: a.actor, signal });
  } else if (existing.url !== url)
    throw new BranchgraphError('invalid_input', `the destination is a clone of ${existing.url}, not ${url}`, {
      issues: [{ path: 'destination', message: 'a clone of another remote' }],
    });
  const fetched = await fetchFrom(local, a);
  const branches: string[] = [];
  for (const t of await local.remotes.trackingRefs(remote, signal)) {
    try {
      await local.createBranch(t.branch, { path: { base: { remote, remoteBranch: t.branch }, steps: [] } }, { signal, actor: a.actor });
      branches.push(t.branch);
    } catch (e) {
      // Made by the run this one resumes.
      if (!isBranchgraphError(e, 'branch_exists')) throw e;
    }
  }
  return { ...fetched, branches };
}
