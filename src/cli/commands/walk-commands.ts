/** Walking and counting a graph: `neighborhood`, `path` and `aggregate`. */
import type { Command } from 'commander';
import { BranchgraphError } from '../../model/errors.js';
import { human, print } from '../cli-output.js';
import { AT_HELP, type CliContext } from '../cli-context.js';
import { defined, intOption, whereOption } from '../cli-inputs.js';

const NODE_HELP = 'a node as TABLE/KEY (Person/ada)';

/** `TABLE/KEY`: the table is up to the first slash, the key is the rest. */
function nodeArg(name: string, v: string): { table: string; key: string } {
  const at = v.indexOf('/');
  if (at <= 0 || at === v.length - 1)
    throw new BranchgraphError('invalid_input', `${name} must be TABLE/KEY, such as Person/ada, not ${JSON.stringify(v)}`, {
      issues: [{ path: name, message: 'TABLE/KEY' }],
    });
  return { table: v.slice(0, at), key: v.slice(at + 1) };
}

const list = (v: string | undefined): string[] | undefined => (v === undefined ? undefined : v.split(',').filter((x) => x !== ''));

const direction = (v: string | undefined): 'out' | 'in' | 'both' | undefined => {
  if (v === undefined || v === 'out' || v === 'in' || v === 'both') return v;
  throw new BranchgraphError('invalid_input', `--direction must be out, in or both, not ${JSON.stringify(v)}`, {
    issues: [{ path: '--direction', message: 'out, in or both' }],
  });
};

interface WalkOptions {
  hops?: string;
  maxHops?: string;
  via?: string;
  direction?: string;
  first?: string;
  all?: boolean;
  at?: string;
}

export function walkCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  command(program, 'neighborhood', 'the nodes within some hops of a node, and the edges between them')
    .argument('<node>', NODE_HELP)
    .option('--hops <n>', 'how far, 1 to 6', '1')
    .option('--via <tables>', 'edge tables to take, comma-separated (default all)')
    .option('--direction <d>', 'out, in or both (default both)')
    .option('--first <n>', 'most nodes, at most 10000 (default 100)')
    .option('--at <ref>', AT_HELP)
    .action(async (node: string, o: WalkOptions, cmd: Command) => {
      const r = await (await connect(cmd)).neighborhood(
        defined({
          from: nodeArg('node', node),
          hops: intOption('--hops', o.hops),
          via: list(o.via),
          direction: direction(o.direction),
          first: intOption('--first', o.first),
          at: o.at,
        }),
      );
      print(outOf(cmd), r, human.neighborhood);
    });
  command(program, 'path', 'the shortest path from one node to another, or with --all every path up to --max-hops')
    .argument('<from>', NODE_HELP)
    .argument('<to>', NODE_HELP)
    .option('--all', 'every simple path, shortest first')
    .option('--max-hops <n>', 'longest path, 1 to 6 (default 6; with --all, 3)')
    .option('--via <tables>', 'edge tables to take, comma-separated (default all)')
    .option('--direction <d>', 'out (default), in or both')
    .option('--first <n>', 'with --all, most paths (default 10)')
    .option('--at <ref>', AT_HELP)
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (from: string, to: string, o: WalkOptions, cmd: Command) => {
      const api = await connect(cmd);
      const ask = defined({
        from: nodeArg('from', from),
        to: nodeArg('to', to),
        maxHops: intOption('--max-hops', o.maxHops),
        via: list(o.via),
        direction: direction(o.direction),
        at: o.at,
      });
      if (o.all === true) print(outOf(cmd), await api.paths({ ...ask, ...defined({ first: intOption('--first', o.first) }) }), human.paths);
      else
        print(outOf(cmd), await api.shortestPath(ask), (r: { path: Parameters<typeof human.paths>[0]['paths'][number] | null }) =>
          human.paths({ paths: r.path === null ? [] : [r.path], hasMore: false }),
        );
    });
  command(program, 'aggregate', 'count a table, with min, max, sum and mean of each number, optionally per group')
    .argument('<table>')
    .option('--where <json>', 'filter, as rows takes it')
    .option('--group-by <props>', 'properties whose values form groups, comma-separated (up to 4)')
    .option('--count-only', 'counts only: a whole table may then be counted from run statistics')
    .option('--at <ref>', AT_HELP)
    .action(async (table: string, o: { where?: string; groupBy?: string; countOnly?: boolean; at?: string }, cmd: Command) => {
      const r = await (await connect(cmd)).aggregate(
        defined({
          table,
          where: whereOption(o.where),
          groupBy: list(o.groupBy),
          numbers: o.countOnly === true ? false : undefined,
          at: o.at,
        }),
      );
      print(outOf(cmd), r, human.aggregate);
    });
}
