import { afterAll, describe, it } from 'vitest';
import { freshS3Store, s3Available, S3_SKIP_REASON } from '../../test/support/s3-env.js';
import { describeObjectStore } from './object-store.conformance.js';
import type { S3Store } from './s3-store.js';

const opened: S3Store[] = [];

if (s3Available()) {
  describeObjectStore('s3 (Ceph RGW)', async () => {
    const store = await freshS3Store('conformance');
    opened.push(store);
    return store;
  });
  afterAll(async () => {
    for (const s of opened) await s.close();
  });
} else {
  describe.skip(`ObjectStore conformance: s3 — skipped: ${S3_SKIP_REASON}`, () => {
    it('runs against the real server', () => {});
  });
}
