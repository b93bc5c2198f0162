/**
 * Store URLs, the form users type:
 * - `file://./data` or `file:///abs/path` (or a bare path): the embedded default;
 * - `s3://bucket/prefix?endpoint=http://127.0.0.1:7480&region=us-east-1&pathStyle=true`;
 * - `memory://` (per process; for tests).
 * S3 credentials come from the URL's `accessKey`/`secretKey` parameters, then
 * `S3_ACCESS_KEY`/`S3_SECRET_KEY`, then the SDK's default chain. `S3_ENDPOINT`
 * and `S3_REGION` fill in what the URL leaves out.
 */
import { BranchgraphError } from '../model/errors.js';
import { FsStore } from './fs-store.js';
import { MemoryStore } from './memory-store.js';
import type { ObjectStore } from './object-store.js';
import type { S3StoreConfig } from './s3-store.js';

export type StoreSpec = { kind: 'memory' } | { kind: 'fs'; root: string } | ({ kind: 's3' } & S3StoreConfig);

export function parseStoreUrl(url: string, env: NodeJS.ProcessEnv = process.env): StoreSpec {
  const bad = (why: string): BranchgraphError =>
    new BranchgraphError('invalid_input', `store URL ${JSON.stringify(url)}: ${why}`, { issues: [{ path: 'store', message: why }] });
  if (url === 'memory://' || url === 'memory:') return { kind: 'memory' };
  if (url.startsWith('file://')) {
    const rest = url.slice('file://'.length);
    if (rest === '') throw bad('a directory is required, as in file://./data');
    return { kind: 'fs', root: rest };
  }
  if (url.startsWith('s3://')) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw bad('not a valid URL');
    }
    const bucket = parsed.hostname;
    if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket))
      throw bad('the bucket name must be 3-63 lowercase letters, digits, dots or hyphens');
    const q = parsed.searchParams;
    const pathStyle = q.get('pathStyle') ?? q.get('forcePathStyle');
    const spec: StoreSpec = {
      kind: 's3',
      bucket,
      prefix: decodeURIComponent(parsed.pathname.replace(/^\/+/, '')),
      region: q.get('region') ?? env.S3_REGION ?? env.AWS_REGION ?? 'us-east-1',
      forcePathStyle: pathStyle === null ? true : pathStyle !== 'false',
    };
    const endpoint = q.get('endpoint') ?? env.S3_ENDPOINT;
    if (endpoint !== undefined && endpoint !== '') spec.endpoint = endpoint;
    const accessKeyId = q.get('accessKey') ?? env.S3_ACCESS_KEY;
    const secretAccessKey = q.get('secretKey') ?? env.S3_SECRET_KEY;
    if (accessKeyId && secretAccessKey) Object.assign(spec, { accessKeyId, secretAccessKey });
    return spec;
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) throw bad('unknown scheme; use file://, s3:// or memory://');
  if (url === '') throw bad('empty');
  return { kind: 'fs', root: url };
}

/** Open a store from its URL; for S3 the bucket is created when missing. */
export async function openStore(url: string, env: NodeJS.ProcessEnv = process.env): Promise<ObjectStore> {
  const spec = parseStoreUrl(url, env);
  switch (spec.kind) {
    case 'memory':
      return new MemoryStore();
    case 'fs': {
      const store = new FsStore(spec.root);
      // Temp files of a process killed mid-write would hold disk space forever.
      await store.sweepTemps().catch(() => undefined);
      return store;
    }
    case 's3': {
      const { kind: _kind, ...config } = spec;
      // Loaded on demand: the AWS SDK is a quarter of a second of start-up that
      // a directory-backed CLI command never needs.
      const { S3Store } = await import('./s3-store.js');
      const store = new S3Store(config);
      await store.ensureBucket();
      return store;
    }
  }
}
