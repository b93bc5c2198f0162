/**
 * What a GQT case needs from a transport. `ApiDriver` (api-driver.ts) runs
 * it over any `BranchgraphApi`, the engine in this process or REST to a
 * server; `GraphqlDriver` speaks GraphQL documents. The runner replays the
 * same case over any of them.
 */
import type { ApplyCommitInput, CatchUpInput, EntityVersionDto, MergeInput, PropertyBlameDto } from '../service/api.js';
import type { CommitDto, DiffResultDto, MergeResultDto } from '../service/dtos.js';
import type { WriteLine } from './gqt-parser.js';
import type { ProtectionRule } from '../model/branch-protection.js';
import type { LogQuery, RequestAction } from './gqt-case.js';

/** Commits or versions per page when a driver reads a whole log or history: small, so every case pages through cursors. */
export const GQT_PAGE = 3;

/** One entity at a ref, as history and blame read it. */
export interface EntityAt {
  table: string;
  key: string;
  at: DriverRef;
  firstParent?: boolean;
}

export interface DriverRef {
  branch?: string;
  commit?: string;
  tag?: string;
  /** Steps back from there (`~1^2`), as the ref grammar spells them. */
  steps?: string;
}

export interface GqtDriver {
  readonly name: string;
  applySchema(branch: string, text: string): Promise<void>;
  write(branch: string, ops: WriteLine[]): Promise<void>;
  /** Append to the WAL; every line is acknowledged when this returns. */
  ingest(branch: string, ops: WriteLine[]): Promise<void>;
  catchUp(branch: string, input: CatchUpInput): Promise<void>;
  pendingGenerations(branch: string): Promise<number>;
  createBranch(name: string, from: DriverRef): Promise<void>;
  createTag(name: string, from: DriverRef): Promise<void>;
  deleteBranch(name: string): Promise<void>;
  merge(source: string, input: MergeInput): Promise<MergeResultDto>;
  applyCommit(kind: 'cherry_pick' | 'revert', branch: string, input: ApplyCommitInput): Promise<MergeResultDto>;
  /** Every row of a table at a ref. */
  rows(table: string, at: DriverRef): Promise<{ key: string; row: Record<string, unknown> }[]>;
  schemaText(at: DriverRef): Promise<string>;
  /** Every change of a two-dot or three-dot diff. */
  diff(from: DriverRef, to: DriverRef, mode: 'two-dot' | 'three-dot'): Promise<DiffResultDto>;
  /** The whole log at a ref with the filters, read a page at a time. */
  log(at: DriverRef, query: LogQuery): Promise<CommitDto[]>;
  /** The entity's whole history, read a page at a time. */
  history(entity: EntityAt): Promise<EntityVersionDto[]>;
  blame(entity: EntityAt): Promise<PropertyBlameDto[]>;
  /** Move a branch to a commit, if its head is the one this reads first. */
  reset(branch: string, to: DriverRef): Promise<void>;
  /** Set a branch's protection rule, or remove it (null). Cases register no check hooks, so they require none. */
  protect(branch: string, rule: Omit<ProtectionRule, 'requiredChecks'> | null): Promise<void>;
  /** One action on a merge request (`id` for every action but open): the request after it, and a merge's outcome. */
  request(call: (RequestAction | { action: 'get' }) & { id?: string; title?: string }): Promise<{ view: RequestView; outcome?: string }>;
  head(branch: string): Promise<string>;
  /** A document on the branch's typed GraphQL endpoint (embedded: the same endpoint, in process). */
  typedGraphql(branch: string, query: string): Promise<TypedAnswer>;
  /** Drop every in-memory cache and reopen from the store (in server modes: restart the server). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** A merge request as GQT checks it. */
export interface RequestView {
  id: string;
  state: string;
  revisions: { preview: { outcome: string; conflicts: number } }[];
  mergeability: { mergeable: boolean; reasons: string[] };
}

/** A GraphQL response as the typed step reads it. */
export interface TypedAnswer {
  data?: unknown;
  errors?: { message: string; extensions?: { code?: string } }[];
}

/** POST a document to a branch's typed endpoint under `base` (a server, or a hosted graph on one). */
export async function postTyped(base: string, branch: string, query: string): Promise<TypedAnswer> {
  const res = await fetch(`${base}/branches/${encodeURIComponent(branch)}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json' },
    body: JSON.stringify({ query }),
  });
  const body = (await res.json()) as TypedAnswer & { error?: { code: string; message: string } };
  // A REST error envelope (an unknown branch, a refused token) reads as one error with its code.
  return body.error !== undefined ? { errors: [{ message: body.error.message, extensions: { code: body.error.code } }] } : body;
}

export function refString(at: DriverRef): string {
  const base = at.commit !== undefined ? `commit:${at.commit}` : at.tag !== undefined ? `tag:${at.tag}` : (at.branch ?? 'main');
  return base + (at.steps ?? '');
}

/** Every item of a paged read: `page` answers one page from a cursor. */
export async function allPages<T>(page: (cursor: string | undefined) => Promise<{ items: T[]; nextCursor: string | null }>): Promise<T[]> {
  const out: T[] = [];
  let cursor: string | undefined;
  do {
    const p = await page(cursor);
    out.push(...p.items);
    cursor = p.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return out;
}
