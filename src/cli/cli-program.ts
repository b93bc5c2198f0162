/**
 * The branchgraph command line, as a commander program: `serve`, the
 * commands that read and change a graph (against the embedded engine with
 * `--store`, or a running server with `--server`), `export`, `call` (any
 * operation by name) and `gqt`. The commands live one file per group
 * under commands/. Every command has `--help`; mistakes in the command
 * line are usage errors (exit 2); results print as tables, or as JSON with
 * `--json`.
 */
import { Command, Option } from 'commander';
import type { BranchgraphApi } from '../service/api.js';
import { commandApi } from './engine-access.js';
import { packageVersion } from '../service/package-root.js';
import type { CliContext, CliIo, Globals } from './cli-context.js';
import { EXIT_CODES_HELP } from './exit-codes.js';
import { errorText } from './error-text.js';
import { BranchgraphError } from '../model/errors.js';
import { withProgress } from './progress-bar.js';
import { serveCommands } from './commands/serve-commands.js';
import { branchCommands } from './commands/branch-commands.js';
import { mergeCommands } from './commands/merge-commands.js';
import { readCommands } from './commands/read-commands.js';
import { historyCommands } from './commands/history-commands.js';
import { requestCommands } from './commands/request-commands.js';
import { hookCommands } from './commands/hook-commands.js';
import { writeCommands } from './commands/write-commands.js';
import { mcpCommands } from './commands/mcp-commands.js';
import { adminCommands } from './commands/admin-commands.js';
import { remoteCommands } from './commands/remote-commands.js';
import { walkCommands } from './commands/walk-commands.js';
import { demoCommands } from './commands/demo-commands.js';

export type { CliIo } from './cli-context.js';

export function cliProgram(io: CliIo, how: { json: boolean; setExit: (code: number) => void }): Command {
  const { setExit } = how;
  // A usage mistake carries the stable code every transport gives bad input.
  const usageError = (text: string): string =>
    how.json
      ? errorText(new BranchgraphError('invalid_input', text.replace(/^error: /, '').trim()), true)
      : text.replace(/^error: /, 'error [invalid_input]: ');
  const output = {
    writeOut: io.stdout,
    writeErr: io.stderr,
    outputError: (text: string, write: (t: string) => void) => write(usageError(text)),
  };
  const program = new Command('branchgraph');
  program
    .description('A typed graph store with Git-style branches and three-way entity merges.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addOption(
      new Option(
        '--store <url>',
        'embedded engine on this store: file://DIR, s3://bucket/prefix?..., memory:// (BRANCHGRAPH_STORE; default file://./data)',
      ),
    )
    .addOption(new Option('--server <url>', 'talk to a running server instead of opening the store').env('BRANCHGRAPH_SERVER'))
    .addOption(new Option('--token <token>', "the server's bearer token").env('BRANCHGRAPH_TOKEN'))
    .option('--actor <name>', 'who commits made here are by (embedded only; BRANCHGRAPH_ACTOR)')
    .option('--json', 'print results as JSON for programs')
    .showHelpAfterError(how.json ? false : '(run with --help for usage)')
    .configureOutput(output)
    .addHelpText('after', `\n${EXIT_CODES_HELP}\n`)
    .exitOverride();

  const globals = (cmd: Command): Globals => cmd.optsWithGlobals() as Globals;
  const cli: CliContext = {
    io,
    setExit,
    globals,
    outOf: (cmd) => ({ json: globals(cmd).json === true, write: io.stdout }),
    connect: (cmd): Promise<BranchgraphApi> => commandApi(globals(cmd)),
    command: (parent, name, description) =>
      parent
        .command(name)
        .description(description)
        .exitOverride()
        .configureOutput(output)
        .showHelpAfterError(how.json ? false : '(run with --help for usage)'),
    followed: (cmd, run) => {
      const tty = io.stderrIsTTY === true;
      const on = run.flag ?? (tty && globals(cmd).json !== true);
      return on
        ? withProgress({ get: (id) => run.api.getOperation({ id }), write: io.stderr, tty, start: run.start })
        : run.start(undefined);
    },
  };
  for (const group of [
    serveCommands,
    branchCommands,
    mergeCommands,
    readCommands,
    historyCommands,
    requestCommands,
    hookCommands,
    writeCommands,
    adminCommands,
    remoteCommands,
    walkCommands,
    demoCommands,
    mcpCommands,
  ])
    group(program, cli);
  return program;
}
