/**
 * The command line as `npm start` runs it: bundled from this tree's sources
 * first (so a bench measures the code it sits beside, never a stale build),
 * and run with the server's Node flags. Servers a bench times against a
 * peer run this way, in their best shape, not under the TypeScript loader.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { builtCli, packageRoot, SERVER_NODE_FLAGS } from '../src/service/package-root.js';

export function bundledCli(): { command: string; args: string[] } {
  const root = packageRoot();
  execFileSync(process.execPath, [path.join(root, 'scripts', 'bundle.mjs'), 'cli']);
  return { command: process.execPath, args: [...SERVER_NODE_FLAGS, builtCli(root)] };
}
