/** `branchgraph serve`: every setting as a flag, beside its environment variable. */
import type { Command } from 'commander';
import { CONFIG_HELP, loadConfig } from '../../service/config.js';
import type { CliContext } from '../cli-context.js';

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
  ['--cors-origins <list>', 'cors-origins', 'origins browsers may call the API from, comma-separated, or * (BRANCHGRAPH_CORS_ORIGINS)'],
  [
    '--advertise-url <url>',
    'advertise-url',
    "where the graph's other servers reach this one, e.g. http://10.0.0.5:{port} (BRANCHGRAPH_ADVERTISE_URL)",
  ],
  ['--hook-allowlist <hosts>', 'hook-allowlist', 'hosts webhooks may call: host, host:port, *.domain (BRANCHGRAPH_HOOK_ALLOWLIST)'],
  [
    '--embedder <url>',
    'embedder',
    'what fills @embed vectors: local (default) or an OpenAI-compatible embeddings URL (BRANCHGRAPH_EMBEDDER)',
  ],
];

export function serveCommands(program: Command, cli: CliContext): void {
  const serve = cli
    .command(program, 'serve', 'run the HTTP server: REST, GraphQL and GraphiQL at /graphql, /metrics')
    .option('--shard <name>', 'WAL writer identity (BRANCHGRAPH_SHARD)');
  for (const [flags, , description] of SERVE_OPTIONS) serve.option(flags, description);
  serve.addHelpText('after', `\nevery setting and its environment variable:${CONFIG_HELP}`);
  serve.action(async (_opts, cmd: Command) => {
    const o = cmd.optsWithGlobals() as Record<string, string | undefined>;
    const flags: Record<string, string | undefined> = { store: o.store, actor: o.actor, shard: o.shard };
    for (const [, key] of SERVE_OPTIONS) flags[key] = o[key.replace(/-(\w)/g, (_m, c: string) => c.toUpperCase())];
    const relaunched = cli.io.relaunchWithServerFlags?.();
    if (relaunched !== undefined) return cli.setExit(await relaunched);
    const { serveUntilSignalled } = await import('../serve-command.js');
    await serveUntilSignalled(loadConfig(process.env, flags), cli.io);
  });
}
