#!/usr/bin/env node
/** The `branchgraph` executable: the command line over this process's standard streams (see run-cli.ts). */
import * as nodeModule from 'node:module';
import type { CliIo } from './cli-context.js';
import { EXIT } from './exit-codes.js';
import { runCli } from './run-cli.js';
import { relaunchWithServerFlags } from './server-process.js';

// Node 22.1 and later keep compiled code between runs, which roughly halves a command's start;
// Node 20 has no such cache and starts as before.
(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.();

const io: CliIo = {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  stdoutStream: process.stdout,
  stderrIsTTY: process.stderr.isTTY === true,
  relaunchWithServerFlags,
};
runCli(process.argv.slice(2), io).then(
  (code) => {
    // Let standard output drain (a pipe may still hold an export) before exiting.
    process.stdout.write('', () => process.exit(code));
  },
  (e: unknown) => {
    process.stderr.write(`error [internal]: ${String(e)}\n`);
    process.exit(EXIT.failed);
  },
);
