/**
 * The bundles `npm run build` makes after tsc:
 *
 * - `dist/bin/`: the command line, one file per lazily loaded part (esbuild's code splitting), so
 *   Node resolves and compiles a few dozen files instead of some 450: an embedded read starts in
 *   about two thirds of the time. Packages stay outside the bundle and load from node_modules.
 * - `dist/ui/`: the browser pages (ui/), each one script with what it imports, served by the
 *   server as they are, so the service needs no bundler at run time.
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const only = process.argv[2];

const BUNDLED = new Set(['zod', 'apache-arrow']);

/** Every package the service depends on, but the bundled ones, with their subpaths. */
function external() {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  return Object.keys(pkg.dependencies)
    .filter((name) => !BUNDLED.has(name))
    .flatMap((name) => [name, `${name}/*`]);
}

if (only === undefined || only === 'cli') {
  await rm(path.join(root, 'dist', 'bin'), { recursive: true, force: true });
  await build({
    entryPoints: { branchgraph: path.join(root, 'src', 'cli', 'main.ts') },
    outdir: path.join(root, 'dist', 'bin'),
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Packages load from node_modules, except the two every command needs: zod (the operation
    // table) and apache-arrow (runs). Bundled, they are two files to resolve instead of some 240.
    external: external(),
    chunkNames: 'parts/[name]-[hash]',
    logLevel: 'warning',
  });
}

if (only === undefined || only === 'ui') {
  // Built aside and renamed into place, so a server reading the pages meanwhile (tests run in
  // parallel, a running demo) never sees a file half written.
  const ui = path.join(root, 'dist', 'ui');
  const aside = `${ui}.${process.pid}`;
  await build({
    entryPoints: {
      review: path.join(root, 'ui', 'review', 'main.ts'),
      explorer: path.join(root, 'ui', 'explorer', 'main.ts'),
      style: path.join(root, 'ui', 'shared', 'style.css'),
    },
    outdir: aside,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'linked',
    logLevel: 'warning',
  });
  await mkdir(ui, { recursive: true });
  for (const name of await readdir(aside)) await rename(path.join(aside, name), path.join(ui, name));
  await rm(aside, { recursive: true, force: true });
}
