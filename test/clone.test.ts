/**
 * Cloning a graph between stores: the destination is the same graph (its
 * branches with their heads, every row, the history, tags, stored queries
 * and rows still pending in the WAL); refs move last, so a clone cut at any
 * store call leaves the destination without a graph, and running it again
 * finishes it; objects are checked as they arrive; a destination that
 * holds a graph is refused. Directory to directory, memory to memory for
 * the crash sweep, and through the real S3 server where one runs.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneGraph } from '../src/graph/clone.js';
import { allRows, embeddedApi, type BranchgraphApi } from '../src/service/api.js';
import { serviceOnStore } from '../src/service/open-service.js';
import { FaultStore } from '../src/store/fault-store.js';
import { FsStore } from '../src/store/fs-store.js';
import { MemoryStore } from '../src/store/memory-store.js';
import { listAll, type ObjectStore } from '../src/store/object-store.js';
import { runCli } from '../src/cli/run-cli.js';
import { freshS3Store, s3Available, S3_SKIP_REASON } from './support/s3-env.js';

const CTX = { transport: 'embedded' as const };
let dir: string;

/** A graph with what a clone must carry: branches, a merge, a tag, a stored query, pending WAL rows. */
async function buildGraph(store: ObjectStore): Promise<void> {
  const service = await serviceOnStore(store, { actor: 'builder', shard: 'builder' });
  const api = embeddedApi(service, CTX);
  await api.applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int? }\nedge Knows: P -> P' });
  await api.write({
    branch: 'main',
    ops: Array.from({ length: 50 }, (_, i) => ({ op: 'insert' as const, table: 'P', values: { id: `p${i}`, v: i } })),
  });
  await api.createBranch({ name: 'feature/one' });
  await api.write({
    branch: 'feature/one',
    ops: [
      { op: 'update', table: 'P', values: { id: 'p1', v: 100 } },
      { op: 'insert', table: 'Knows', values: { from: 'p1', to: 'p2' } },
    ],
  });
  await api.mergeBranch({ source: 'feature/one', into: 'main' });
  await api.createTag({ name: 'v1', from: 'main' });
  await api.createBranch({ name: 'later', ttlSeconds: 3600, labels: ['kept'] });
  await api.write({ branch: 'later', ops: [{ op: 'delete', table: 'P', values: { id: 'p3' } }] });
  await api.ingest({ branch: 'later', ops: [{ op: 'upsert', table: 'P', values: { id: 'pending', v: 7 } }] });
  await service.stop();
  await service.graph.close();
}

/** What a reader sees of a graph: branches with heads and traits, every branch's rows, main's log, tags. */
async function view(store: ObjectStore): Promise<unknown> {
  const service = await serviceOnStore(store, { actor: 'reader', shard: 'reader' });
  const api: BranchgraphApi = embeddedApi(service, CTX);
  const { branches } = await api.listBranches({});
  const rows: Record<string, unknown> = {};
  for (const b of branches) for (const t of ['P', 'Knows']) rows[`${b.name}/${t}`] = await allRows(api, t, b.name);
  const out = {
    branches: branches.map((b) => ({ name: b.name, head: b.head.id, expiresAt: b.expiresAt, labels: b.labels })),
    rows,
    log: (await api.log({ at: 'main', limit: 100 })).commits.map((c) => c.id),
    parent: (await api.log({ at: 'main~1', limit: 1 })).commits[0]?.id,
    tags: (await api.listTags({})).tags,
    pending: (await api.walStatus({ branch: 'later' })).pendingGenerations,
  };
  await service.close();
  return out;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'bg-clone-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('cloning a graph', () => {
  it('copies it whole from one directory to another, and the clone reads the same', async () => {
    const source = new FsStore(path.join(dir, 'a'));
    await buildGraph(source);
    const destination = new FsStore(path.join(dir, 'b'));
    const report = await cloneGraph({ source, destination });
    expect(report.branchRecords).toBeGreaterThanOrEqual(3);
    expect(report.tags).toBe(1);
    expect(report.present).toBe(0);
    const [a, b] = [await view(source), await view(destination)];
    expect(b).toEqual(a);
    expect((a as { rows: Record<string, unknown[]> }).rows['later/P']).toContainEqual(expect.objectContaining({ key: 'pending' }));
  });

  it('copies nothing into a finished clone, and refuses a destination holding another graph, changing nothing there', async () => {
    const again = await cloneGraph({ source: new FsStore(path.join(dir, 'a')), destination: new FsStore(path.join(dir, 'b')) });
    expect(again).toMatchObject({ objects: 0, bytes: 0 });
    expect(again.present).toBeGreaterThan(0);
    const other = new MemoryStore();
    await buildGraph(other);
    const destination = new FsStore(path.join(dir, 'b'));
    const before = (await listAll(destination, '')).map((o) => o.key);
    await expect(cloneGraph({ source: other, destination })).rejects.toMatchObject({ code: 'invalid_input' });
    expect((await listAll(destination, '')).map((o) => o.key)).toEqual(before);
  });

  it('refuses an object that is not what its key says, and lands no ref', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const [manifest] = await listAll(source, 'manifests/');
    await source.deleteMany([(manifest as { key: string }).key]);
    await source.putIfAbsent((manifest as { key: string }).key, new TextEncoder().encode('{"format": 99}'));
    const destination = new MemoryStore();
    await expect(cloneGraph({ source, destination })).rejects.toMatchObject({ code: 'corrupt_object' });
    expect(await listAll(destination, 'branches/')).toEqual([]);
  });

  it('cut at any store call, leaves no graph behind, and run again finishes it', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const reference = new MemoryStore();
    await cloneGraph({ source, destination: reference, width: 1 });
    const expected = await view(reference);
    const counted = new FaultStore(new MemoryStore());
    await cloneGraph({ source, destination: counted, width: 1 });
    const calls = counted.callCount;
    expect(calls).toBeGreaterThan(20);
    const sourceKeys = (await listAll(source, '')).filter((o) => !o.key.startsWith('hints/') && !o.key.startsWith('events/'));
    const contentKeys = sourceKeys.filter((o) => !o.key.startsWith('branches/') && !o.key.startsWith('tags/')).map((o) => o.key);
    for (let at = 1; at <= calls; at++) {
      const inner = new MemoryStore();
      const crashing = new FaultStore(inner, { crashAtCall: at, crashEffect: at % 2 === 0 ? 'after' : 'before' });
      const outcome = await cloneGraph({ source, destination: crashing, width: 1 }).then(
        () => 'done',
        (e: { code?: string }) => e.code,
      );
      expect(['done', 'store_crashed']).toContain(outcome);
      // Refs land last: once any ref is there, all the content is, so a visible ref never names a missing object.
      const held = new Set((await listAll(inner, '')).map((o) => o.key));
      const refs = [...held].filter((k) => k.startsWith('branches/') || k.startsWith('tags/'));
      if (refs.length > 0) expect(contentKeys.filter((k) => !held.has(k))).toEqual([]);
      // Run again, the clone finishes, and the destination reads as the source does.
      await cloneGraph({ source, destination: inner, width: 1 });
      expect(await view(inner), `cut at call ${at}`).toEqual(expected);
    }
  });

  it('copies a source being written to as a consistent graph, and a second run catches up', async () => {
    const source = new MemoryStore();
    await buildGraph(source);
    const writer = await serviceOnStore(source, { actor: 'writer', shard: 'writer' });
    const api = embeddedApi(writer, CTX);
    const writing = (async () => {
      for (let i = 0; i < 20; i++) {
        await api.write({ branch: 'main', ops: [{ op: 'upsert', table: 'P', values: { id: `live${i}`, v: i } }] });
        if (i % 5 === 0) await api.createBranch({ name: `live/${i}` });
      }
    })();
    const destination = new MemoryStore();
    await cloneGraph({ source, destination, width: 2 });
    await writing;
    // Whatever the clone caught, every branch it holds reads whole.
    await expect(view(destination)).resolves.toBeDefined();
    await writer.close();
    await cloneGraph({ source, destination });
    expect(await view(destination)).toEqual(await view(source));
  });

  it('runs from the command line, directory to directory', async () => {
    const out: string[] = [];
    const io = { stdout: (t: string) => out.push(t), stderr: () => undefined, stdoutStream: process.stdout };
    const code = await runCli(['--json', 'clone', path.join(dir, 'a'), path.join(dir, 'c')], io);
    expect(code).toBe(0);
    expect(JSON.parse(out.join(''))).toMatchObject({ tags: 1, present: 0 });
    expect(await view(new FsStore(path.join(dir, 'c')))).toEqual(await view(new FsStore(path.join(dir, 'a'))));
  });
});

describe.skipIf(!s3Available())('cloning through the real S3 server', () => {
  it('copies a directory into a bucket and back', async () => {
    if (!s3Available()) return void console.log(S3_SKIP_REASON);
    const source = new FsStore(path.join(dir, 'a'));
    const bucket = await freshS3Store('clone');
    await cloneGraph({ source, destination: bucket });
    const back = new FsStore(path.join(dir, 's3-back'));
    await cloneGraph({ source: bucket, destination: back });
    expect(await view(back)).toEqual(await view(source));
    await bucket.close?.();
  });
});
