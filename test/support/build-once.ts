/**
 * Vitest global setup: compile the package once, so tests that start the
 * command line in child processes run built JavaScript under plain Node
 * instead of paying tsx's start-up in every process. Emitted without a
 * type check (`--noCheck`): `npm test` type-checks the whole project just
 * before, and checking `src/` again here cost every run over a second.
 * Then the bundles (scripts/bundle.mjs): the command line that ships, and
 * the browser pages the server serves.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';

export default async function setup(): Promise<void> {
  await promisify(execFile)(path.resolve('node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json', '--noCheck']);
  await promisify(execFile)(process.execPath, [path.resolve('scripts/bundle.mjs'), '--clean']);
}
