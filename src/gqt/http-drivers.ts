/**
 * GQT over HTTP: one server per pass, started either as a real process
 * (`branchgraph serve`, what the CLI runner uses) or in this process (fast,
 * for the test suite). Each case gets a fresh hosted graph on it
 * (`POST /graphs`), deleted when the case ends. A case's `restart` stops
 * the server and starts a new one on the same store, so nothing survives
 * but what the store holds; later cases use the new server.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import pino from 'pino';
import { startServer } from '../http/server.js';
import { RestClient } from '../http/rest-client.js';
import { graphqlClient } from '../http/graphql-client.js';
import type { BranchgraphApi } from '../service/api.js';
import { loadConfig } from '../service/config.js';
import { cliCommand } from '../service/package-root.js';
import { ApiDriver, type ApiHost, type GqtDriver } from './api-driver.js';
import { postTyped, type TypedAnswer } from './gqt-driver.js';
import type { ObjectStore } from '../store/object-store.js';
import { newId } from '../model/new-id.js';

export interface ServerHandle {
  url: string;
  stop(): Promise<void>;
}

export type ServerLauncher = () => Promise<ServerHandle>;

/** `branchgraph serve` as a child process on a free port. */
export function processServer(
  storeUrl: string,
  opts: { args?: string[]; env?: Record<string, string>; warm?: 'rest' | 'graphql' } = {},
): ServerLauncher {
  const { args: extraArgs = [], env = {} } = opts;
  return async () => {
    const cli = cliCommand();
    // Cases check logs exactly: no background compaction adding commits of its own.
    const child: ChildProcess = spawn(
      cli.command,
      [...cli.args, 'serve', '--port', '0', '--store', storeUrl, '--log-level', 'warn', '--actor', 'gqt', ...extraArgs],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, COMPACTION_BACKGROUND: 'false', ...env },
      },
    );
    const url = await new Promise<string>((resolve, reject) => {
      let err = '';
      const timer = setTimeout(() => reject(new Error(`server did not start in 30 s: ${err}`)), 30_000);
      child.stderr?.on('data', (d: Buffer) => {
        err += d.toString();
        const m = /listening on (http:\/\/\S+)/.exec(err);
        if (m) {
          clearTimeout(timer);
          resolve(m[1] as string);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code}: ${err}`));
      });
    });
    if (opts.warm !== undefined) await warmUp(url, opts.warm === 'graphql');
    return {
      url,
      stop: () =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    };
  };
}

/** The same server in this process, with its own graph and caches (on `store` when given: a memory store outlives restarts). */
export function inProcessServer(storeUrl: string, store?: ObjectStore): ServerLauncher {
  return async () => {
    const s = await startServer(
      loadConfig({ COMPACTION_BACKGROUND: 'false' }, { store: storeUrl, port: '0', actor: 'gqt' }),
      pino({ level: 'silent' }),
      store ? { store } : {},
    );
    return { url: s.url, stop: () => s.close() };
  };
}

/** The one server of a GQT pass. */
/** Servers kept started ahead of the restarts that will need them (cases often restart twice in a row). */
const STANDBYS = 2;

export class PassServer {
  private handle: ServerHandle | undefined;
  /** The next servers, started ahead (and warmed) so a restart does not wait for a process to boot. */
  private readonly standbys: Promise<ServerHandle>[] = [];

  constructor(private readonly launch: ServerLauncher) {}

  get url(): string {
    if (this.handle === undefined) throw new Error('the pass server is not running');
    return this.handle.url;
  }

  /**
   * Stop the running server and switch to a new one on the same store. The new one was started
   * ahead, while cases ran, and has served nothing but a warm-up on a graph of its own: each case's
   * graph is hosted (opened on first request, its registry entry read on every request), so a
   * standby holds no state of it, as a freshly started process holds none. What is taken off the
   * case is only the process boot and the first requests' compilation, about 0.6 s and 0.3 s.
   */
  async restart(): Promise<void> {
    await this.handle?.stop();
    this.handle = undefined;
    const next = this.standbys.shift() ?? this.launch();
    while (this.standbys.length < STANDBYS) {
      const s = this.launch();
      // A standby that fails to start is reported by the restart that needs it.
      s.catch(() => undefined);
      this.standbys.push(s);
    }
    this.handle = await next;
  }

  async stop(): Promise<void> {
    const standbys = this.standbys.splice(0);
    await Promise.all([
      this.handle?.stop(),
      ...standbys.map((s) =>
        s.then(
          (h) => h.stop(),
          () => undefined,
        ),
      ),
    ]);
    this.handle = undefined;
  }
}

/**
 * A round of the common requests on a throw-away hosted graph of the server's own, so a standby's
 * code is compiled before a case's first request reaches it; the graph is deleted after.
 */
export async function warmUp(url: string, graphql: boolean): Promise<void> {
  const name = `warmup-${newId().toLowerCase()}`;
  const root = new RestClient(url);
  await root.createGraph(name);
  const api = new RestClient(`${url}/graphs/${name}`);
  try {
    await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n n: int?\n u: string? @unique }\nedge K: P -> P {}' });
    const rows = (side: string) => ({
      ops: [0, 1, 2].map((i) => ({ op: 'upsert' as const, table: 'P', values: { id: `${side}${i}`, n: i, u: `${side}${i}` } })),
    });
    await api.write({ branch: 'main', ...rows('m') });
    await api.createBranch({ name: 'w' });
    await api.write({ branch: 'w', ...rows('w') });
    await api.write({ branch: 'main', ops: [{ op: 'insert', table: 'K', values: { from: 'm0', to: 'm1' } }] });
    await api.mergeBranch({ source: 'w', dryRun: true });
    await api.mergeBranch({ source: 'w' });
    await api.rows({ table: 'P', at: 'main' });
    await api.diff({ from: 'main', to: 'w' });
    await api.log({ limit: 10 });
    if (graphql)
      await fetch(`${url}/graphs/${name}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"query":"{ branches { items { name } } }"}',
      }).then((r) => r.text());
  } finally {
    await root.deleteGraph(name).catch(() => undefined);
  }
}

/** A fresh graph on the pass server for one case; `base` follows the server across restarts. */
class CaseGraph {
  private constructor(
    private readonly server: PassServer,
    private readonly name: string,
  ) {}

  static async create(server: PassServer): Promise<CaseGraph> {
    const name = `case-${newId().toLowerCase()}`;
    await new RestClient(server.url).createGraph(name);
    return new CaseGraph(server, name);
  }

  get base(): string {
    return `${this.server.url}/graphs/${this.name}`;
  }

  restart(): Promise<void> {
    return this.server.restart();
  }

  async drop(): Promise<void> {
    await new RestClient(this.server.url).deleteGraph(this.name).catch(() => undefined);
  }
}

/** A case graph reached by one client of the operation table: REST or GraphQL. */
class ClientHost implements ApiHost {
  constructor(
    private readonly graph: CaseGraph,
    private readonly client: (base: string) => BranchgraphApi,
  ) {}

  api(): BranchgraphApi {
    return this.client(this.graph.base);
  }

  typedGraphql(branch: string, query: string): Promise<TypedAnswer> {
    return postTyped(this.graph.base, branch, query);
  }

  restart(): Promise<void> {
    return this.graph.restart();
  }

  close(): Promise<void> {
    return this.graph.drop();
  }
}

/** GQT over REST: the REST client, derived from the operation table. */
export async function openRestDriver(server: PassServer): Promise<GqtDriver> {
  return new ApiDriver('rest', new ClientHost(await CaseGraph.create(server), (base) => new RestClient(base)));
}

/** GQT over GraphQL: the GraphQL client, derived from the same table (http/graphql-client.ts). */
export async function openGraphqlDriver(server: PassServer): Promise<GqtDriver> {
  return new ApiDriver('graphql', new ClientHost(await CaseGraph.create(server), (base) => graphqlClient(`${base}/graphql`)));
}
