import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { FsStore } from './fs-store.js';
import { describeObjectStore } from './object-store.conformance.js';

const run = promisify(execFile);
const dirs: string[] = [];

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'bg-fs-'));
  dirs.push(dir);
  return dir;
}

afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describeObjectStore('fs', async () => new FsStore(await freshDir()));

describe('FsStore across processes', () => {
  it('two processes racing 16 create-only PUTs per key: exactly one winner per key', async () => {
    const root = await freshDir();
    const rounds = 25;
    const startAt = Date.now() + 1500;
    const worker = path.resolve('test/support/fs-race-worker.ts');
    const tsx = path.resolve('node_modules/.bin/tsx');
    const [a, b] = await Promise.all([
      run(tsx, [worker, root, String(rounds), String(startAt)]),
      run(tsx, [worker, root, String(rounds), String(startAt)]),
    ]);
    const won = [...(JSON.parse(a.stdout) as string[]), ...(JSON.parse(b.stdout) as string[])].sort();
    const expected = Array.from({ length: rounds }, (_, i) => `race/${i}`).sort();
    expect(won).toEqual(expected);
  }, 60_000);

  it('leaves no temp files behind after writes, and temp files are never listed', async () => {
    const root = await freshDir();
    const s = new FsStore(root);
    await s.putIfAbsent('k', new Uint8Array([1]));
    await s.putIfAbsent('k', new Uint8Array([2])).catch(() => undefined);
    await s.putOverwrite('h', new Uint8Array([3]));
    expect(await readdir(path.join(root, '.tmp'))).toEqual([]);
    const keys: string[] = [];
    for await (const o of s.list('')) keys.push(o.key);
    expect(keys).toEqual(['h', 'k']);
  });
});
