import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The directory holding package.json, found by walking up from this file,
 * so contract files (openapi.yaml, schema/) resolve the same from src/
 * under tsx and from dist/ after a build.
 */
export function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const up = path.dirname(dir);
    if (up === dir) throw new Error(`package.json not found above ${fileURLToPath(import.meta.url)}`);
    dir = up;
  }
  return dir;
}

/**
 * The V8 flags a server runs with (`npm start`, and a command that serves
 * starts a child process with them when it was started without:
 * cli/server-process.ts): a young generation of up to 32 MiB per half. A
 * request's garbage (decoded rows, GraphQL results) then dies in the young
 * generation instead of being promoted and marked again: the query
 * benchmark's two-hop traversal ran 0.73-0.78 of PostGraphile's speed with
 * 16 MiB, 0.81-0.98 with 32 and 0.94-1.04 with 64. The young generation's
 * collections stop the loop, and for longer the more of it survives: with
 * 64 MiB, requests that build much that lives (a large typed schema, a
 * load's chunk) held the loop 101-148 ms in collections alone; with 32 the
 * longest holds measured 102-116 ms, in 3 of 36 (bench/loop-stall.ts).
 * Other commands run without them.
 */
export const SERVER_NODE_FLAGS = ['--max-semi-space-size=32'] as const;

/**
 * How to start this package's own command line in a child process: built
 * JavaScript under plain Node when this code runs built (fast start), the
 * TypeScript source through tsx's loader otherwise (tests run the source).
 * Either way it carries the server's flags, so a server started this way
 * is the server itself, not a launcher in front of it, and its pid is the
 * one to signal, kill or measure.
 */
export function cliCommand(): { command: string; args: string[] } {
  const root = packageRoot();
  if (fileURLToPath(import.meta.url).endsWith('.js')) return { command: process.execPath, args: [...SERVER_NODE_FLAGS, builtCli(root)] };
  const loader = pathToFileURL(createRequire(path.join(root, 'package.json')).resolve('tsx')).href;
  return { command: process.execPath, args: [...SERVER_NODE_FLAGS, '--import', loader, path.join(root, 'src', 'cli', 'main.ts')] };
}

/** The built command line: the bundle `npm run build` makes (scripts/bundle.mjs), or tsc's output without it. */
export function builtCli(root: string = packageRoot()): string {
  const bundle = path.join(root, 'dist', 'bin', 'branchgraph.js');
  return existsSync(bundle) ? bundle : path.join(root, 'dist', 'src', 'cli', 'main.js');
}

/** This package's version, from its package.json. */
export function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')) as { version: string }).version;
}
