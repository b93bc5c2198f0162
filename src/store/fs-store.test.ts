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

describe('FsStore layout', () => {
  it('keeps the file names stores already hold: plain segments as they are, others percent-encoded, a leading dot too', async () => {
    const dir = await freshDir();
    const store = new FsStore(dir);
    const body = new Uint8Array([1]);
    await store.putIfAbsent('manifests/01ABC_x-y/000000000005.json', body);
    await store.putIfAbsent('.a/b.c/é ~%/', body);
    const files = (await readdir(dir, { recursive: true })).filter((f) => !f.startsWith('.tmp')).sort();
    expect(files).toEqual(
      [
        '%2Ea',
        '%2Ea/b.c',
        '%2Ea/b.c/%C3%A9%20%7E%25',
        '%2Ea/b.c/%C3%A9%20%7E%25/~e~',
        'manifests',
        'manifests/01ABC_x-y',
        'manifests/01ABC_x-y/000000000005.json~',
      ].sort(),
    );
    expect(await store.get('.a/b.c/é ~%/')).toEqual(body);
  });
});

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

  it('a directory removed from outside after a write is made again by the next write into it', async () => {
    const root = await freshDir();
    const s = new FsStore(root);
    await s.putIfAbsent('runs/T/a', new Uint8Array([1]));
    await s.putOverwrite('hints/x', new Uint8Array([1]));
    // Whole directories gone, the temp directory too: the store made them once and remembers that.
    for (const d of ['runs', 'hints', '.tmp']) await rm(path.join(root, d), { recursive: true, force: true });
    await s.putIfAbsent('runs/T/b', new Uint8Array([2]));
    await s.putOverwrite('hints/y', new Uint8Array([3]));
    expect([...(await s.get('runs/T/b'))]).toEqual([2]);
    expect([...(await s.get('hints/y'))]).toEqual([3]);
    await expect(s.get('runs/T/a')).rejects.toMatchObject({ code: 'object_not_found' });
  });

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

describe('FsStore on a full disk and after a crash', () => {
  it('regression: a write that hits ENOSPC leaves no temp file, fails with a clear retryable error, and writes work once space is back', async () => {
    const { default: fs } = await import('node:fs');
    const { vi } = await import('vitest');
    const dir = await freshDir();
    const s = new FsStore(dir);
    await s.putIfAbsent('a', new Uint8Array([1]));
    const full = () => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    // The disk fills up part-way through the body: a small body is written at once, a large one a piece at a time.
    const spies = [
      vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
        throw full();
      }),
      vi.spyOn(fs, 'write').mockImplementationOnce(((...args: unknown[]) => {
        (args.at(-1) as (e: Error) => void)(full());
      }) as never),
    ];
    try {
      for (const size of [1 << 20, (1 << 20) + 1])
        await expect(s.putIfAbsent(`big-${size}`, new Uint8Array(size))).rejects.toMatchObject({
          code: 'store_unavailable',
          retryable: true,
          message: expect.stringContaining('no space left'),
        });
      expect(await readdir(path.join(dir, '.tmp'))).toEqual([]);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    await s.putIfAbsent('big', new Uint8Array(1 << 20));
    expect((await s.head('big'))?.size).toBe(1 << 20);
  });

  it('syncs a durable object and the directory naming it, and nothing for a best-effort one', async () => {
    const { default: fs } = await import('node:fs');
    const { vi } = await import('vitest');
    const { BEST_EFFORT } = await import('./object-store.js');
    const s = new FsStore(await freshDir());
    await s.putIfAbsent('warm/a', new Uint8Array([0]));
    const fsyncs = vi.spyOn(fs, 'fsync');
    try {
      await s.putIfAbsent('warm/b', new Uint8Array([1]));
      expect(fsyncs).toHaveBeenCalledTimes(2);
      fsyncs.mockClear();
      await s.putIfAbsent('warm/c.ok', new Uint8Array(0), BEST_EFFORT);
      await s.putOverwrite('warm/hint', new Uint8Array([2]), BEST_EFFORT);
      expect(fsyncs).not.toHaveBeenCalled();
    } finally {
      fsyncs.mockRestore();
    }
    expect([...(await s.get('warm/hint'))]).toEqual([2]);
    await expect(s.putIfAbsent('warm/c.ok', new Uint8Array(0), BEST_EFFORT)).rejects.toMatchObject({ code: 'object_exists' });
  });

  it('temp files of a killed process are removed when the store is opened, and by GC', async () => {
    const { writeFile, mkdir, utimes } = await import('node:fs/promises');
    const { openStore } = await import('./open-store.js');
    const dir = await freshDir();
    await mkdir(path.join(dir, '.tmp'), { recursive: true });
    // A pid that is not running, and a live one whose file is long stale.
    await writeFile(path.join(dir, '.tmp', '2147483646-deadbeef'), new Uint8Array(10));
    await writeFile(path.join(dir, '.tmp', `${process.pid}-0123abcd`), new Uint8Array(10));
    const old = new Date(Date.now() - 2 * 3600_000);
    await utimes(path.join(dir, '.tmp', `${process.pid}-0123abcd`), old, old);
    await writeFile(path.join(dir, '.tmp', `${process.pid}-fresh000`), new Uint8Array(10));
    const store = await openStore(`file://${dir}`);
    expect(await readdir(path.join(dir, '.tmp'))).toEqual([`${process.pid}-fresh000`]);
    // A process killed while this one runs: GC takes its temp file.
    await writeFile(path.join(dir, '.tmp', '2147483645-cafecafe'), new Uint8Array(10));
    const { Graph } = await import('../graph/graph.js');
    await (await Graph.open(store)).gc();
    expect(await readdir(path.join(dir, '.tmp'))).toEqual([`${process.pid}-fresh000`]);
  });
});
