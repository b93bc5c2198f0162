import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PEOPLE_SCHEMA } from './support/fixtures.js';
import { builtCli, cliCommand, SERVER_NODE_FLAGS } from '../src/service/package-root.js';

const run = promisify(execFile);
// Built by the suite's global setup: plain Node starts the CLI several times faster than tsx.
const main = builtCli(path.resolve('.'));
const node = process.execPath;

async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await run(node, [main, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, stdout: x.stdout, stderr: x.stderr };
  }
}

/** A command's exit code, failing with its stderr so an unexpected code says why. */
async function codeOf(args: string[]): Promise<string> {
  const r = await cli(args);
  return r.code === 0 ? '0' : `${r.code}: ${r.stderr}`;
}

/** The URL a starting server prints on its listening line. */
function listeningUrl(child: ChildProcessByStdio<null, Readable, Readable>): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    let err = '';
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`the server exited ${code}: ${err}`)));
  });
}

/** Start `branchgraph serve` and wait for its listening line. */
async function serve(args: string[]) {
  const child = spawn(node, [main, 'serve', '--port', '0', '--log-level', 'warn', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  return { child, url: await listeningUrl(child) };
}

describe('command line', () => {
  it("runs one-off commands on Node's defaults and servers with the server's V8 flags", async () => {
    for (const file of ['src/cli/main.ts', main]) expect((await readFile(file, 'utf8')).split('\n')[0]).toBe('#!/usr/bin/env node');
    const pkg = JSON.parse(await readFile('package.json', 'utf8')) as { scripts: { start: string; demo: string } };
    expect(pkg.scripts.start).toContain(`node ${SERVER_NODE_FLAGS.join(' ')} `);
    expect(pkg.scripts.demo).toContain(`node ${SERVER_NODE_FLAGS.join(' ')} `);
    expect(cliCommand().args.slice(0, SERVER_NODE_FLAGS.length)).toEqual([...SERVER_NODE_FLAGS]);
  });

  it("serve started without the server's flags serves from a child process with them, which stops when its parent is killed", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-relaunch-'));
    const { child, url } = await serve(['--store', `file://${dir}/data`]);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    const { stdout } = await run('ps', ['-ww', '-o', 'args=', '--ppid', String(child.pid)]);
    const server = stdout.split('\n').filter((l) => l.includes(' serve '));
    expect(server).toHaveLength(1);
    expect(server[0]?.split(' ').slice(1, 1 + SERVER_NODE_FLAGS.length)).toEqual([...SERVER_NODE_FLAGS]);
    // The server shares the parent's standard error: it ends when both processes have exited.
    const ended = new Promise((r) => child.stderr.once('end', r));
    child.kill('SIGKILL');
    await ended;
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 60_000);

  it('the built executable exits with the code the command line chose', async () => {
    // The commands themselves are tested in-process (src/cli/run-cli.test.ts); this is the process edge.
    const version = await cli(['--version']);
    expect([version.code, version.stdout.trim()]).toEqual([0, JSON.parse(await readFile('package.json', 'utf8')).version]);
    expect((await cli(['frobnicate'])).code).toBe(2);
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-cli-'));
    const missing = await cli(['merge', 'nope', '--store', `file://${dir}/data`]);
    expect([missing.code, missing.stderr]).toEqual([4, 'error [not_found]: branch nope does not exist\n']);
  }, 60_000);

  it('talks to a running server, and SIGTERM drains in-flight requests before exiting', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-srv-'));
    // The schema goes in embedded, at full speed; the server then runs with every store call slowed.
    await writeFile(path.join(dir, 'schema.bg'), PEOPLE_SCHEMA);
    expect(await codeOf(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), '--store', `file://${dir}/data`])).toBe('0');
    const { child, url } = await serve(['--store', `file://${dir}/data`, '--store-latency-ms', '100']);
    const listed = await cli(['branch', 'list', '--server', url, '--json']);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    expect(JSON.stringify(JSON.parse(listed.stdout))).toContain('"main"');
    // A slow request in flight when SIGTERM arrives still completes.
    const inflight = fetch(`${url}/branches/main/writes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ ops: [{ op: 'insert', table: 'Person', values: { id: 'z', name: 'Z' } }] }),
    });
    // With 100 ms per store call the write takes well over a second; 300 ms in, its request has surely
    // reached the handler (a connection that has not sent a request yet may be closed at shutdown).
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGTERM');
    const res = await inflight;
    expect(res.status).toBe(200);
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    expect(code).toBe(0);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  }, 120_000);

  it('demo loads the sample graph once, serves it, prints the pages to open, and never writes over another graph', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-demo-'));
    const store = `file://${dir}/data`;
    const loaded = await cli(['demo', '--no-serve', '--store', store]);
    expect([loaded.code, loaded.stderr]).toEqual([0, '']);
    expect(loaded.stdout).toMatch(
      /^Loaded the sample graph: 2,695 Debian packages, 429 maintainers, 40 sections and 10,977 dependencies \(19,531 entities\) in [\d.]+ s, [\d.]+ MiB on disk\.$/m,
    );
    // Again, it is found rather than loaded twice, and served.
    const child = spawn(node, [main, 'demo', '--store', store, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'silent' },
    });
    const out = await new Promise<string>((resolve, reject) => {
      let text = '';
      child.stdout.on('data', (d: Buffer) => {
        text += d.toString();
        if (/GraphiQL/.test(text)) resolve(text);
      });
      child.once('exit', (c) => reject(new Error(`demo exited with ${c}: ${text}`)));
    });
    expect(out).toContain('The sample graph is already loaded');
    const url = /(http:\/\/127\.0\.0\.1:\d+)\/ui\/explore\s/.exec(out)?.[1] as string;
    const request = /\/ui#request=(\w+)\s/.exec(out)?.[1] as string;
    const q = (await (await fetch(`${url}/merge-requests/${request}`)).json()) as {
      source: string;
      target: string;
      state: string;
      mergeability: { reasons: string[] };
    };
    expect(q).toMatchObject({ source: 'triage', target: 'main', state: 'open' });
    expect(q.mergeability.reasons.join(' ')).toContain('conflict');
    expect((await fetch(`${url}/ui/explore`)).status).toBe(200);
    const tables = (await (await fetch(`${url}/tables?at=tag:bookworm`)).json()) as { tables: { name: string; storedRows: number }[] };
    expect(Object.fromEntries(tables.tables.map((t) => [t.name, t.storedRows]))).toEqual({
      DependsOn: 10_977,
      InSection: 2695,
      MaintainedBy: 2695,
      Maintainer: 429,
      Package: 2695,
      Section: 40,
    });
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    // A store that holds another graph is left alone.
    await writeFile(path.join(dir, 'schema.bg'), PEOPLE_SCHEMA);
    expect(await codeOf(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), '--store', `file://${dir}/other`])).toBe('0');
    const refused = await cli(['demo', '--no-serve', '--store', `file://${dir}/other`]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(
      /^error \[graph_exists\]: the store already holds a graph \(tables [^)]*Person[^)]*\); load the demo into another with --store/,
    );
  }, 120_000);

  it('refuses a port in use with a clear message and exit 2, not a stack trace', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-port-'));
    const { child, url } = await serve(['--store', `file://${dir}/a`]);
    const port = new URL(url).port;
    const second = await cli(['serve', '--port', port, '--store', `file://${dir}/b`, '--log-level', 'silent']);
    expect(second.code).toBe(2);
    expect(second.stderr).toBe(
      `error [invalid_input]: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE); choose another with --port or PORT\n`,
    );
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }, 120_000);

  it('stops the server started by npm start when npm is signalled', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-npm-'));
    const npm = spawn('npm', ['start', '--silent'], {
      env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', BRANCHGRAPH_STORE: `file://${dir}/data` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const url = await listeningUrl(npm);
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    npm.kill('SIGTERM');
    const t0 = Date.now();
    let up = true;
    while (up && Date.now() - t0 < 20_000) {
      up = await fetch(`${url}/healthz`).then(
        () => true,
        () => false,
      );
      if (up) await new Promise((r) => setTimeout(r, 200));
    }
    expect(up).toBe(false);
  }, 120_000);
});
