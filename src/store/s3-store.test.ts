import { afterAll, describe, expect, it } from 'vitest';
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

  describe('S3 adapter: create-only PUTs with lost responses (real server)', () => {
    it('a PUT that landed but lost its response is recognised as ours, not retried blindly into a 412', async () => {
      const s = await freshS3Store('lost');
      opened.push(s);
      s.loseNextPutResponses(1);
      await s.putIfAbsent('k', new TextEncoder().encode('mine'));
      expect(new TextDecoder().decode(await s.get('k'))).toBe('mine');
    });

    it("after a failed attempt whose outcome is unknown, someone else's object at the key is a loss (object_exists)", async () => {
      const s = await freshS3Store('lost');
      opened.push(s);
      // Our first PUT never lands; another writer creates the key before we look again.
      s.dropNextPutRequest(() => s.putIfAbsent('k', new TextEncoder().encode('theirs')));
      await expect(s.putIfAbsent('k', new TextEncoder().encode('mine'))).rejects.toMatchObject({ code: 'object_exists' });
      expect(new TextDecoder().decode(await s.get('k'))).toBe('theirs');
    });

    it('after a lost response, our own object at the key is a success', async () => {
      const s = await freshS3Store('lost-own');
      opened.push(s);
      s.loseNextPutResponses(1);
      await s.putIfAbsent('k', new TextEncoder().encode('mine'));
      expect(new TextDecoder().decode(await s.get('k'))).toBe('mine');
    });
  });
} else {
  describe.skip(`ObjectStore conformance: s3 — skipped: ${S3_SKIP_REASON}`, () => {
    it('runs against the real server', () => {});
  });
}
