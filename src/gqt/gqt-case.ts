/**
 * What a GQT case is once parsed: its steps (a closed union, one kind per
 * statement), the expectations they carry, and the syntax errors a file
 * can have, each at `file:line:column`.
 */
import type { MergeResolutions } from '../service/inputs.js';
import type { ConflictKind } from '../model/conflict.js';
import type { ErrorCode } from '../model/errors.js';

export interface Located {
  line: number;
}

export interface ExpectedConflict {
  kind: ConflictKind;
  table: string;
  key: string;
  property: string | null;
}

export type MergeExpectation =
  | { kind: 'outcome'; outcome: (typeof OUTCOMES)[number] }
  | { kind: 'conflicts'; conflicts: ExpectedConflict[] }
  | { kind: 'error'; code: ErrorCode };

/** A line of `expect diff`: `+`, `~` or `-` and the table and key changed. */
export interface ExpectedChange {
  change: '+' | '~' | '-';
  table: string;
  key: string;
}

export interface WriteLine {
  op: 'insert' | 'update' | 'upsert' | 'delete';
  table: string;
  values: Record<string, unknown>;
}

/** A ref in a case: a branch name, or `@label` for a commit captured by `label`. */
/** A ref in a case: a branch, `@label` or `tag:NAME`, optionally walked back by `~N` / `^N` steps (`main~1`, `@merged^2`). */
/** What a `request` statement does to the request the case calls by name. */
export type RequestAction =
  | { action: 'open'; source: string; target: string }
  | { action: 'revise' | 'close' }
  | { action: 'review'; verdict: 'approve' | 'request_changes' | 'comment' }
  | { action: 'resolve'; strategy: 'source-wins' | 'target-wins' | null }
  | { action: 'merge'; deleteBranch: boolean; expect?: 'merged' | 'fast_forward' };

/** What `expect request` checks; absent fields are not checked. */
export interface RequestChecks {
  state?: string;
  revisions?: number;
  preview?: { outcome: string; conflicts: number };
  mergeable?: boolean;
  reasons?: string[];
}

/** The filters of `expect log`, as the log takes them. */
export interface LogQuery {
  table?: string;
  key?: string;
  kind?: string;
  author?: string;
  firstParent?: boolean;
}

/** A ref in a case: a branch, `@label`, `tag:NAME` or `remote:REMOTE/BRANCH` (held as `REMOTE/BRANCH`), optionally walked back by steps. */
export type CaseRef = ({ branch: string } | { label: string } | { tag: string } | { remote: string }) & { steps?: string };

/** What a push may answer, as `push … -> OUTCOME` names it. */
export const PUSH_OUTCOMES = ['created', 'fast_forward', 'forced', 'up_to_date'] as const;

export type Step = Located &
  (
    | { kind: 'schema'; branch: string; text: string; error?: ErrorCode }
    | { kind: 'seed'; table: string; rows: Record<string, unknown>[]; error?: ErrorCode }
    | { kind: 'write' | 'ingest'; branch: string; ops: WriteLine[]; error?: ErrorCode }
    | { kind: 'catchup'; branch: string; maxGenerations?: number; serial: boolean; error?: ErrorCode }
    | { kind: 'expect-pending'; branch: string; generations: number }
    | { kind: 'branch-create'; name: string; from: CaseRef; error?: ErrorCode }
    | { kind: 'branch-delete'; name: string; error?: ErrorCode }
    | { kind: 'tag-create'; name: string; from: CaseRef; error?: ErrorCode }
    | { kind: 'remote-add'; name: string; error?: ErrorCode }
    | { kind: 'fetch'; remote: string; prune: boolean; moved?: number; error?: ErrorCode }
    | {
        kind: 'push';
        remote: string;
        branch: string;
        destination?: string;
        lease?: CaseRef | 'none';
        expect?: (typeof PUSH_OUTCOMES)[number];
        error?: ErrorCode;
      }
    | { kind: 'clone'; remote: string; as: string; error?: ErrorCode }
    | {
        kind: 'merge';
        /** A branch, or for cherry-pick and revert the label of the commit applied. */
        source: string;
        into: string;
        apply?: 'cherry_pick' | 'revert';
        dryRun: boolean;
        width?: 1 | 2 | 4;
        deleteBranch: boolean;
        expectSourceHead?: string;
        expectTargetHead?: string;
        message?: string;
        /** From the merge's `strategy` option and the `resolve` block just before it. */
        resolutions?: MergeResolutions;
        expect: MergeExpectation;
        expectBranchDeleted?: boolean;
        idempotencyKey?: string;
        /** `-> merged replayed`: the result must be the stored one of an earlier request with the key. */
        expectReplayed?: boolean;
      }
    | { kind: 'expect-diff'; from: CaseRef; to: CaseRef; threeDot: boolean; changes: ExpectedChange[] }
    | { kind: 'label'; name: string; branch: string }
    | { kind: 'restart' }
    /** A typed GraphQL document on a branch's endpoint; its `data` must equal `expected` exactly. */
    | { kind: 'graphql'; branch: string; query: string; expected?: unknown; error?: ErrorCode }
    | { kind: 'expect-table'; table: string; at: CaseRef; rows: Record<string, unknown>[] }
    | { kind: 'expect-log'; at: CaseRef; query: LogQuery; entries: { kind: string; message?: string }[] }
    | {
        kind: 'expect-history';
        table: string;
        key: string;
        at: CaseRef;
        firstParent: boolean;
        versions: { change: string; changed: string[]; message?: string }[];
      }
    | { kind: 'expect-blame'; table: string; key: string; at: CaseRef; properties: { property: string; kind: string; message?: string }[] }
    | {
        kind: 'expect-search';
        table: string;
        at: CaseRef;
        ask: { text?: string; near?: Record<string, unknown>; where?: Record<string, unknown>; first?: number };
        hits: { key: string; score?: number }[];
      }
    | { kind: 'reset'; branch: string; to: CaseRef; error?: ErrorCode }
    | {
        kind: 'protect';
        branch: string;
        rule: { requiredApprovals: number; allowAdminBypass: boolean; staleApprovals: 'result_change' | 'head_move' } | null;
        error?: ErrorCode;
      }
    | ({ kind: 'request'; name: string; error?: ErrorCode } & RequestAction)
    | { kind: 'expect-request'; name: string; checks: RequestChecks }
    | { kind: 'expect-head'; branch: string; label: string; same: boolean }
  );

export interface GqtCase {
  file: string;
  name: string;
  description: string;
  steps: Step[];
}

export interface GqtParseError {
  file: string;
  line: number;
  column: number;
  message: string;
}

export class GqtSyntaxError extends Error {
  constructor(readonly errors: GqtParseError[]) {
    super(errors.map((e) => `${e.file}:${e.line}:${e.column}: ${e.message}`).join('\n'));
  }
}

/** The largest GQT file and line, in characters: a case is a readable script, and rows are limited to 1 MiB. */
export const MAX_GQT_CHARS = 16 * 1024 * 1024;
export const MAX_GQT_LINE_CHARS = 2 * 1024 * 1024;

/** What a merge step may expect as its outcome. */
export const OUTCOMES = ['merged', 'fast_forward', 'already_up_to_date', 'cherry_picked', 'reverted'] as const;
