/**
 * The branchgraph command line, as a commander program: `serve`, the
 * commands that read and change a graph (against the embedded engine with
 * `--store`, or a running server with `--server`), `export`, and `gqt`.
 * Every command has `--help`; mistakes in the command line are usage
 * errors (exit 2); results print as tables, or as JSON with `--json`.
 */
import { createReadStream, createWriteStream, readFileSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { Command, Option } from 'commander';
import { RestClient } from '../http/rest-client.js';
import { BranchgraphError } from '../model/errors.js';
import { EXPORT_EXTENSIONS, EXPORT_FORMATS, embeddedApi, parseExportFormat, type BranchgraphApi, type Filter } from '../service/api.js';
import { CONFIG_HELP, loadConfig } from '../service/config.js';
import { ApplyCommitZ, CatchUpInputZ, CompactInputZ, MergeInputZ, parseInput, parseRef } from '../service/inputs.js';
import { openService } from '../service/open-service.js';
import { packageVersion } from '../service/package-root.js';
import { human, print, table as textTable, type Output } from './cli-output.js';
import { EXIT, EXIT_CODES_HELP } from './exit-codes.js';
import { withProgress } from './progress-bar.js';

/** Where a command's output goes and how it ends; tests give their own. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
  /** Raw bytes to standard output (exports). */
  stdoutStream: NodeJS.WritableStream;
  /** Whether standard error is a terminal: long operations then show a progress bar by default. */
  stderrIsTTY?: boolean;
}

type Globals = { store?: string; server?: string; token?: string; actor?: string; json?: boolean; shard?: string };

/** A file the command reads; a missing or unreadable one is a usage error that names it. */
function inputFile(file: string): string {
  try {
    if (!statSync(file).isFile()) throw new Error('not a file');
    return file;
  } catch (e) {
    const why = (e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message;
    throw new BranchgraphError('invalid_input', `cannot read ${file}: ${why}`);
  }
}

function readInput(file: string): string {
  // Text that is not UTF-8 is refused, never read with replacement characters in place of what it held.
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(readFileSync(inputFile(file)));
  } catch (e) {
    if (!(e instanceof TypeError)) throw e;
    throw new BranchgraphError('invalid_input', `${file} is not valid UTF-8`, { issues: [{ path: file, message: 'not valid UTF-8' }] });
  }
}

type MergeFlags = {
  into?: string;
  dryRun?: boolean;
  width?: string;
  deleteBranch?: boolean;
  message?: string;
  author?: string;
  strategy?: string;
  resolutions?: string;
  conflictLimit?: string;
  conflictCursor?: string;
  expectSourceHead?: string;
  expectTargetHead?: string;
  idempotencyKey?: string;
  progress?: boolean;
};

/** A request's resolutions from the --strategy and --resolutions flags; undefined when neither was given. */
function resolutionsOf(strategy: string | undefined, file: string | undefined): Record<string, unknown> | undefined {
  const conflicts = file === undefined ? undefined : resolutionsFile(file);
  if (strategy === undefined && conflicts === undefined) return undefined;
  return { ...(strategy ? { strategy } : {}), ...(conflicts ? { conflicts } : {}) };
}

/** Conflict choices from a JSON file: an array of choices, or `{ "conflicts": [...] }` as a preview's report gives them. */
function resolutionsFile(file: string): unknown {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readInput(file)) as unknown;
  } catch (e) {
    if (e instanceof BranchgraphError) throw e;
    throw new BranchgraphError('invalid_input', `${file} is not JSON: ${(e as Error).message}`);
  }
  return Array.isArray(parsed) ? parsed : (parsed as { conflicts?: unknown } | null)?.conflicts;
}

function intOption(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v)) throw new BranchgraphError('invalid_input', `${name} must be a whole number, not ${JSON.stringify(v)}`, { issues: [{ path: name, message: 'a whole number' }] });
  return Number(v);
}

function whereOption(v: string | undefined): Filter | undefined {
  if (v === undefined) return undefined;
  try {
    return JSON.parse(v) as Filter;
  } catch {
    throw new BranchgraphError('invalid_input', `--where must be a JSON object such as '{"name":"Ada"}', not ${v}`, { issues: [{ path: '--where', message: 'JSON object' }] });
  }
}

/** Options of `serve`, with the configuration key each sets (see CONFIG_HELP for their variables). */
const SERVE_OPTIONS: [flags: string, key: string, description: string][] = [
  ['--host <host>', 'host', 'interface to listen on (HOST; default 127.0.0.1)'],
  ['--port <n>', 'port', 'port (PORT; default 8080; 0 picks a free one)'],
  ['--tokens <spec>', 'tokens', 'role:token[:identity],... (BRANCHGRAPH_TOKENS; unset: no auth)'],
  ['--log-level <level>', 'log-level', 'fatal|error|warn|info|debug|trace|silent (LOG_LEVEL)'],
  ['--merge-width <n>', 'merge-width', '1, 2 or 4 (BRANCHGRAPH_MERGE_WIDTH)'],
  ['--budget-bytes <n>', 'budget-bytes', 'preparation memory budget (BRANCHGRAPH_PREP_BUDGET_BYTES)'],
  ['--store-latency-ms <n>', 'store-latency-ms', 'inject latency per store call (benchmarks)'],
  ['--max-body-bytes <n>', 'max-body-bytes', 'largest request body (BRANCHGRAPH_MAX_BODY_BYTES)'],
  ['--max-ingest-bytes <n>', 'max-ingest-bytes', 'most bytes one ingest request may stream (BRANCHGRAPH_MAX_INGEST_BYTES)'],
  ['--drain-timeout-ms <n>', 'drain-timeout-ms', 'on SIGTERM, wait this long for in-flight requests'],
  ['--seal-after-ms <n>', 'seal-after-ms', 'seal an open WAL generation after this long'],
  ['--generation-rows <n>', 'generation-rows', 'seal a WAL generation at this many rows'],
];

export function cliProgram(io: CliIo, setExit: (code: number) => void): Command {
  // A usage mistake carries the stable code every transport gives bad input.
  const output = { writeOut: io.stdout, writeErr: io.stderr, outputError: (text: string, write: (t: string) => void) => write(text.replace(/^error: /, 'error [invalid_input]: ')) };
  const program = new Command('branchgraph');
  program
    .description('A typed graph store with Git-style branches and three-way entity merges.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addOption(new Option('--store <url>', 'embedded engine on this store: file://DIR, s3://bucket/prefix?..., memory:// (BRANCHGRAPH_STORE; default file://./data)'))
    .addOption(new Option('--server <url>', 'talk to a running server instead of opening the store').env('BRANCHGRAPH_SERVER'))
    .addOption(new Option('--token <token>', "the server's bearer token").env('BRANCHGRAPH_TOKEN'))
    .option('--actor <name>', 'who commits made here are by (embedded only; BRANCHGRAPH_ACTOR)')
    .option('--json', 'print results as JSON for programs')
    .showHelpAfterError('(run with --help for usage)')
    .configureOutput(output)
    .addHelpText('after', `\n${EXIT_CODES_HELP}\n`)
    .exitOverride();

  const globals = (cmd: Command): Globals => cmd.optsWithGlobals() as Globals;
  const outOf = (cmd: Command): Output => ({ json: globals(cmd).json === true, write: io.stdout });
  // One API whichever carries it: a running server, or the engine in this process.
  const connect = async (cmd: Command): Promise<BranchgraphApi> => {
    const g = globals(cmd);
    if (g.server !== undefined) return new RestClient(g.server.replace(/\/$/, ''), g.token);
    const config = loadConfig(process.env, { store: g.store, actor: g.actor, shard: g.shard });
    return embeddedApi(await openService(config), { transport: 'cli' });
  };
  /**
   * Run a long operation under a fresh operation id, with a progress bar unless asked not to: by
   * default on a terminal and not with --json; `--progress` draws line by line anywhere.
   */
  const followed = <T>(cmd: Command, flag: boolean | undefined, api: BranchgraphApi, start: (id: string | undefined) => Promise<T>): Promise<T> => {
    const tty = io.stderrIsTTY === true;
    const on = flag ?? (tty && globals(cmd).json !== true);
    return on ? withProgress((id) => api.getOperation(id), io.stderr, tty, start) : start(undefined);
  };
  /** A subcommand with the shared conventions: exit override, output, its own --help. */
  const command = (parent: Command, name: string, description: string): Command =>
    parent.command(name).description(description).exitOverride().configureOutput(output).showHelpAfterError('(run with --help for usage)');

  const serve = command(program, 'serve', 'run the HTTP server: REST, GraphQL and GraphiQL at /graphql, /metrics').option('--shard <name>', 'WAL writer identity (BRANCHGRAPH_SHARD)');
  for (const [flags, , description] of SERVE_OPTIONS) serve.option(flags, description);
  serve.addHelpText('after', `\nevery setting and its environment variable:${CONFIG_HELP}`);
  serve.action(async (_opts, cmd: Command) => {
    const o = cmd.optsWithGlobals() as Record<string, string | undefined>;
    const flags: Record<string, string | undefined> = { store: o.store, actor: o.actor, shard: o.shard };
    for (const [, key] of SERVE_OPTIONS) flags[key] = o[key.replace(/-(\w)/g, (_m, c: string) => c.toUpperCase())];
    const { serveUntilSignalled } = await import('./serve-command.js');
    await serveUntilSignalled(loadConfig(process.env, flags), io);
  });

  const branch = command(program, 'branch', 'list, create and delete branches');
  command(branch, 'list', 'branches by name with their heads, one page at a time')
    .option('--limit <n>', 'branches per page, 1-1000 (default 100)')
    .option('--cursor <cursor>', 'the page after a previous one (its next cursor)')
    .option('--all', 'every page, one after the other')
    .action(async (o: { limit?: string; cursor?: string; all?: boolean }, cmd: Command) => {
      const api = await connect(cmd);
      const limit = intOption('--limit', o.limit);
      const out: Awaited<ReturnType<BranchgraphApi['listBranches']>>['branches'] = [];
      let cursor: string | null | undefined = o.cursor;
      do {
        const page = await api.listBranches({ ...(limit !== undefined ? { limit } : {}), ...(cursor != null ? { cursor } : {}) });
        for (const d of page.damaged) io.stderr(`warning: branch ${d.name} cannot be read (${d.key}): ${d.error}\n`);
        out.push(...page.branches);
        cursor = page.nextCursor;
      } while (o.all === true && cursor !== null);
      print(outOf(cmd), out, human.branches);
      if (o.all !== true && cursor !== null && cursor !== undefined) io.stderr(`more branches follow: --cursor ${cursor}\n`);
    });
  command(branch, 'create', 'create a branch; it shares its parent data and copies nothing')
    .argument('<name>')
    .option('--from <ref>', 'branch or commit:<id> to start from (default main)')
    .action(async (name: string, o: { from?: string }, cmd: Command) =>
      print(outOf(cmd), await (await connect(cmd)).createBranch(name, o.from === undefined ? undefined : parseRef(o.from)), human.branch),
    );
  command(branch, 'delete', 'delete a branch (never main); its commits stay readable until GC')
    .argument('<name>')
    .action(async (name: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).deleteBranch(name), (r: { deleted: string }) => `deleted branch ${r.deleted}\n`));

  const tag = command(program, 'tag', 'list, create and delete tags: immutable names for commits, usable as tag:NAME wherever a ref is');
  command(tag, 'list', 'every tag with its commit').action(async (_o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).listTags(), human.tags));
  command(tag, 'create', 'name the commit a ref resolves to; tags never move')
    .argument('<name>')
    .option('--from <ref>', 'branch, commit:<id> or tag:<name> (default main)')
    .option('--message <text>', 'what the tag marks')
    .action(async (name: string, o: { from?: string; message?: string }, cmd: Command) =>
      print(
        outOf(cmd),
        await (await connect(cmd)).createTag(name, o.from === undefined ? undefined : parseRef(o.from), o.message),
        (t: { name: string; commit: string }) => `tag ${t.name} at ${t.commit}\n`,
      ),
    );
  command(tag, 'delete', 'remove a tag (admin); its commits stay while anything else reaches them')
    .argument('<name>')
    .action(async (name: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).deleteTag(name), (r: { deleted: string }) => `deleted tag ${r.deleted}\n`));

  command(program, 'merge', 'merge SOURCE into a branch: one atomic commit, or nothing and the exact conflicts (exit 3)')
    .argument('<source>')
    .option('--into <branch>', 'target branch (default main)')
    .option('--dry-run', 'say what would happen; publish nothing')
    .option('--width <n>', 'tables prepared at once: 1, 2 or 4')
    .option('--delete-branch', 'delete SOURCE after a successful merge')
    .option('--message <text>', 'commit message')
    .option('--author <name>', 'who the commit is for')
    .option('--strategy <strategy>', 'resolve every conflict no choice names: source-wins or target-wins')
    .option('--conflict-limit <n>', 'conflicts per page of the report, at most 1000 (default 100)')
    .option('--conflict-cursor <cursor>', "the next page of a report: the previous report's next cursor")
    .option('--resolutions <file>', 'JSON file of conflict choices: [{"table","key","property"?,"take","value"?,"expected"?}, ...]')
    .option('--expect-source-head <commit>', 'refuse unless the source is at this commit (as previewed)')
    .option('--expect-target-head <commit>', 'refuse unless the target is at this commit (as previewed)')
    .option('--idempotency-key <key>', 'a retry with the same key returns the first result instead of merging again')
    .option('--progress', 'draw a progress bar on standard error (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    .action(async (source: string, o: MergeFlags, cmd: Command) => {
      const { strategy, resolutions: file, expectSourceHead, expectTargetHead, progress: _progress, ...rest } = o;
      const resolutions = resolutionsOf(strategy, file);
      const input = parseInput(
        MergeInputZ,
        {
          ...rest,
          width: o.width === undefined ? undefined : Number(o.width),
          conflictLimit: intOption('--conflict-limit', o.conflictLimit),
          ...(resolutions ? { resolutions } : {}),
          ...(expectSourceHead ? { expectedSourceHead: expectSourceHead } : {}),
          ...(expectTargetHead ? { expectedTargetHead: expectTargetHead } : {}),
        },
        'flags',
      );
      const api = await connect(cmd);
      const r = await followed(cmd, o.progress, api, (id) => api.mergeBranch(source, input, undefined, id));
      print(outOf(cmd), r, human.merge);
      if (r.status !== 'success') setExit(EXIT.conflicts);
    });

  for (const [name, kind, on, what] of [
    ['cherry-pick', 'cherry_pick', '--onto', "replay one commit's change on a branch as a new one-parent commit"],
    ['revert', 'revert', '--on', "undo one commit's change on a branch, keeping later changes"],
  ] as const) {
    command(program, name, `${what} (exit 3 on conflicts, resolvable as for merge)`)
      .argument('<commit>', 'commit id (commit: prefix optional)')
      .option(`${on} <branch>`, 'the branch (default main)')
      .option('--dry-run', 'say what would happen; publish nothing')
      .option('--message <text>', 'commit message')
      .option('--strategy <strategy>', 'resolve every conflict no choice names: source-wins or target-wins')
      .option('--conflict-limit <n>', 'conflicts per page of the report, at most 1000 (default 100)')
      .option('--conflict-cursor <cursor>', "the next page of a report: the previous report's next cursor")
      .option('--resolutions <file>', 'JSON file of conflict choices, as for merge')
      .option('--expect-target-head <commit>', 'refuse unless the branch is at this commit (as previewed)')
      .action(async (commit: string, o: { onto?: string; on?: string; dryRun?: boolean; message?: string; strategy?: string; resolutions?: string; expectTargetHead?: string }, cmd: Command) => {
        const resolutions = resolutionsOf(o.strategy, o.resolutions);
        const input = parseInput(
          ApplyCommitZ,
          {
            commit: commit.replace(/^commit:/, ''),
            ...(o.dryRun ? { dryRun: true } : {}),
            ...(o.message ? { message: o.message } : {}),
            ...(o.expectTargetHead ? { expectedTargetHead: o.expectTargetHead } : {}),
            ...(resolutions ? { resolutions } : {}),
          },
          'flags',
        );
        const r = await (await connect(cmd)).applyCommit(kind, o.onto ?? o.on ?? 'main', input);
        print(outOf(cmd), r, human.merge);
        if (r.status !== 'success') setExit(EXIT.conflicts);
      });
  }

  command(program, 'rows', 'rows of a table in key order, a page at a time')
    .argument('<table>')
    .option('--at <ref>', 'branch or commit:<id> (default main)')
    .option('--where <json>', 'filter: {"prop": value} or {"prop": {"op": "gte", "value": 3}}')
    .option('--limit <n>', 'rows per page, at most 1000', '100')
    .option('--cursor <cursor>', 'continue after a previous page')
    .action(async (table: string, o: { at?: string; where?: string; limit: string; cursor?: string }, cmd: Command) => {
      const where = whereOption(o.where);
      const page = await (await connect(cmd)).rows(table, parseRef(o.at), { limit: intOption('--limit', o.limit), ...(o.cursor ? { cursor: o.cursor } : {}), ...(where ? { where } : {}) });
      print(outOf(cmd), page, human.rows);
    });
  command(program, 'get', 'one entity by key (edge keys are JSON arrays such as ["a","b"])')
    .argument('<table>')
    .argument('<key>')
    .option('--at <ref>', 'branch or commit:<id> (default main)')
    .action(async (table: string, key: string, o: { at?: string }, cmd: Command) => {
      const r = await (await connect(cmd)).getRow(table, key, parseRef(o.at));
      print(outOf(cmd), r, (v: typeof r) => human.rows({ items: [v], nextCursor: null }));
    });
  command(program, 'log', 'commits at a ref, newest first')
    .option('--at <ref>', 'branch or commit:<id> (default main)')
    .option('--limit <n>', 'how many, at most 1000', '20')
    .action(async (o: { at?: string; limit: string }, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).log(parseRef(o.at), intOption('--limit', o.limit)), human.commits));
  command(program, 'show', 'one commit with its tables')
    .argument('<commit>', 'commit id (commit: prefix optional)')
    .action(async (id: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).commit(id.replace(/^commit:/, '')), human.commit));
  command(program, 'diff', 'what changed: FROM TO (two-dot), or FROM...TO (three-dot: on TO since it and FROM diverged)')
    .argument('<from>', 'a ref, or FROM...TO')
    .argument('[to]')
    .option('--three-dot', 'changes on TO since its merge base with FROM (what merging TO into FROM brings)')
    .option('--limit <n>', 'changes per page, at most 10000 (default: all)')
    .option('--cursor <cursor>', 'continue after a previous page')
    .action(async (from: string, to: string | undefined, o: { threeDot?: boolean; limit?: string; cursor?: string }, cmd: Command) => {
      const dots = to === undefined ? /^(.+?)\.\.\.(.+)$/.exec(from) : null;
      if (to === undefined && dots === null) throw new BranchgraphError('invalid_input', 'diff takes FROM TO, or FROM...TO');
      const [a, b] = dots !== null ? [dots[1] as string, dots[2] as string] : [from, to as string];
      const mode = dots !== null || o.threeDot ? ('three-dot' as const) : ('two-dot' as const);
      const limit = intOption('--limit', o.limit);
      const r = await (await connect(cmd)).diff(parseRef(a), parseRef(b), { mode, ...(limit !== undefined ? { limit } : {}), ...(o.cursor ? { cursor: o.cursor } : {}) });
      print(outOf(cmd), r, human.diff);
    });

  command(program, 'load', 'bulk load NDJSON lines {"table","values","op"?} as one all-or-nothing commit')
    .argument('<branch>')
    .argument('<file>')
    .option('--progress', 'draw a progress bar on standard error (the default on a terminal)')
    .option('--no-progress', 'no progress bar')
    .action(async (branchName: string, file: string, o: { progress?: boolean }, cmd: Command) => {
      const api = await connect(cmd);
      const text = readInput(file);
      print(outOf(cmd), await followed(cmd, o.progress, api, (id) => api.load(branchName, text, id)), human.write);
    });
  command(program, 'ingest', 'append NDJSON operations to the WAL, streamed; generations seal as they fill')
    .argument('<branch>')
    .argument('<file>')
    .option('--shard <name>', 'WAL writer identity (embedded only; BRANCHGRAPH_SHARD)')
    .action(async (branchName: string, file: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).ingest(branchName, createReadStream(inputFile(file))), human.ingest));
  command(program, 'catchup', 'fold pending WAL generations into the tables now')
    .argument('<branch>')
    .option('--max-generations <n>', 'generations per batch; 0 removes the cap')
    .option('--serial', 'do not prepare the next batch while one commits')
    .action(async (branchName: string, o: { maxGenerations?: string; serial?: boolean }, cmd: Command) => {
      const input = parseInput(CatchUpInputZ, { maxGenerations: intOption('--max-generations', o.maxGenerations), pipeline: o.serial ? false : undefined }, 'flags');
      print(outOf(cmd), await (await connect(cmd)).catchUp(branchName, input));
    });
  command(program, 'wal', 'WAL status: watermarks, pending generations, last catch-up')
    .argument('<branch>')
    .action(async (branchName: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).walStatus(branchName), human.wal));
  command(program, 'compact', 'compact tables now (servers also compact in the background)')
    .argument('<branch>')
    .option('--full', 'rewrite each table as one run (default: size-tiered)')
    .option('--table <name...>', 'only these tables')
    .action(async (branchName: string, o: { full?: boolean; table?: string[] }, cmd: Command) => {
      const input = parseInput(CompactInputZ, { mode: o.full ? 'full' : undefined, tables: o.table }, 'flags');
      const r = await (await connect(cmd)).compact(branchName, input);
      print(outOf(cmd), r, (v: typeof r) => `${v.commit === null ? 'nothing was due' : `compacted as ${v.commit.id}`}\n${textTable(v.tables, ['table', 'runsBefore', 'runsAfter', 'runsMerged'])}`);
    });
  command(program, 'export', 'write a table at a ref for DuckDB, pyarrow or polars (pending WAL rows included)')
    .argument('<table>')
    .option('--at <ref>', 'branch or commit:<id> (default main)')
    .addOption(new Option('--format <format>', 'file format').choices([...EXPORT_FORMATS]).default('parquet'))
    .option('--out <file>', 'where to write; - for standard output (default TABLE.<format>)')
    .action(async (table: string, o: { at?: string; format: string; out?: string }, cmd: Command) => {
      const format = parseExportFormat(o.format);
      const { commit, body } = await (await connect(cmd)).exportTable(table, parseRef(o.at), format);
      const file = o.out ?? `${table}.${EXPORT_EXTENSIONS[format]}`;
      const sink = file === '-' ? io.stdoutStream : createWriteStream(file);
      let bytes = 0;
      for await (const chunk of body) {
        bytes += chunk.length;
        if (!sink.write(chunk)) await once(sink, 'drain');
      }
      if (file !== '-') await new Promise<void>((resolve, reject) => (sink as ReturnType<typeof createWriteStream>).end((e?: Error | null) => (e ? reject(e) : resolve())));
      if (file !== '-') print(outOf(cmd), { table, format, commit, file, bytes });
    });

  const schema = command(program, 'schema', 'read or apply the schema');
  command(schema, 'get', 'the schema text at a ref')
    .option('--at <ref>', 'branch or commit:<id> (default main)')
    .action(async (o: { at?: string }, cmd: Command) => {
      const r = await (await connect(cmd)).getSchema(parseRef(o.at));
      print(outOf(cmd), r, (v: typeof r) => `# commit ${v.commit}\n${v.text}\n`);
    });
  command(schema, 'apply', 'apply schema text from a file as a commit')
    .argument('<branch>')
    .argument('<file>')
    .action(async (branchName: string, file: string, _o, cmd: Command) => print(outOf(cmd), await (await connect(cmd)).applySchema(branchName, { schema: readInput(file) }), human.schema));

  command(program, 'gc', 'delete objects no live manifest references, older than the grace period')
    .option('--grace-seconds <n>', 'never less than 900')
    .option('--dry-run', 'report what would be deleted')
    .action(async (o: { graceSeconds?: string; dryRun?: boolean }, cmd: Command) => {
      print(outOf(cmd), await (await connect(cmd)).gc({ graceSeconds: intOption('--grace-seconds', o.graceSeconds), dryRun: o.dryRun === true }));
    });

  command(program, 'gqt', 'replay GQT case files (default gqt/*.gqt), one fresh graph per case; ends with N passed, N failed')
    .argument('[files...]')
    .addOption(new Option('--via <transport>', 'embedded engine, or a server process over REST or GraphQL').choices(['embedded', 'rest', 'graphql']).default('embedded'))
    .addHelpText('after', '\n  --store memory|fs|s3  the kind of store each case replays on, a fresh one per case (default fs)')
    .action(async (files: string[], o: { via: 'embedded' | 'rest' | 'graphql' }, cmd: Command) => {
      // `--store` is the program's option (a URL elsewhere); here it names a kind of store.
      const store = globals(cmd).store ?? 'fs';
      if (store !== 'memory' && store !== 'fs' && store !== 's3') throw new BranchgraphError('invalid_input', `gqt --store must be memory, fs or s3, not ${JSON.stringify(store)}`);
      // The GQT stack (drivers, Hono, Yoga) loads only for this command.
      setExit(await (await import('../gqt/gqt-cli.js')).runGqtCli({ via: o.via, store, files }));
    });
  return program;
}
