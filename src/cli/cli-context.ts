/**
 * What every command group is written with: where output goes, how a
 * command reaches the API (a running server with `--server`, else the
 * engine in this process), the shared conventions of a subcommand, and how
 * a long operation shows its progress.
 */
import type { Command } from 'commander';
import type { BranchgraphApi } from '../service/api.js';
import type { Output } from './cli-output.js';

/** Where a command's output goes and how it ends; tests give their own. */
/** How every `--at` option is described. */
export const AT_HELP = 'a ref: a branch, commit:<id>, tag:<name>, or back from one (main~2, main^2, main@{<time>}); default main';

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Raw bytes to standard output (exports). */
  stdoutStream: NodeJS.WritableStream;
  /** Whether standard error is a terminal: long operations then show a progress bar by default. */
  stderrIsTTY?: boolean;
  /**
   * For a command that serves: run it in a child process with the server's V8 flags and resolve
   * with its exit code, or undefined to serve here (this process has them, or is not the
   * command line's own: tests). See server-process.ts.
   */
  relaunchWithServerFlags?(): Promise<number> | undefined;
}

export type Globals = { store?: string; server?: string; token?: string; actor?: string; json?: boolean; shard?: string };

export interface CliContext {
  io: CliIo;
  setExit(code: number): void;
  globals(cmd: Command): Globals;
  outOf(cmd: Command): Output;
  /** One API whichever carries it. */
  connect(cmd: Command): Promise<BranchgraphApi>;
  /** A subcommand with the shared conventions: exit override, output, its own --help. */
  command(parent: Command, name: string, description: string): Command;
  /**
   * Run a long operation under a fresh operation id, with a progress bar unless asked not to: by
   * default on a terminal and not with --json; `--progress` draws line by line anywhere.
   */
  followed<T>(
    cmd: Command,
    run: { flag: boolean | undefined; api: BranchgraphApi; start: (id: string | undefined) => Promise<T> },
  ): Promise<T>;
}
