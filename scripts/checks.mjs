/**
 * The checks `npm test` makes before its suite: the type check of the package and of the UI,
 * and Biome's lint and format check, run at once rather than one after another (about 13 s in
 * a row on two cores, 10 s together). Each one's output is printed whole once it ends, so the
 * three never interleave; the exit code is the first failure's, or 0. The commands are those of
 * the package's `typecheck` and `lint` scripts, spelt here rather than run through npm: the
 * main type check takes most of the time, and `npm run typecheck` would run the UI's after it.
 */
import { spawn } from 'node:child_process';

const checks = [
  ['tsc', ['--noEmit', '-p', 'tsconfig.json']],
  ['tsc', ['--noEmit', '-p', 'ui/tsconfig.json']],
  ['biome', ['ci']],
];

function run([bin, args]) {
  return new Promise((resolve) => {
    const child = spawn(`node_modules/.bin/${bin}`, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('error', (e) => resolve({ code: 1, out: `${bin}: ${e.message}\n` }));
    child.on('close', (code) => resolve({ code: code ?? 1, out }));
  });
}

const results = await Promise.all(checks.map(run));
let code = 0;
results.forEach((r, i) => {
  const [bin, args] = checks[i];
  if (r.code !== 0) {
    process.stderr.write(`✗ ${bin} ${args.join(' ')}\n${r.out}`);
    code ||= r.code;
  }
});
process.exit(code);
