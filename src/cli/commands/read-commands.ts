/** Reading a graph: `rows`, `get`, `show`, `diff`, `export` and `search`. */
import { createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Option, type Command } from 'commander';
import { BranchgraphError } from '../../model/errors.js';
import { EXPORT_EXTENSIONS, EXPORT_FORMATS, parseExportFormat } from '../../service/api.js';
import { human, print } from '../cli-output.js';
import { AT_HELP, type CliContext } from '../cli-context.js';
import { defined, intOption, jsonOption, whereOption } from '../cli-inputs.js';

export function readCommands(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  command(program, 'rows', 'rows of a table in key order, a page at a time')
    .argument('<table>')
    .option('--at <ref>', AT_HELP)
    .option('--where <json>', 'filter, as typed GraphQL\'s where: {"age": {"gte": 30}}, {"_or": [...]}; {"prop": value} is equality')
    .option('--limit <n>', 'rows per page, at most 1000', '100')
    .option('--cursor <cursor>', 'continue after a previous page')
    .action(async (table: string, o: { at?: string; where?: string; limit: string; cursor?: string }, cmd: Command) => {
      const page = await (await connect(cmd)).rows(
        defined({ table, at: o.at, limit: intOption('--limit', o.limit), cursor: o.cursor, where: whereOption(o.where) }),
      );
      print(outOf(cmd), page, human.rows);
    });
  command(program, 'get', 'one entity by key (edge keys are JSON arrays such as ["a","b"])')
    .argument('<table>')
    .argument('<key>')
    .option('--at <ref>', AT_HELP)
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (table: string, key: string, o: { at?: string }, cmd: Command) => {
      const r = await (await connect(cmd)).getRow(defined({ table, key, at: o.at }));
      print(outOf(cmd), r, (v: typeof r) => human.rows({ items: [v], nextCursor: null }));
    });
  command(program, 'show', 'one commit with its tables')
    .argument('<commit>', 'commit id (commit: prefix optional)')
    .action(async (id: string, _o, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).commit({ id: id.replace(/^commit:/, '') }), human.commit),
    );
  command(program, 'diff', 'what changed: FROM TO (two-dot), or FROM...TO (three-dot: on TO since it and FROM diverged)')
    .argument('<from>', 'a ref, or FROM...TO')
    .argument('[to]')
    .option('--three-dot', 'changes on TO since its merge base with FROM (what merging TO into FROM brings)')
    .option('--limit <n>', 'changes per page, at most 10000 (default: all)')
    .option('--cursor <cursor>', 'continue after a previous page')
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (from: string, to: string | undefined, o: { threeDot?: boolean; limit?: string; cursor?: string }, cmd: Command) => {
      const dots = to === undefined ? /^(.+?)\.\.\.(.+)$/.exec(from) : null;
      if (to === undefined && dots === null) throw new BranchgraphError('invalid_input', 'diff takes FROM TO, or FROM...TO');
      const [a, b] = dots !== null ? [dots[1] as string, dots[2] as string] : [from, to as string];
      const mode = dots !== null || o.threeDot ? ('three-dot' as const) : ('two-dot' as const);
      const r = await (await connect(cmd)).diff({
        from: a,
        to: b,
        mode,
        ...defined({ limit: intOption('--limit', o.limit), cursor: o.cursor }),
      });
      print(outOf(cmd), r, human.diff);
    });
  exportCommand(program, cli);
  searchCommand(program, cli);
}

function searchCommand(program: Command, cli: CliContext): void {
  const { command, connect, outOf } = cli;
  command(program, 'search', 'find entities of a table by full text, by a vector or a text to be near, or both')
    .argument('<table>')
    .argument('[text]', 'full-text query over the @search properties (BM25)')
    .option('--near <text>', 'rank by distance to this text, embedded by the server')
    .option('--vector <json>', 'rank by distance to this vector: [0.1, 0.2, …]')
    .option('--property <name>', 'the vector property near searches (the only one by default)')
    .option('--k <n>', 'nearest neighbours taken before fusion (default: --first)')
    .option('--where <json>', 'filter applied before ranking, as rows takes it')
    .option('--first <n>', 'hits, at most 1000', '10')
    .option('--at <ref>', AT_HELP)
    // biome-ignore lint/complexity/useMaxParams: commander passes each argument, then the options and the command, positionally.
    .action(async (table: string, text: string | undefined, o: SearchOptions, cmd: Command) => {
      const vector = o.vector === undefined ? undefined : (jsonOption('--vector', o.vector) as number[]);
      const near =
        o.near === undefined && vector === undefined
          ? undefined
          : defined({ text: o.near, vector, property: o.property, k: intOption('--k', o.k) });
      const r = await (await connect(cmd)).search(
        defined({ table, at: o.at, text, near, where: whereOption(o.where), first: intOption('--first', o.first) }),
      );
      print(outOf(cmd), r, human.search);
    });
}

interface SearchOptions {
  near?: string;
  vector?: string;
  property?: string;
  k?: string;
  where?: string;
  first: string;
  at?: string;
}

function exportCommand(program: Command, cli: CliContext): void {
  const { command, connect, outOf, io } = cli;
  command(program, 'export', 'write a table at a ref for DuckDB, pyarrow or polars (pending WAL rows included)')
    .argument('<table>')
    .option('--at <ref>', AT_HELP)
    .addOption(new Option('--format <format>', 'file format').choices([...EXPORT_FORMATS]).default('parquet'))
    .option('--out <file>', 'where to write; - for standard output (default TABLE.<format>)')
    .action(async (table: string, o: { at?: string; format: string; out?: string }, cmd: Command) => {
      const format = parseExportFormat(o.format);
      const { commit, body } = await (await connect(cmd)).exportTable(defined({ table, at: o.at, format }));
      const file = o.out ?? `${table}.${EXPORT_EXTENSIONS[format]}`;
      const sink = file === '-' ? io.stdoutStream : createWriteStream(file);
      let bytes = 0;
      for await (const chunk of body) {
        bytes += chunk.length;
        if (!sink.write(chunk)) await once(sink, 'drain');
      }
      if (file !== '-')
        await new Promise<void>((resolve, reject) =>
          (sink as ReturnType<typeof createWriteStream>).end((e?: Error | null) => (e ? reject(e) : resolve())),
        );
      if (file !== '-') print(outOf(cmd), { table, format, commit, file, bytes });
    });
}
