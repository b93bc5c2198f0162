/**
 * `branchgraph demo`: load the sample graph (service/sample-graph.ts) and serve it, then print
 * the pages to open. Against a running server (`--server`) it only loads. Run again, it finds the
 * graph already loaded and serves it as it is.
 */
import { statSync, readdirSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { CliContext, Globals } from '../cli-context.js';
import { embeddedService, serverApi } from '../engine-access.js';

interface DemoOptions {
  port?: string;
  host?: string;
  serve: boolean;
}

/** Bytes under a directory: what the demo takes on disk. */
function bytesUnder(dir: string): number {
  let n = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    n += e.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return n;
}

/** The local directory of a file store URL, or undefined for others. */
function storeDir(store: string): string | undefined {
  if (store.startsWith('file://')) return store.slice('file://'.length);
  return /^[a-z0-9]+:\/\//i.test(store) ? undefined : store;
}

export function demoCommands(program: Command, cli: CliContext): void {
  cli
    .command(program, 'demo', 'load a sample graph of real Debian packages and serve it, then print the pages to open')
    .option('--port <n>', 'port to serve on (PORT; default 8080, 0 picks a free one)')
    .option('--host <host>', 'address to serve on (HOST; default 127.0.0.1)')
    .option('--no-serve', 'only load the graph')
    // biome-ignore lint/complexity/useMaxParams: commander passes options and the command.
    .action(async (o: DemoOptions, cmd: Command) => {
      const g = cli.globals(cmd);
      // It goes on to serve: the whole command runs in the server's process.
      const relaunched = o.serve && g.server === undefined ? cli.io.relaunchWithServerFlags?.() : undefined;
      if (relaunched !== undefined) return cli.setExit(await relaunched);
      const { samplePackages, loadSampleGraph } = await import('../../service/sample-graph.js');
      const packages = await samplePackages();
      const started = performance.now();
      if (g.server !== undefined) {
        const made = await loadSampleGraph(await serverApi(g.server, g.token), packages);
        cli.io.stdout(loadedText(made, performance.now() - started));
        cli.io.stdout(urlsText(g.server.replace(/\/$/, ''), made.request));
        return;
      }
      const [service, { embeddedApi }, { loadConfig }] = await Promise.all([
        embeddedService(g),
        import('../../service/api.js'),
        import('../../service/config.js'),
      ]);
      const made = await loadSampleGraph(embeddedApi(service, { transport: 'cli' }), packages).finally(() => service.close());
      const dir = storeDir(loadConfig(process.env, { store: g.store }).store);
      cli.io.stdout(loadedText(made, performance.now() - started, dir !== undefined ? bytesUnder(dir) : undefined));
      if (!o.serve) return;
      await serve(cli, { g, o, request: made.request });
    });
}

async function serve(cli: CliContext, d: { g: Globals; o: DemoOptions; request: string }): Promise<void> {
  const [{ loadConfig }, { serveUntilSignalled }] = await Promise.all([import('../../service/config.js'), import('../serve-command.js')]);
  const { g, o } = d;
  // The pages to open stay on screen: request lines are logged only when LOG_LEVEL asks for them.
  const config = loadConfig({ LOG_LEVEL: 'warn', ...process.env }, { store: g.store, actor: g.actor, port: o.port, host: o.host });
  await serveUntilSignalled(config, cli.io, (url) => cli.io.stdout(urlsText(url, d.request)));
}

function loadedText(
  made: { counts: { packages: number; maintainers: number; sections: number; dependencies: number; entities: number }; loaded: boolean },
  ms: number,
  bytes?: number,
): string {
  const c = made.counts;
  const what = `${c.packages.toLocaleString('en')} Debian packages, ${c.maintainers} maintainers, ${c.sections} sections and ${c.dependencies.toLocaleString('en')} dependencies (${c.entities.toLocaleString('en')} entities)`;
  if (!made.loaded) return `The sample graph is already loaded: ${what}.\n`;
  const size = bytes !== undefined ? `, ${(bytes / (1 << 20)).toFixed(1)} MiB on disk` : '';
  return `Loaded the sample graph: ${what} in ${(ms / 1000).toFixed(1)} s${size}.\n`;
}

function urlsText(url: string, request: string): string {
  const pages: [string, string][] = [
    [`${url}/ui/explore`, 'the graph explorer'],
    [`${url}/ui/explore#at=main&table=Package&key=git`, 'git: its properties, dependencies, history and neighbourhood'],
    [`${url}/ui/explore#view=diff&from=main&to=triage`, 'what the triage branch changes, drawn on the graph'],
    [`${url}/ui${request !== '' ? `#request=${request}` : ''}`, 'the open merge request (it conflicts with main)'],
    [`${url}/graphql`, 'GraphiQL, with a typed API for the packages'],
  ];
  const width = Math.max(...pages.map(([u]) => u.length));
  return `\nOpen:\n${pages.map(([u, what]) => `  ${u.padEnd(width)}  ${what}`).join('\n')}\n\n`;
}
