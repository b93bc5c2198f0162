/**
 * The stores every engine-level suite runs against: memory, a fresh
 * directory, and a fresh prefix on the real S3 server when it is available.
 * `reopen` gives a new store object on the same location, as a restarted
 * process would get.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FsStore } from '../../src/store/fs-store.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import { listAll, type ObjectStore } from '../../src/store/object-store.js';
import { S3Store } from '../../src/store/s3-store.js';
import { freshS3Store, s3Available } from './s3-env.js';

export interface StoreUnderTest {
  name: string;
  open: () => Promise<{ store: ObjectStore; reopen: () => ObjectStore }>;
}

export function storesUnderTest(): StoreUnderTest[] {
  const out: StoreUnderTest[] = [
    {
      name: 'memory',
      open: async () => {
        const store = new MemoryStore();
        return { store, reopen: () => store };
      },
    },
    {
      name: 'fs',
      open: async () => {
        const dir = await mkdtemp(path.join(tmpdir(), 'bg-graph-'));
        return { store: new FsStore(dir), reopen: () => new FsStore(dir) };
      },
    },
  ];
  if (s3Available()) {
    out.push({
      name: 's3',
      open: async () => {
        const store = await freshS3Store('graph');
        const cfg = store as unknown as { bucket: string; prefix: string };
        return {
          store,
          reopen: () =>
            new S3Store({
              bucket: cfg.bucket,
              prefix: cfg.prefix,
              endpoint: process.env.S3_ENDPOINT,
              accessKeyId: process.env.S3_ACCESS_KEY,
              secretAccessKey: process.env.S3_SECRET_KEY,
            }),
        };
      },
    });
  }
  return out;
}

/** A byte-for-byte copy of a memory store, so one setup can seed many runs. */
export async function cloneMemoryStore(src: MemoryStore, clock?: () => number): Promise<MemoryStore> {
  const dst = new MemoryStore(clock);
  for (const o of await listAll(src, '')) await dst.putIfAbsent(o.key, await src.get(o.key));
  return dst;
}
