/**
 * What a GQT case needs from a transport. `ApiDriver` (api-driver.ts) runs
 * it over any `BranchgraphApi`, the engine in this process or REST to a
 * server; `GraphqlDriver` speaks GraphQL documents. The runner replays the
 * same case over any of them.
 */
import type { ApplyCommitInput, CatchUpInput, MergeInput } from '../service/api.js';
import type { CommitDto, DiffResultDto, MergeResultDto } from '../service/service.js';
import type { WriteLine } from './gqt-parser.js';

export interface DriverRef {
  branch?: string;
  commit?: string;
  tag?: string;
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
  log(branch: string): Promise<CommitDto[]>;
  head(branch: string): Promise<string>;
  /** Drop every in-memory cache and reopen from the store (in server modes: restart the server). */
  restart(): Promise<void>;
  close(): Promise<void>;
}

export function refString(at: DriverRef): string {
  return at.commit !== undefined ? `commit:${at.commit}` : at.tag !== undefined ? `tag:${at.tag}` : (at.branch ?? 'main');
}
