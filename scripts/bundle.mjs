/**
 * The bundles of the package, made by `npm run build` after tsc (and by `npm start`, `npm run
 * demo`, which need only these):
 *
 * - `dist/bin/`: the command line, one file per lazily loaded part (esbuild's code splitting), so
 *   Node resolves and compiles a few dozen files instead of some 450 and `--version` never loads
 *   the engine. Packages load from node_modules, but the two every command needs.
 * - `dist/ui/`: the browser pages (ui/), each one script with what it imports, served by the
 *   server as they are, so the service needs no bundler at run time.
 *
 * Each is built aside and moved in file by file, parts before the files that import them, so a
 * process starting or a server reading meanwhile (tests run in parallel, a demo may be serving)
 * never meets a file half written or a part missing. Parts have content hashes, so old ones stay
 * until `--clean` (what `npm run build` passes) removes what the new build does not use.
 *
 *   node scripts/bundle.mjs [cli|ui] [--clean]
 */
import { readFileSync } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const only = args.find((a) => !a.startsWith('--'));
const clean = args.includes('--clean');

// zod (the operation table) and apache-arrow (runs): bundled, they are two files to compile
// instead of some 240 to resolve and load.
const BUNDLED = new Set(['zod', 'apache-arrow']);

/** Every package the service depends on, but the bundled ones, with their subpaths. */
function external() {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  return Object.keys(pkg.dependencies)
    .filter((name) => !BUNDLED.has(name))
    .flatMap((name) => [name, `${name}/*`]);
}

/** Every file under `dir`, relative to it, deepest first: parts before the entry that imports them. */
async function filesUnder(dir, under = '') {
  const out = [];
  for (const e of await readdir(path.join(dir, under), { withFileTypes: true })) {
    const rel = path.join(under, e.name);
    if (e.isDirectory()) out.unshift(...(await filesUnder(dir, rel)));
    else out.push(rel);
  }
  return out;
}

/** Builds into a directory beside `out`, then moves each file into `out`. */
async function buildInto(out, options) {
  const aside = `${out}.${process.pid}`;
  await build({ ...options, outdir: aside, logLevel: 'warning' });
  const made = await filesUnder(aside);
  for (const rel of made) {
    await mkdir(path.dirname(path.join(out, rel)), { recursive: true });
    await rename(path.join(aside, rel), path.join(out, rel));
  }
  await rm(aside, { recursive: true, force: true });
  if (!clean) return;
  const kept = new Set(made);
  for (const rel of await filesUnder(out)) if (!kept.has(rel)) await rm(path.join(out, rel));
}

if (only === undefined || only === 'cli')
  await buildInto(path.join(root, 'dist', 'bin'), {
    entryPoints: { branchgraph: path.join(root, 'src', 'cli', 'main.ts') },
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    external: external(),
    chunkNames: 'parts/[name]-[hash]',
  });

if (only === undefined || only === 'ui')
  await buildInto(path.join(root, 'dist', 'ui'), {
    entryPoints: {
      review: path.join(root, 'ui', 'review', 'main.ts'),
      explorer: path.join(root, 'ui', 'explorer', 'main.ts'),
      style: path.join(root, 'ui', 'shared', 'style.css'),
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'linked',
  });
