import { execFile, spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { PEOPLE_SCHEMA } from './support/fixtures.js';

const run = promisify(execFile);
// Built by the suite's global setup: plain Node starts the CLI several times faster than tsx.
const main = path.resolve('dist/src/cli/main.js');
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
  it('drives a branch → load → merge round on the embedded store, with exit codes', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-cli-'));
    const store = ['--store', `file://${dir}/data`];
    await writeFile(path.join(dir, 'schema.bg'), PEOPLE_SCHEMA);
    await writeFile(path.join(dir, 'people.ndjson'), '{"table":"Person","values":{"id":"a","name":"Ann"}}\n');
    expect(await codeOf(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), ...store])).toBe('0');
    expect(await codeOf(['branch', 'create', 'feature', ...store])).toBe('0');
    expect(await codeOf(['load', 'feature', path.join(dir, 'people.ndjson'), ...store])).toBe('0');
    const merged = await cli(['merge', 'feature', '--width', '4', '--json', ...store]);
    expect(merged.code).toBe(0);
    expect(JSON.parse(merged.stdout)).toMatchObject({ status: 'success', outcome: 'fast_forward' });
    const branches = JSON.parse((await cli(['branch', 'list', '--json', ...store])).stdout) as { name: string }[];
    expect(branches.map((b) => b.name)).toEqual(['feature', 'main']);
    const bad = await cli(['merge', 'feature', '--width', '3', ...store]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('invalid_input');
    expect((await cli(['frobnicate'])).code).toBe(2);
    // WAL: ingest streams a file into this shard; status shows it pending; catch-up folds it.
    await writeFile(path.join(dir, 'more.ndjson'), '{"table":"Person","values":{"id":"b","name":"Bo"}}\n{"table":"Person","values":{"id":"c","name":"Cy"}}\n');
    const ingested = await cli(['ingest', 'main', path.join(dir, 'more.ndjson'), '--shard', 'cli-1', '--json', ...store]);
    expect(JSON.parse(ingested.stdout)).toMatchObject({ shard: 'cli-1', operations: 2, inserted: 2 });
    expect(JSON.parse((await cli(['wal', 'main', '--json', ...store])).stdout)).toMatchObject({ pendingGenerations: 1, shards: [{ shard: 'cli-1', pendingGenerations: 1 }] });
    expect(JSON.parse((await cli(['catchup', 'main', '--serial', '--json', ...store])).stdout)).toMatchObject({ outcome: 'caught_up', generations: 1, pendingAfter: 0 });
    expect((await cli(['catchup', 'main', '--max-generations', 'x', ...store])).code).toBe(2);
  }, 60_000);

  it('talks to a running server, and SIGTERM drains in-flight requests before exiting', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-srv-'));
    const { child, url } = await serve(['--store', `file://${dir}/data`, '--store-latency-ms', '100']);
    await writeFile(path.join(dir, 'schema.bg'), PEOPLE_SCHEMA);
    expect(await codeOf(['schema', 'apply', 'main', path.join(dir, 'schema.bg'), '--server', url])).toBe('0');
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
  }, 60_000);

  it('refuses a port in use with a clear message and exit 2, not a stack trace', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-port-'));
    const { child, url } = await serve(['--store', `file://${dir}/a`]);
    const port = new URL(url).port;
    const second = await cli(['serve', '--port', port, '--store', `file://${dir}/b`, '--log-level', 'silent']);
    expect(second.code).toBe(2);
    expect(second.stderr).toBe(`error [invalid_input]: cannot listen on 127.0.0.1:${port}: the port is in use (EADDRINUSE); choose another with --port or PORT\n`);
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }, 60_000);

  it('stops the server started by npm start when npm is signalled', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'bg-npm-'));
    const npm = spawn('npm', ['start', '--silent'], { env: { ...process.env, PORT: '0', LOG_LEVEL: 'warn', BRANCHGRAPH_STORE: `file://${dir}/data` }, stdio: ['ignore', 'pipe', 'pipe'] });
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
  }, 60_000);
});
