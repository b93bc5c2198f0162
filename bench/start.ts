/**
 * The first minutes, measured (prints one JSON line of figures):
 *
 *   tsx bench/start.ts RUNS
 *
 * - the installed command line (`dist/bin/branchgraph.js`, as `npm pack` ships it), started fresh
 *   RUNS times each for `--version` and for an embedded read (`rows Package --limit 10` on the
 *   sample graph's store): the median and the 95th percentile of the whole process, spawn
 *   included, on this Node and on Node 24 (`_node24`);
 * - `demo --no-serve` into an empty store: its time and the bytes it leaves on disk;
 * - the explorer in headless Chromium over the demo's server, a fresh page RUNS times: the first
 *   contentful paint and the time until the tables of main are shown, medians.
 *
 * Builds the package first when it is not built, and needs Debian's chromium.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { existsSync } from 'node:fs';
import puppeteer from 'puppeteer-core';

const run = promisify(execFile);
const CLI = path.resolve('dist/bin/branchgraph.js');

const quantile = (xs: number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))] as number;
};

async function timed(node: string, how: { args: string[]; runs: number }): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < how.runs; i++) {
    const started = performance.now();
    await run(node, [CLI, ...how.args]);
    out.push(performance.now() - started);
  }
  return out;
}

/** Node 24's binary, from npm's node@24 package (fetched on first use); undefined when it cannot be had. */
async function node24(): Promise<string | undefined> {
  if (process.versions.node.startsWith('24.')) return process.execPath;
  try {
    return (await run('npx', ['-y', 'node@24', '-p', 'process.execPath'])).stdout.trim();
  } catch {
    return undefined;
  }
}

/** The demo's server on a free port, until stopped. */
async function demoServer(store: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [CLI, 'demo', '--store', store, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
    env: { ...process.env, LOG_LEVEL: 'silent' },
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (d: Buffer) => {
      text += d.toString();
      const m = /(http:\/\/127\.0\.0\.1:\d+)\/ui\/explore\s/.exec(text);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (c) => reject(new Error(`the demo exited with ${c}`)));
  });
  return {
    url,
    stop: async () => {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

async function explorer(url: string, runs: number): Promise<{ paint: number[]; tables: number[] }> {
  // As the page tests start it: no network of its own, so no time goes to lookups that fail here.
  const browser = await puppeteer.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const paint: number[] = [];
  const tables: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.newPage();
      const started = Date.now();
      await page.goto(`${url}/ui/explore`, { waitUntil: 'load' });
      await page.waitForSelector('#table-list');
      tables.push(Date.now() - started);
      paint.push(await page.evaluate(() => performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? Number.NaN));
      await page.close();
    }
  } finally {
    await browser.close();
  }
  return { paint, tables };
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? '10');
  if (!existsSync(CLI)) await run('npm', ['run', '--silent', 'build']);
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-start-'));
  const store = path.join(dir, 'demo');
  try {
    const loadStarted = performance.now();
    const loaded = (await run(process.execPath, [CLI, 'demo', '--no-serve', '--store', store])).stdout;
    const demoSeconds = (performance.now() - loadStarted) / 1000;
    // The demo says what it left on disk.
    const demoMib = Number(/([\d.]+) MiB on disk/.exec(loaded)?.[1] ?? Number.NaN);
    const figures: Record<string, number> = {};
    // This Node, and the current LTS (Node 22.1 and later keep compiled code between runs; 20 cannot).
    for (const [suffix, node] of [
      ['', process.execPath],
      ['_node24', await node24()],
    ] as const) {
      if (node === undefined) continue;
      // One run first, so a compile cache is what a user's second command meets.
      await timed(node, { args: ['--version'], runs: 1 });
      const version = await timed(node, { args: ['--version'], runs });
      const read = await timed(node, { args: ['rows', 'Package', '--limit', '10', '--store', store], runs });
      figures[`version_ms_p50${suffix}`] = Math.round(quantile(version, 0.5));
      figures[`version_ms_p95${suffix}`] = Math.round(quantile(version, 0.95));
      figures[`embedded_read_ms_p50${suffix}`] = Math.round(quantile(read, 0.5));
      figures[`embedded_read_ms_p95${suffix}`] = Math.round(quantile(read, 0.95));
    }
    const server = await demoServer(store);
    const page = await explorer(server.url, runs).finally(() => server.stop());
    console.log(
      JSON.stringify({
        ...figures,
        demo_load_seconds: Math.round(demoSeconds * 100) / 100,
        demo_store_mib: demoMib,
        explorer_first_paint_ms: Math.round(quantile(page.paint, 0.5)),
        explorer_tables_shown_ms: Math.round(quantile(page.tables, 0.5)),
      }),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
