/**
 * A peer's directory (`bench/peers/NAME`), its packages installed on first use. The peers' packages
 * (a native SQLite build, LanceDB with its own Arrow, PostGraphile on Node 22) are the bench's
 * alone: the service and its tests install none of them.
 */
import { execSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

export type Peer = 'sqlite' | 'lancedb' | 'postgraphile';

export function peerRoot(name: Peer): string {
  const root = path.resolve(`bench/peers/${name}`);
  if (!existsSync(path.join(root, 'node_modules'))) execSync('npm ci --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
  return root;
}
