/**
 * `branchgraph serve`: run the server until a signal, then drain. A port
 * in use is a clear error, not a stack trace. Started by `npm start`, the
 * server also stops when npm goes away: npm runs it through a shell that
 * does not pass every signal on, and a server outliving the command that
 * started it holds the port and the store.
 */
import pino from 'pino';
import type { Config } from '../service/config.js';
import { BranchgraphError } from '../model/errors.js';
import type { CliIo } from './cli-context.js';
import { stopWithParent } from './server-process.js';

export async function serveUntilSignalled(config: Config, io: Pick<CliIo, 'stderr'>, onListening?: (url: string) => void): Promise<void> {
  // A server is a production process unless told otherwise: graphql-js, loaded below, checks every
  // type test against a second copy of itself outside production, which costs each field it
  // resolves.
  process.env.NODE_ENV ??= 'production';
  const logger = pino({ level: config.logLevel });
  const { startServer } = await import('../http/server.js');
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config, logger);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      const why = code === 'EADDRINUSE' ? 'the port is in use' : code === 'EACCES' ? 'permission denied' : 'no such address here';
      throw new BranchgraphError(
        'invalid_input',
        `cannot listen on ${config.host}:${config.port}: ${why} (${code}); choose another with --port or PORT`,
        { cause: e },
      );
    }
    throw e;
  }
  logger.info({ url: server.url, store: config.store, graphql: `${server.url}/graphql` }, 'branchgraph listening');
  io.stderr(`branchgraph listening on ${server.url} (store ${config.store}); GraphiQL at ${server.url}/graphql\n`);
  onListening?.(server.url);
  const signals = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;
  let onSignal: (signal: NodeJS.Signals) => void = () => undefined;
  await new Promise<void>((resolve) => {
    let stopping = false;
    const stop = (why: string): void => {
      if (stopping) return;
      stopping = true;
      logger.info({ reason: why }, 'stopping: draining in-flight requests');
      void server.close().then(resolve);
    };
    // Each signal is heard every time (a terminal's ^C reaches both a server and the process that
    // started it, which passes it on): a second must not end the drain the first began.
    onSignal = (signal) => stop(signal);
    for (const s of signals) process.on(s, onSignal);
    stopWithParent(() => stop('the command that started the server exited'));
    if (process.env.npm_lifecycle_event !== undefined) {
      const parent = process.ppid;
      setInterval(() => {
        if (process.ppid !== parent) stop('the npm process that started the server exited');
      }, 500).unref();
    }
  });
  for (const s of signals) process.off(s, onSignal);
}
