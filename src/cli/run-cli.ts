/**
 * Run the command line (cli-program.ts) and turn how it ended into an exit
 * code (exit-codes.ts) and one message on standard error that says what
 * failed: a line of text, or with `--json` the error envelope every other
 * transport answers (`{"error":{"code","message","issues"?}}`), with the
 * same exit code. In-process, so tests drive it without starting a process.
 */
import { CommanderError } from 'commander';
import { toBranchgraphError } from '../model/errors.js';
import { packageVersion } from '../service/package-root.js';
import type { CliIo } from './cli-program.js';
import { errorText } from './error-text.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  // Answered before the program (and the modules its commands import) is built.
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.stdout(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  // Known before parsing, so even a usage mistake that stops the parse is told as JSON.
  const json = argv.includes('--json');
  let code: number = EXIT.ok;
  const { cliProgram } = await import('./cli-program.js');
  const program = cliProgram(io, {
    json,
    setExit: (c) => {
      code = c;
    },
  });
  if (argv.length === 0) {
    io.stderr(program.helpInformation());
    return EXIT.usage;
  }
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // Help and version end with code 0; every other commander error is a usage mistake it has already printed.
      return e.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    const err = toBranchgraphError(e);
    io.stderr(errorText(err, json));
    return exitCodeOf(err);
  }
}
