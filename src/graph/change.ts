/**
 * What a change asks of the publication loop, and what it answers. A plan
 * (`ChangePlan`) is computed against a head and handed to the loop, which
 * never changes it; the loop answers `published` or `unchanged` as a value.
 */
import type { ProtectionPass } from '../model/branch-protection.js';
import type { Schema } from '../model/schema.js';
import type { RunRef } from '../table/run.js';
import type { TableVersion } from '../table/table-version.js';
import type { Commit, Manifest } from './manifest.js';
import type { Snapshot } from './snapshot.js';

/** How many times the loop plans again after losing a race before it answers `publish_contention`. */
export const MAX_PUBLISH_ATTEMPTS = 8;

/** What a user asks for with a change: who, for whom, why, and the head it must land on. */
export interface ChangeOptions {
  /** Who makes the change: an authenticated identity, or the graph's actor. */
  actor?: string;
  /** Who the change is for, as the client says; recorded beside the actor, as Git keeps author and committer. */
  author?: string;
  message?: string;
  signal?: AbortSignal;
  /** Refuse with `head_moved` unless the branch head is this commit. */
  expectedHead?: string;
  /** What the change presents to a protected branch (model/branch-protection.ts): a merge request, or an admin's bypass. */
  protection?: ProtectionPass;
}

/** How the publication loop reads heads: engine internals, not what a user asks for. */
export interface PublishOptions extends ChangeOptions {
  /** A head the caller just read, used for the first attempt instead of reading it again. */
  firstHead?: Snapshot;
  /**
   * With a `firstHead` a branch hint named (ports.ts `HintedHead`): the head read that confirms it,
   * or undefined when something else the plan was made on has moved. The first attempt is published
   * only if it finds the same head; otherwise the change is planned again on the stored head.
   */
  firstHeadCheck?: Promise<Snapshot | undefined>;
  /** Plan against the manifest alone, without reading pending WAL generations (catch-up). */
  withoutPending?: boolean;
  /**
   * Take this process's turn on the branch and plan on the manifest the previous turn built,
   * landing after it (publication-lanes.ts): merges into one branch, so they do not race each other.
   */
  chained?: boolean;
  /**
   * In a lane, plan only on stored heads: wait for the tip below to settle and read the head, as a
   * caller expecting a head does (a keyed merge, which reads back what landed under its key).
   */
  storedHeadsOnly?: boolean;
}

/** What a plan asks the publication loop to publish. */
export interface ChangePlan<T> {
  kind: Commit['kind'];
  /** Tables to replace; `null` removes a table. Others carry over. */
  tables?: Record<string, TableVersion | null>;
  schema?: Schema;
  /**
   * WAL watermarks to record. When absent, the publication folds every
   * pending generation the plan saw: they go into real runs under the
   * plan's own changes, so an older pending row never overrides them.
   */
  wal?: Record<string, number>;
  /** The generations this publication folds, per shard (see Manifest.walFolded). */
  walFolded?: Record<string, string[]>;
  /** Leave pending generations pending (catch-up folds its own prefix). */
  keepPending?: boolean;
  /**
   * The change alters no row (a compaction, a WAL shard's registration): the version re-lays the
   * head's commit instead of adding one (manifest.ts `layout`).
   */
  relays?: boolean;
  /** The merged source, recorded as the second parent. */
  secondParent?: Manifest;
  /** When the oldest snapshot the plan takes runs from was read, if earlier than the head's (a merge's source). */
  readAt?: number;
  /** Runs written for this attempt, deleted if it does not publish. */
  scratch: RunRef[];
  result: T;
  message?: string;
  /** The writes a group commit publishes together (see group-commit.ts). */
  group?: Commit['group'];
  /** The conflict resolutions a merge applied. */
  resolved?: Commit['resolved'];
  /** The Idempotency-Key a merge ran under. */
  idempotency?: Commit['idempotency'];
}

/** What a plan returns: a change to publish, or the plan's result when there is nothing to publish. */
export type PlanResult<T> = ChangePlan<T> | { unchanged: T };

/** A plan: given the head (and which attempt this is), what to publish. */
export type Plan<T> = (head: Snapshot, attempt: number) => Promise<PlanResult<T>>;

/** A change published as the branch's next version. */
export interface PublishedChange<T> {
  status: 'published';
  commit: Commit;
  manifest: Manifest;
  result: T;
  attempts: number;
}

/** A plan that found nothing to publish; the head it planned against is unchanged. */
export interface UnchangedChange<T> {
  status: 'unchanged';
  result: T;
  head: Snapshot;
}

export type ChangeResult<T> = PublishedChange<T> | UnchangedChange<T>;
