#!/usr/bin/env node
/**
 * The branchgraph command line: `serve`, and `branch`, `merge`, `load`,
 * `schema` and `gc` against the embedded engine (`--store URL`) or a running
 * server (`--server URL`). Results print as JSON. Exit codes: 0 success,
 * 1 error, 2 bad usage, 3 merge conflicts.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { RestClient } from '../http/rest-client.js';
import { BranchgraphError, toBranchgraphError } from '../model/errors.js';
import { CONFIG_HELP, loadConfig } from '../service/config.js';
import { CatchUpInputZ, CompactInputZ, MergeInputZ, parseInput, parseRef } from '../service/inputs.js';
import { openService } from '../service/open-service.js';
import { embeddedApi, type BranchgraphApi } from '../service/api.js';

const USAGE = `usage: branchgraph <command> [options]

commands:
  serve                                  run the HTTP server (REST, GraphQL at /graphql)
  branch list | create NAME [--from REF] | delete NAME
  merge SOURCE [--into B] [--dry-run] [--width 1|2|4] [--delete-branch] [--message M] [--author A]
  load BRANCH FILE.ndjson
  ingest BRANCH FILE.ndjson [--shard NAME]  append to the WAL (streamed; generations sealed as they fill)
  catchup BRANCH [--max-generations N] [--serial]  fold pending WAL generations into the tables
  wal BRANCH                             WAL status: watermarks, pending generations, last catch-up
  compact BRANCH [--full] [--table T]    compact tables now (servers also compact in the background)
  schema get [--at REF] | apply BRANCH FILE
  gc [--grace-seconds N] [--dry-run]
  gqt [--via embedded|rest|graphql] [--store memory|fs|s3] [FILES...]

target (all but serve and gqt):
  --store URL     embedded engine on this store (default file://./data)
  --server URL    a running server; --token T for its bearer token

serve options:${CONFIG_HELP}`;

function out(v: unknown): void {
  process.stdout.write(`${JSON.stringify(v, null, 2)}\n`);
}

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return command === undefined ? 2 : 0;
  }
  // The server and GQT stacks (Hono, Yoga) load only for the commands that use them,
  // so one-shot commands start in a fraction of the time.
  if (command === 'gqt') return (await import('../gqt/gqt-cli.js')).runGqtCli(rest);
  const { values: flags, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      store: { type: 'string' },
      server: { type: 'string' },
      token: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      tokens: { type: 'string' },
      actor: { type: 'string' },
      'log-level': { type: 'string' },
      'merge-width': { type: 'string' },
      'budget-bytes': { type: 'string' },
      'store-latency-ms': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'drain-timeout-ms': { type: 'string' },
      from: { type: 'string' },
      into: { type: 'string' },
      at: { type: 'string' },
      width: { type: 'string' },
      message: { type: 'string' },
      author: { type: 'string' },
      'dry-run': { type: 'boolean' },
      'delete-branch': { type: 'boolean' },
      'grace-seconds': { type: 'string' },
      shard: { type: 'string' },
      'seal-after-ms': { type: 'string' },
      'generation-rows': { type: 'string' },
      'max-generations': { type: 'string' },
      serial: { type: 'boolean' },
      full: { type: 'boolean' },
      table: { type: 'string' },
    },
  });
  const str = (k: keyof typeof flags): string | undefined => (typeof flags[k] === 'string' ? (flags[k] as string) : undefined);

  if (command === 'serve') {
    const config = loadConfig(process.env, {
      store: str('store'),
      host: str('host'),
      port: str('port'),
      tokens: str('tokens'),
      actor: str('actor'),
      'log-level': str('log-level'),
      'merge-width': str('merge-width'),
      'budget-bytes': str('budget-bytes'),
      'store-latency-ms': str('store-latency-ms'),
      'max-body-bytes': str('max-body-bytes'),
      'drain-timeout-ms': str('drain-timeout-ms'),
      shard: str('shard'),
      'seal-after-ms': str('seal-after-ms'),
      'generation-rows': str('generation-rows'),
    });
    const logger = pino({ level: config.logLevel });
    const { startServer } = await import('../http/server.js');
    const server = await startServer(config, logger);
    logger.info({ url: server.url, store: config.store, graphql: `${server.url}/graphql` }, 'branchgraph listening');
    process.stderr.write(`branchgraph listening on ${server.url} (store ${config.store}); GraphiQL at ${server.url}/graphql\n`);
    await new Promise<void>((resolve) => {
      const stop = (sig: string) => {
        logger.info({ signal: sig }, 'stopping: draining in-flight requests');
        void server.close().then(resolve);
      };
      process.once('SIGTERM', () => stop('SIGTERM'));
      process.once('SIGINT', () => stop('SIGINT'));
    });
    return 0;
  }

  const serverUrl = str('server');
  // One API whichever carries it: a running server, or the engine in this process.
  const connect = async (): Promise<BranchgraphApi> => {
    if (serverUrl !== undefined) return new RestClient(serverUrl.replace(/\/$/, ''), str('token'));
    const config = loadConfig(process.env, { store: str('store'), actor: str('actor'), 'merge-width': str('merge-width'), 'budget-bytes': str('budget-bytes'), shard: str('shard') });
    return embeddedApi(await openService(config), { transport: 'cli' });
  };

  switch (command) {
    case 'branch': {
      const [sub, name] = positionals;
      if (sub === 'list') {
        const { branches, damaged } = await (await connect()).listBranches();
        for (const d of damaged) process.stderr.write(`warning: branch ${d.name} cannot be read (${d.key}): ${d.error}\n`);
        out(branches);
      } else if (sub === 'create' && name) {
        const from = str('from');
        out(await (await connect()).createBranch(name, from === undefined ? undefined : parseRef(from)));
      } else if (sub === 'delete' && name) {
        out(await (await connect()).deleteBranch(name));
      } else return usage('branch list | create NAME [--from REF] | delete NAME');
      return 0;
    }
    case 'merge': {
      const [source] = positionals;
      if (source === undefined) return usage('merge SOURCE [--into B] ...');
      const width = str('width');
      const input = parseInput(
        MergeInputZ,
        {
          into: str('into'),
          dryRun: flags['dry-run'],
          deleteBranch: flags['delete-branch'],
          width: width === undefined ? undefined : Number(width),
          message: str('message'),
          author: str('author'),
        },
        'flags',
      );
      const r = await (await connect()).mergeBranch(source, input);
      out(r);
      return r.status === 'success' ? 0 : 3;
    }
    case 'load': {
      const [branch, file] = positionals;
      if (!branch || !file) return usage('load BRANCH FILE.ndjson');
      out(await (await connect()).load(branch, readFileSync(file, 'utf8')));
      return 0;
    }
    case 'ingest': {
      const [branch, file] = positionals;
      if (!branch || !file) return usage('ingest BRANCH FILE.ndjson [--shard NAME]');
      out(await (await connect()).ingest(branch, createReadStream(file)));
      return 0;
    }
    case 'catchup': {
      const [branch] = positionals;
      if (!branch) return usage('catchup BRANCH [--max-generations N] [--serial]');
      const max = str('max-generations');
      const input = parseInput(CatchUpInputZ, { maxGenerations: max === undefined ? undefined : Number(max), pipeline: flags.serial ? false : undefined }, 'flags');
      out(await (await connect()).catchUp(branch, input));
      return 0;
    }
    case 'compact': {
      const [branch] = positionals;
      if (!branch) return usage('compact BRANCH [--full] [--table T]');
      const table = str('table');
      const input = parseInput(CompactInputZ, { mode: flags.full ? 'full' : undefined, tables: table === undefined ? undefined : [table] }, 'flags');
      out(await (await connect()).compact(branch, input));
      return 0;
    }
    case 'wal': {
      const [branch] = positionals;
      if (!branch) return usage('wal BRANCH');
      out(await (await connect()).walStatus(branch));
      return 0;
    }
    case 'schema': {
      const [sub, branch, file] = positionals;
      if (sub === 'get') out(await (await connect()).getSchema(parseRef(str('at'))));
      else if (sub === 'apply' && branch && file) out(await (await connect()).applySchema(branch, { schema: readFileSync(file, 'utf8') }));
      else return usage('schema get [--at REF] | apply BRANCH FILE');
      return 0;
    }
    case 'gc': {
      const grace = str('grace-seconds');
      out(await (await connect()).gc({ graceSeconds: grace === undefined ? undefined : Number(grace), dryRun: flags['dry-run'] === true }));
      return 0;
    }
    default:
      return usage(`unknown command ${command}`);
  }
}

function usage(msg: string): number {
  process.stderr.write(`${msg}\n\n${USAGE}\n`);
  return 2;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (e: unknown) => {
    const err = e instanceof BranchgraphError ? e : toBranchgraphError(e);
    process.stderr.write(`error [${err.code}]: ${err.message}\n`);
    for (const i of err.issues.slice(0, 20)) process.stderr.write(`  ${i.path}: ${i.message}\n`);
    process.exit(err.code === 'invalid_input' ? 2 : 1);
  },
);
