/**
 * The server's process and its V8 flags. A server runs with
 * SERVER_NODE_FLAGS (package-root.ts); every other command runs on Node's
 * defaults, since a one-off command gains nothing from a 32 MiB young
 * generation and a large load would carry it at its peak. Node reads these
 * flags only as a process starts, so a command that serves, started
 * without them, runs in a child process that has them: the same script,
 * arguments, environment and standard streams. The parent passes on the
 * signals that stop a server and exits with the child's code. The child
 * stops, draining as on SIGTERM, when its channel to the parent closes, so
 * a parent killed outright does not leave a server holding the port and the
 * store.
 */
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { givenNodeFlags, hasNodeFlag } from '../model/node-flags.js';
import { SERVER_NODE_FLAGS } from '../service/package-root.js';

const PASSED_ON = ['SIGTERM', 'SIGINT', 'SIGHUP'] as const;

/** Does this process run with the server's flags, or its own choice of each? */
export function hasServerFlags(given: readonly string[] = givenNodeFlags()): boolean {
  return SERVER_NODE_FLAGS.every((f) => hasNodeFlag(f, given));
}

/**
 * This command again in a child process with the server's flags, resolving with its exit code
 * (128 + the signal's number when a signal ended it); undefined when this process has them.
 */
export function relaunchWithServerFlags(): Promise<number> | undefined {
  if (hasServerFlags()) return undefined;
  const [script, ...args] = process.argv.slice(1);
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, ...process.execArgv, script as string, ...args], {
    stdio: ['inherit', 'inherit', 'inherit', 'ipc'],
  });
  const passOn = (signal: NodeJS.Signals) => child.kill(signal);
  for (const s of PASSED_ON) process.on(s, passOn);
  return new Promise<number>((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      for (const s of PASSED_ON) process.off(s, passOn);
      resolve(code ?? 128 + (signal !== null ? constants.signals[signal] : 0));
    });
  });
}

/** Call `stop` when the process that started this one, over a channel, exits (a server started by relaunchWithServerFlags). */
export function stopWithParent(stop: () => void): void {
  if (process.channel === undefined) return;
  process.once('disconnect', stop);
  // The channel only watches the parent: it must not keep the server's process alive by itself.
  process.channel.unref();
}
