/**
 * What clients see: commits, branches, tags and the results of changes, in
 * the one shape every transport returns (REST bodies, GraphQL objects, the
 * embedded API), and the conversions from the engine's records.
 */
import type { Protection } from '../model/branch-protection.js';
import type { Commit } from '../graph/manifest.js';
import type { DamagedBranch } from '../graph/branch-record.js';
import type { TagRecord } from '../graph/tags.js';
import type { GcReport } from '../graph/gc.js';
import type { SchemaApplyResult } from '../graph/schema-apply.js';
import type { CompactionResult } from '../graph/compaction.js';
import type { DiffPage } from '../graph/diff-page.js';
import type { MergeConflicts, MergeSuccess } from '../merge/merge.js';
import type { WalStatus } from '../wal/wal-status.js';
import type { LastCatchUp } from '../wal/catch-up-manager.js';

export type { DamagedBranch } from '../graph/branch-record.js';
export type { CatchUpReport } from '../wal/catch-up.js';
export type { OperationDto } from './long-operations.js';

/** A commit as clients see it; `parents` are commit ids, the first the branch's previous head. */
export interface CommitDto {
  id: string;
  parents: string[];
  branch: string;
  /** Who made the commit (the token's identity over HTTP). */
  actor: string;
  /** Who it was made for, as the client said; the actor when it said nothing. */
  author: string;
  message: string;
  time: string;
  kind: Commit['kind'];
  /** A merge's conflict resolutions, when it applied any. */
  resolved?: Commit['resolved'];
  /** The merge request this merge landed. */
  request?: string;
  /** An admin landed this on a protected branch past its rule. */
  bypass?: true;
}

/** A commit with its per-table row and run counts. */
export type CommitDetailDto = CommitDto & { tables: { name: string; rows: number; runs: number }[] };

/** A branch as clients see it: its head commit, when it was created and the commit it was forked from. */
export interface BranchDto {
  name: string;
  head: CommitDto;
  createdAt: string;
  forkedFrom: string | null;
  /** The branch's protection rule, who set it and when; null when it has none. */
  protection: Protection | null;
  /** When the maintenance sweep deletes it; null when it lives until deleted. */
  expiresAt: string | null;
  owner: string | null;
  labels: string[];
}

/** One page of branches: the live ones, the damaged ones in its range, and the cursor of the next page. */
export interface BranchPageDto {
  branches: BranchDto[];
  damaged: DamagedBranch[];
  nextCursor: string | null;
}

/** What a write batch did: its commit (null when it changed nothing) and counts per kind of change. */
export interface WriteResultDto {
  commit: CommitDto | null;
  inserted: number;
  updated: number;
  deleted: number;
  cascaded: number;
}

/** A diff page with the commits it compared: `from` and `to` as resolved, and for three-dot the merge base the changes start from. */
export type DiffResultDto = DiffPage & { mode: 'two-dot' | 'three-dot'; from: string; to: string; base: string | null };

/** A merge result as transports return it: commits in their public shape; `replayed` on an idempotent retry's stored result. */
export type MergeResultDto = (Omit<MergeSuccess, 'commit'> & { commit: CommitDto | null; replayed?: true }) | MergeConflicts;

/** What a compaction did: its commit (null when nothing was due) and runs per table before and after. */
export interface CompactResultDto {
  commit: CommitDto | null;
  tables: CompactionResult['tables'];
}

/** What an ingest made durable: its sealed generations, each acknowledged when its PUT returned. */
export interface IngestResultDto {
  branch: string;
  shard: string;
  operations: number;
  generations: { seq: number; rows: number; sealedAt: string }[];
  inserted: number;
  updated: number;
  deleted: number;
  cascaded: number;
}

/** A branch's WAL: watermarks and pending generations per shard, and this process's last catch-up. */
export type WalStatusDto = WalStatus & { catchUp: { running: boolean; last: LastCatchUp | null } };

/** The commit a schema change published (null when the schema was already in place) and what it did to each table. */
export interface SchemaApplyDto {
  commit: CommitDto | null;
  /** What the change did to each table: create, keep, check, rewrite or drop. */
  tables: SchemaApplyResult['tables'];
}

/** What GC deleted, or would delete on a dry run, per kind of object. */
export type GcReportDto = Omit<GcReport, 'keys' | 'graceMs'> & { graceSeconds: number; keys: string[] };

/** A tag as clients see it: its name, the commit it names, who made it and when. */
export interface TagDto {
  name: string;
  commit: string;
  actor: string;
  time: string;
  message: string;
}

export function tagDto(t: TagRecord): TagDto {
  return { name: t.name, commit: t.commit, actor: t.actor, time: t.time, message: t.message };
}

export function commitDto(c: Commit): CommitDto {
  return {
    id: c.id,
    parents: c.parentIds,
    branch: c.branch,
    actor: c.actor,
    author: c.author ?? c.actor,
    message: c.message,
    time: c.time,
    kind: c.kind,
    ...(c.resolved !== undefined ? { resolved: c.resolved } : {}),
    ...(c.request !== undefined ? { request: c.request } : {}),
    ...(c.bypass !== undefined ? { bypass: c.bypass } : {}),
  };
}

/** A change's commit as clients see it: null when the change published nothing. */
export function publishedCommit(r: { status: 'published'; commit: Commit } | { status: 'unchanged' }): CommitDto | null {
  return r.status === 'published' ? commitDto(r.commit) : null;
}
