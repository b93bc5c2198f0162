/**
 * `gc`, `gqt`, `show-object` (a stored object's text, compressed or not), and `call`: any
 * operation of the table by name with its input as JSON, so every operation is reachable from
 * the command line the moment it is defined, with or without a command of its own
 * (`branchgraph call --list` names them).
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { storedText } from '../../model/compress-stored.js';
import { BranchgraphError } from '../../model/errors.js';
import { OPERATION_LIST, type OperationName } from '../../service/operation-table.js';
import { print, table as textTable } from '../cli-output.js';
import type { CliContext } from '../cli-context.js';
import { defined, inputFile, intOption, jsonOption, readInput } from '../cli-inputs.js';

export function adminCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf, globals, setExit } = cli;
  command(program, 'gc', 'delete objects no live manifest references, older than the grace period')
    .option('--grace-seconds <n>', 'never less than 900')
    .option('--dry-run', 'report what would be deleted')
    .action(async (o: { graceSeconds?: string; dryRun?: boolean }, cmd: Command) => {
      print(
        outOf(cmd),
        await (await connect(cmd)).gc(defined({ graceSeconds: intOption('--grace-seconds', o.graceSeconds), dryRun: o.dryRun === true })),
      );
    });

  command(program, 'show-object', 'print a stored JSON object or compact run as text, compressed or not (a file of a local store)')
    .argument('<file>', 'the object file, e.g. data/manifests/<lineage>/<version>.json~')
    .action((file: string, _o: unknown, cmd: Command) => {
      const bytes = readFileSync(inputFile(file));
      let text: string;
      try {
        text = storedText(bytes, file);
      } catch (e) {
        if (!(e instanceof TypeError)) throw e;
        throw new BranchgraphError('invalid_input', `${file} is not a stored JSON object (Arrow runs are read with Arrow tools)`);
      }
      outOf(cmd).write(`${text}\n`);
    });

  command(program, 'call', 'run any operation by name with a JSON input, and print its JSON result')
    .argument('[operation]', 'an operation name (see --list)')
    .option('--input <json>', 'the input as JSON (default {})')
    .option('--input-file <file>', 'the input as a JSON file')
    .option('--list', 'list the operations with their roles and routes')
    .action(async (name: string | undefined, o: { input?: string; inputFile?: string; list?: boolean }, cmd: Command) => {
      if (o.list === true || name === undefined) {
        const rows = OPERATION_LIST.map((op) => ({
          operation: op.name,
          role: op.role,
          route: `${op.http.method} ${op.http.path}`,
          summary: op.summary,
        }));
        print(outOf(cmd), rows, (r: typeof rows) => textTable(r, ['operation', 'role', 'route', 'summary']));
        return;
      }
      const op = OPERATION_LIST.find((x) => x.name === name);
      if (op === undefined)
        throw new BranchgraphError('invalid_input', `no operation ${JSON.stringify(name)}; branchgraph call --list names them`);
      const input =
        o.inputFile !== undefined
          ? jsonOption(o.inputFile, readInput(o.inputFile))
          : o.input !== undefined
            ? jsonOption('--input', o.input)
            : {};
      const api = (await connect(cmd)) as unknown as Record<OperationName, (input: unknown) => Promise<unknown>>;
      print({ ...outOf(cmd), json: true }, await api[op.name as OperationName](input));
    });

  command(program, 'gqt', 'replay GQT case files (default gqt/*.gqt), one fresh graph per case; ends with N passed, N failed')
    .argument('[files...]')
    .addOption(
      new Option('--via <transport>', 'embedded engine, or a server process over REST or GraphQL')
        .choices(['embedded', 'rest', 'graphql'])
        .default('embedded'),
    )
    .addHelpText('after', '\n  --store memory|fs|s3  the kind of store each case replays on, a fresh one per case (default fs)')
    .action(async (files: string[], o: { via: 'embedded' | 'rest' | 'graphql' }, cmd: Command) => {
      // `--store` is the program's option (a URL elsewhere); here it names a kind of store.
      const store = globals(cmd).store ?? 'fs';
      if (store !== 'memory' && store !== 'fs' && store !== 's3')
        throw new BranchgraphError('invalid_input', `gqt --store must be memory, fs or s3, not ${JSON.stringify(store)}`);
      // The GQT stack (drivers, Hono, Yoga) loads only for this command.
      setExit(await (await import('../../gqt/gqt-cli.js')).runGqtCli({ via: o.via, store, files }));
    });
}
