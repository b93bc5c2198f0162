/** Changing a graph's rows: `load`, `ingest`, `catchup`, `wal`, `compact`, and the schema: `schema get|apply`. */
import { createReadStream, readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { human, print, table as textTable } from '../cli-output.js';
import { AT_HELP, type CliContext } from '../cli-context.js';
import { defined, inputFile, intOption, readInput } from '../cli-inputs.js';
import { BranchgraphError } from '../../model/errors.js';
import type { BranchgraphApi } from '../../service/api.js';

export function writeCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  command(program, 'load', 'bulk load NDJSON operations, or CSV or Parquet rows of one table, as one all-or-nothing commit')
    .argument('<branch>')
    .argument('<file>')
    .option('--format <format>', 'ndjson, csv or parquet (by default from the file name: .csv, .parquet, else ndjson)')
    .option('--table <table>', 'the table CSV or Parquet rows go to')
    .option('--op <op>', 'how CSV or Parquet rows are written: upsert (the default) or insert (an existing key is refused)')
    .option('--progress', 'draw a progress bar on standard error (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (branch: string, file: string, o: LoadOptions, cmd: Command) => {
      const api = await connect(cmd);
      const input = loadInput(branch, file, o);
      const start = (id: string | undefined) => api.load(input, id === undefined ? {} : { operationId: id });
      print(outOf(cmd), await cli.followed(cmd, { flag: o.progress, api, start }), human.write);
    });
  command(program, 'ingest', 'append NDJSON operations to the WAL, streamed; generations seal as they fill')
    .argument('<branch>')
    .argument('<file>')
    .option('--shard <name>', 'WAL writer identity (embedded only; BRANCHGRAPH_SHARD)')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (branch: string, file: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).ingest({ branch, ndjson: createReadStream(inputFile(file)) }), human.ingest),
    );
  command(program, 'catchup', 'fold pending WAL generations into the tables now')
    .argument('<branch>')
    .option('--max-generations <n>', 'generations per batch; 0 removes the cap')
    .option('--serial', 'do not prepare the next batch while one commits')
    .action(async (branch: string, o: { maxGenerations?: string; serial?: boolean }, cmd: Command) => {
      const input = {
        branch,
        ...defined({ maxGenerations: intOption('--max-generations', o.maxGenerations), pipeline: o.serial ? false : undefined }),
      };
      print(outOf(cmd), await (await connect(cmd)).catchUp(input));
    });
  command(program, 'wal', 'WAL status: watermarks, pending generations, last catch-up')
    .argument('<branch>')
    .action(async (branch: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).walStatus({ branch }), human.wal));
  command(program, 'compact', 'compact tables now (servers also compact in the background)')
    .argument('<branch>')
    .option('--full', 'rewrite each table as one run (default: size-tiered)')
    .option('--table <name...>', 'only these tables')
    .action(async (branch: string, o: { full?: boolean; table?: string[] }, cmd: Command) => {
      const r = await (await connect(cmd)).compact({
        branch,
        ...defined({ mode: o.full ? ('full' as const) : undefined, tables: o.table }),
      });
      print(
        outOf(cmd),
        r,
        (v: typeof r) =>
          `${v.commit === null ? 'nothing was due' : `compacted as ${v.commit.id}`}\n${textTable(v.tables, ['table', 'runsBefore', 'runsAfter', 'runsMerged'])}`,
      );
    });

  const schema = command(program, 'schema', 'read or apply the schema');
  command(schema, 'get', 'the schema text at a ref')
    .option('--at <ref>', AT_HELP)
    .action(async (o: { at?: string }, cmd: Command) => {
      const r = await (await connect(cmd)).getSchema(defined({ at: o.at }));
      print(outOf(cmd), { commit: r.commit, text: r.text }, (v: { commit: string; text: string }) => `# commit ${v.commit}\n${v.text}\n`);
    });
  command(schema, 'apply', 'apply schema text from a file as a commit')
    .argument('<branch>')
    .argument('<file>')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (branch: string, file: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).applySchema({ branch, schema: readInput(file) }), human.schema),
    );
}

interface LoadOptions {
  format?: string;
  table?: string;
  op?: string;
  progress?: boolean;
}

/**
 * A load's input from a file: its format from `--format` or the file's name. NDJSON and CSV are
 * streamed from the file (a CSV load into an empty table then never holds it whole); Parquet,
 * whose footer comes last, is read as bytes.
 */
function loadInput(branch: string, file: string, o: LoadOptions): Parameters<BranchgraphApi['load']>[0] {
  const format = o.format ?? (/\.csv$/i.test(file) ? 'csv' : /\.parquet$/i.test(file) ? 'parquet' : 'ndjson');
  const rest = defined({ table: o.table, op: o.op as 'insert' | 'upsert' | undefined });
  if (format === 'ndjson') return { branch, ndjson: createReadStream(inputFile(file)), ...rest };
  if (format === 'csv') return { branch, csv: createReadStream(inputFile(file)), ...rest };
  if (format === 'parquet') return { branch, parquet: new Uint8Array(readFileSync(inputFile(file))), ...rest };
  throw new BranchgraphError('invalid_input', `--format must be ndjson, csv or parquet, not ${format}`, {
    issues: [{ path: '--format', message: 'ndjson, csv or parquet' }],
  });
}
