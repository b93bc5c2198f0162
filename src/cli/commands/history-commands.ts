/** Reading history: `log` (filtered and paged), `history` of one entity, `blame` and `merge-base`. */
import type { Command } from 'commander';
import { human, print } from '../cli-output.js';
import { AT_HELP, type CliContext } from '../cli-context.js';
import { defined, intOption } from '../cli-inputs.js';

interface LogOptions {
  at?: string;
  limit: string;
  cursor?: string;
  table?: string;
  key?: string;
  author?: string;
  kind?: string;
  since?: string;
  until?: string;
  firstParent?: boolean;
}

export function historyCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  command(program, 'log', 'commits at a ref, newest first, filtered and paged')
    .option('--at <ref>', AT_HELP)
    .option('--limit <n>', 'how many, at most 1000', '20')
    .option('--cursor <cursor>', 'continue after a previous page (same ref and filters)')
    .option('--table <table>', 'commits that changed this table')
    .option('--key <key>', 'with --table: commits that changed this entity')
    .option('--author <name>', 'commits by this actor or author')
    .option('--kind <kinds>', 'comma-separated kinds: write, merge, schema, catchup, compact, cherry-pick, revert, init')
    .option('--since <time>', 'commits at or after this RFC 3339 time')
    .option('--until <time>', 'commits at or before this RFC 3339 time')
    .option('--first-parent', 'follow first parents only')
    .action(async (o: LogOptions, cmd: Command) => {
      const { limit, ...filters } = o;
      print(outOf(cmd), await (await connect(cmd)).log(defined({ ...filters, limit: intOption('--limit', limit) })), human.log);
    });
  command(program, 'history', 'the versions of one entity, newest first (edge keys are JSON arrays)')
    .argument('<table>')
    .argument('<key>')
    .option('--at <ref>', AT_HELP)
    .option('--limit <n>', 'versions per page, at most 1000', '20')
    .option('--cursor <cursor>', 'continue after a previous page (same ref)')
    .option('--first-parent', 'follow first parents only')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (table: string, key: string, o: Omit<LogOptions, 'table' | 'key'>, cmd: Command) => {
      const input = defined({ table, key, at: o.at, cursor: o.cursor, firstParent: o.firstParent, limit: intOption('--limit', o.limit) });
      print(outOf(cmd), await (await connect(cmd)).entityHistory(input), human.history);
    });
  command(program, 'blame', 'for each property of one entity, the commit that set its current value')
    .argument('<table>')
    .argument('<key>')
    .option('--at <ref>', AT_HELP)
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (table: string, key: string, o: { at?: string }, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).blame(defined({ table, key, at: o.at })), human.blame),
    );
  command(program, 'merge-base', 'the newest commits two refs both reach, one per line (several after a criss-cross)')
    .argument('<from>')
    .argument('<to>')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (from: string, to: string, _o: unknown, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).mergeBase({ from, to }), human.mergeBase),
    );
}
