/**
 * Run the command line (cli-program.ts) and turn how it ended into an exit
 * code (exit-codes.ts) and one message on standard error that says what
 * failed. In-process, so tests drive it without starting a process.
 */
import { CommanderError } from 'commander';
import { toBranchgraphError } from '../model/errors.js';
import { cliProgram, type CliIo } from './cli-program.js';
import { EXIT, exitCodeOf } from './exit-codes.js';

export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = cliProgram(io, (c) => {
    code = c;
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
    io.stderr(`error [${err.code}]: ${err.message}\n`);
    for (const i of err.issues.slice(0, 20)) io.stderr(`  ${i.path}: ${i.message}\n`);
    return exitCodeOf(err);
  }
}
