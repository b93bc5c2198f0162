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
 *   contain the remote's head (or that head is a new graph's initial
 *   commit, which holds nothing); `forceWithLease` instead requires the
 *   remote's head to be exactly the commit given. A push racing another
 *   meets it at the reset's expected head, and one of them is refused as
 *   `non_fast_forward`. Protection holds: a protected branch refuses
 *   resets, so a push to it is refused as a direct write is. A push moves
 *   the pusher's tracking ref too, as Git's does.
 * - Clone is a fetch into a store with no graph (or one an interrupted clone
 *   of the same remote left), then a branch per tracking ref. Each branch
 *   starts a lineage of the destination's own at the fetched head, so the
 *   two copies never write the same manifest key: a key both hold holds
 *   the same object.
 *
 * Pending WAL rows are not commits and stay where they were acknowledged;
 * the next fetch or push after the remote folds them carries them (a push
 * onto a branch with pending rows folds them there and is refused).
 */
import type { ProtectionPass } from '../model/branch-protection.js';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { refuseProtected } from './branches.js';
import type { Graph } from './graph.js';
import type { Manifest, ManifestRef } from './manifest.js';
import type { Snapshot } from './snapshot.js';
import type { TagRecord } from './tags.js';
import type { TransferPlan, TransferProgress, TransferReport } from './transfer.js';

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

/** A branch's committed head, as a peer reports it. */
export interface PeerBranch {
  name: string;
  commit: string;
  manifest: ManifestRef;
  /** The head is a new graph's initial commit, holding nothing: any push may replace it. */
  empty?: boolean;
}

/**
 * The other end of a sync: another store's graph (graphPeer below) or a server (over HTTP). It
 * reports its heads, sends what a fetch lacks, and takes a push: objects, then a branch move it
 * checks itself (protection, the head expected, fast-forward unless forced).
 */
export interface SyncPeer {
  heads(signal?: AbortSignal): Promise<{ branches: PeerBranch[]; tags: TagRecord[] }>;
  /** Send `destination` what it lacks of `wants`, given the manifests it `haves`. */
  sendTo(a: SyncOptions & { destination: Graph; wants: ManifestRef[]; haves: ManifestRef[] }): Promise<TransferReport>;
  /** Take `plan`'s objects from `source`, then move `branch` from the head `from` (absent: create it) to `to`. */
  receive(a: SyncOptions & { source: Graph; plan: TransferPlan; move: BranchMove }): Promise<TransferReport>;
  /** Whether the peer holds a manifest (and so its content: not sent again); a peer that cannot say cheaply says no. */
  holds(ref: ManifestRef, signal?: AbortSignal): Promise<boolean>;
}

/** A push's branch move: from the head the pusher saw (absent when the branch did not exist) to the pushed commit. */
export interface BranchMove {
  branch: string;
  from?: string | undefined;
  to: string;
  /** Move even when `to` does not contain `from` (a lease: `from` must still be the head). */
  force: boolean;
  actor: string;
}

/** Another store's graph as a peer. */
export function graphPeer(peer: Graph): SyncPeer {
  return {
    async heads(signal) {
      const [branches, tags] = await Promise.all([peer.listBranches({ signal }), peer.listTags(signal)]);
      return {
        branches: branches.branches.map((b) => ({
          name: b.record.name,
          commit: b.commit.id,
          manifest: b.head,
          ...(isInitial(b.commit) ? { empty: true } : {}),
        })),
        tags: tags.tags,
      };
    },
    async sendTo(a) {
      const { destination, signal } = a;
      const plan = await peer.planTransfer({ wants: a.wants, haves: a.haves, holds: (r) => destination.holds(r, signal), signal });
      return peer.sendTransfer({ plan, destination: destination.store, width: a.width, signal, progress: a.progress });
    },
    async receive(a) {
      const report = await a.source.sendTransfer({
        plan: a.plan,
        destination: peer.store,
        width: a.width,
        signal: a.signal,
        progress: a.progress,
      });
      await moveBranch(peer, a.move, { signal: a.signal });
      return report;
    },
    holds: (ref, signal) => peer.holds(ref, signal),
  };
}

/**
 * Move a branch as a push asks, on the graph that holds it, once the pushed objects are there:
 * create it, or reset it from the head the pusher saw. The commit must contain that head unless
 * forced; a head that moved meanwhile is `non_fast_forward` (`head_moved` under a lease), and a
 * protected branch refuses as it refuses any reset. Rows pending in the branch's WAL there are
 * acknowledged rows the pusher never saw: they are committed, and the push is refused as not a
 * fast-forward, so the next fetch brings them (a lease, which names the head to replace, folds
 * them into the old head and moves on, as a reset does).
 */
export async function moveBranch(
  graph: Graph,
  move: BranchMove,
  opts: { signal?: AbortSignal | undefined; protection?: ProtectionPass | undefined } = {},
): Promise<void> {
  const { branch, from, to, force } = move;
  const { signal } = opts;
  const pushed = await graph.commitSnapshot(to, signal);
  try {
    if (from === undefined) {
      await graph.createBranch(branch, { commit: to }, { signal, actor: move.actor });
      return;
    }
    if (!force) {
      const head = await graph.branchHead(branch, signal, { pendingListedOnly: true });
      // A protected branch refuses before anything is folded on it: a refused push changes nothing.
      refuseProtected(head.branch, 'reset', opts.protection);
      if (head.pending.generations.length > 0) {
        // Acknowledged rows the pusher never saw: committed here, so a fetch brings them, and refused.
        const folded = await graph.foldExactly({
          branch,
          head,
          message: `fold pending WAL generations before a push to ${branch}`,
          signal,
          actor: move.actor,
        });
        throw nonFastForward(branch, folded.manifest.commit.id, to);
      }
      if (head.manifest.commit.id !== from) throw nonFastForward(branch, head.manifest.commit.id, to);
      if (!contains(pushed.manifest, head) && !(isInitial(head.manifest.commit) && Object.keys(head.tables).length === 0))
        throw nonFastForward(branch, from, to);
    }
    await graph.resetBranch(branch, { commit: to }, { signal, actor: move.actor, expectedHead: from, protection: opts.protection });
  } catch (e) {
    if (!force && (isBranchgraphError(e, 'head_moved') || isBranchgraphError(e, 'branch_exists'))) throw nonFastForward(branch, from, to);
    throw e;
  }
}

export async function fetchFrom(local: Graph, a: SyncOptions & { remote: string; peer: SyncPeer; prune?: boolean }): Promise<FetchReport> {
  const { remote, peer, signal } = a;
  await local.remotes.get(remote, signal);
  const [theirs, tracked] = await Promise.all([peer.heads(signal), local.remotes.trackingRefs(remote, signal)]);
  const adopt: TagRecord[] = [];
  const kept: string[] = [];
  for (const t of theirs.tags) {
    const mine = await local.tag(t.name, signal).catch((e: unknown) => {
      if (isBranchgraphError(e, 'not_found')) return undefined;
      throw e;
    });
    if (mine === undefined) adopt.push(t);
    else if (mine.commit !== t.commit) kept.push(t.name);
  }
  const transfer = await peer.sendTo({
    destination: local,
    wants: [...theirs.branches.map((b) => b.manifest), ...adopt.map((t) => t.manifest)],
    haves: tracked.map((t) => t.manifest),
    width: a.width,
    signal,
    progress: a.progress,
  });
  // Refs move last: everything they name is here now.
  const was = new Map(tracked.map((t) => [t.branch, t]));
  const updated: FetchReport['updated'] = [];
  for (const b of theirs.branches) {
    const before = was.get(b.name);
    if (before !== undefined && sameRef(before.manifest, b.manifest)) continue;
    await local.remotes.track({ remote, branch: b.name, commit: b.commit, manifest: b.manifest, signal });
    updated.push({ branch: b.name, ...(before !== undefined ? { from: before.commit } : {}), to: b.commit });
  }
  for (const t of adopt)
    await local.adoptTag(t, signal).catch((e: unknown) => {
      // A tag of that name made here meanwhile stays: tags never move.
      if (!isBranchgraphError(e, 'tag_exists')) throw e;
      kept.push(t.name);
    });
  const pruned: string[] = [];
  if (a.prune === true) {
    const live = new Set(theirs.branches.map((b) => b.name));
    for (const t of tracked)
      if (!live.has(t.branch)) {
        await local.remotes.prune(t, signal);
        pruned.push(t.branch);
      }
  }
  return { remote, updated, pruned, tags: { fetched: adopt.map((t) => t.name).filter((n) => !kept.includes(n)), kept }, transfer };
}

export async function pushTo(
  local: Graph,
  a: SyncOptions & { remote: string; peer: SyncPeer; branch: string; destination?: string; forceWithLease?: string; actor: string },
): Promise<PushReport> {
  const { remote, peer, branch, signal } = a;
  const destination = a.destination ?? branch;
  await local.remotes.get(remote, signal);
  const [ours, heads] = await Promise.all([local.branchHead(branch, signal, { withoutPending: true }), peer.heads(signal)]);
  const theirs = heads.branches.find((b) => b.name === destination);
  const to = ours.manifest.commit.id;
  const from = theirs?.commit;
  const report = { remote, branch, destination, ...(from !== undefined ? { from } : {}), to };
  if (a.forceWithLease !== undefined && (from ?? '') !== a.forceWithLease)
    throw new BranchgraphError('head_moved', `${remote} has ${destination} at ${from ?? 'nothing'}, not ${a.forceWithLease}`, {
      details: { branch: destination, expected: a.forceWithLease, ...(from !== undefined ? { actual: from } : {}) },
    });
  const track = () => local.remotes.track({ remote, branch: destination, commit: to, manifest: ours.ref, signal });
  if (from === to) {
    await track();
    return { ...report, outcome: 'up_to_date', transfer: NOTHING_SENT };
  }
  // Their head is known here only if a fetch (or an earlier push) brought it; a head this store does
  // not hold is one this commit cannot contain.
  const theirHead =
    theirs !== undefined && (await local.holds(theirs.manifest, signal)) ? await local.snapshotAt(theirs.manifest, signal) : undefined;
  const fastForward = theirs === undefined || theirs.empty === true || (theirHead !== undefined && contains(ours.manifest, theirHead));
  if (a.forceWithLease === undefined && !fastForward) throw nonFastForward(destination, from, to);
  // The remote's heads this store holds are at both ends: the walk stops at any of them, so a new
  // branch sends only what is not under the remote's branches.
  const held = await Promise.all(heads.branches.map(async (b) => ((await local.holds(b.manifest, signal)) ? [b.manifest] : [])));
  const plan = await local.planTransfer({
    wants: [ours.ref],
    haves: held.flat(),
    holds: (r) => peer.holds(r, signal),
    signal,
  });
  const move = { branch: destination, from, to, force: a.forceWithLease !== undefined, actor: a.actor };
  const transfer = await peer.receive({ source: local, plan, move, width: a.width, signal, progress: a.progress });
  await track();
  return { ...report, outcome: theirs === undefined ? 'created' : fastForward ? 'fast_forward' : 'forced', transfer };
}
/** Whether `ours` contains the head `theirs`: its commit, as published or as re-laid. */
function contains(ours: Manifest, theirs: Snapshot): boolean {
  return ours.ancestry.contains(theirs.ref) || (theirs.manifest.layout !== undefined && ours.ancestry.contains(theirs.manifest.layout.of));
}

/** A new graph's initial commit: nothing before it, nothing in it but the empty schema. */
function isInitial(c: Manifest['commit']): boolean {
  return c.kind === 'init' && c.parents.length === 0;
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
  a: SyncOptions & { remote: string; url: string; peer: SyncPeer; actor: string },
): Promise<CloneReport> {
  const { remote, url, signal } = a;
  const existing = await local.remotes.get(remote, signal).catch((e: unknown) => {
    if (isBranchgraphError(e, 'not_found')) return undefined;
    throw e;
  });
  if (existing === undefined) {
    // A new graph's main holding nothing (the store was opened before the clone) is no graph.
    const mine = await local.listBranches({ limit: 2, signal });
    if (mine.damaged.length > 0 || mine.branches.some((b) => !isInitial(b.commit)))
      throw new BranchgraphError('invalid_input', 'the destination already holds a graph: clone into an empty store', {
        issues: [{ path: 'destination', message: 'not empty' }],
      });
    await local.remotes.set({ name: remote, url, actor: a.actor, signal });
  } else if (existing.url !== url)
    throw new BranchgraphError('invalid_input', `the destination is a clone of ${existing.url}, not ${url}`, {
      issues: [{ path: 'destination', message: 'a clone of another remote' }],
    });
  const fetched = await fetchFrom(local, { ...a, peer: a.peer });
  const branches: string[] = [];
  for (const t of await local.remotes.trackingRefs(remote, signal)) {
    try {
      await local.createBranch(t.branch, { path: { base: { remote, remoteBranch: t.branch }, steps: [] } }, { signal, actor: a.actor });
      branches.push(t.branch);
    } catch (e) {
      if (!isBranchgraphError(e, 'branch_exists')) throw e;
      // Made by the run this one resumes; or a new graph's main, made by opening the store mid-clone
      // and holding nothing, which takes the remote's place.
      const head = await local.branchHead(t.branch, signal, { pendingListedOnly: true });
      if (isInitial(head.manifest.commit) && head.pending.generations.length === 0 && t.commit !== head.manifest.commit.id) {
        await local.resetBranch(
          t.branch,
          { path: { base: { remote, remoteBranch: t.branch }, steps: [] } },
          {
            signal,
            actor: a.actor,
            expectedHead: head.manifest.commit.id,
          },
        );
        branches.push(t.branch);
      }
    }
  }
  return { ...fetched, branches };
}
