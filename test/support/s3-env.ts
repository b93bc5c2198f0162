/**
 * Where tests find the real S3 server (Ceph RGW, started by scripts/s3-start.sh).
 * Without S3_ENDPOINT the S3 suites skip with a stated reason, unless
 * BRANCHGRAPH_REQUIRE_S3=1 (set by CI), in which case they fail loudly.
 */
import { ulid } from 'ulid';
import { S3Store } from '../../src/store/s3-store.js';

export const S3_TEST_BUCKET = process.env.BRANCHGRAPH_TEST_BUCKET ?? 'branchgraph-test';

export function s3Available(): boolean {
  const has = process.env.S3_ENDPOINT !== undefined && process.env.S3_ENDPOINT !== '';
  if (!has && process.env.BRANCHGRAPH_REQUIRE_S3 === '1') {
    throw new Error('BRANCHGRAPH_REQUIRE_S3=1 but S3_ENDPOINT is not set: start the server with scripts/s3-start.sh and source its s3.env');
  }
  return has;
}

export const S3_SKIP_REASON = 'S3_ENDPOINT is not set (run scripts/s3-start.sh and source /tmp/branchgraph-s3/s3.env)';

/** A store on a fresh prefix of the test bucket, so suites never see each other's objects. */
export async function freshS3Store(label = 'test'): Promise<S3Store> {
  const store = new S3Store({
    bucket: S3_TEST_BUCKET,
    prefix: `${label}-${ulid()}`,
    endpoint: process.env.S3_ENDPOINT,
    region: process.env.S3_REGION ?? 'us-east-1',
    accessKeyId: process.env.S3_ACCESS_KEY,
    secretAccessKey: process.env.S3_SECRET_KEY,
    forcePathStyle: true,
  });
  await store.ensureBucket();
  return store;
}

/** The URL form of a fresh S3 prefix, for servers and CLIs started by tests. */
export function freshS3Url(label = 'test'): string {
  const q = new URLSearchParams({ endpoint: process.env.S3_ENDPOINT ?? '' });
  return `s3://${S3_TEST_BUCKET}/${label}-${ulid()}?${q.toString()}`;
}
