/**
 * Several replicas on one bucket: two server processes serve one graph on
 * the real S3 server (Ceph RGW). Eight clients merge their own branches into
 * main at once — two of them with a conflicting change — while two writers
 * write to main and two ingesters (one per replica, each its own WAL shard)
 * stream rows into main with catch-up running on both replicas. Every
 * acknowledged row and non-conflicting change must land exactly once, the
 * conflict must be reported exactly, races must surface only as the typed
 * retryable error, and the final state must equal the model. Both replicas
 * also compact in the background, racing each other and every writer.
 */
import { describe, expect, it } from 'vitest';
import { processServer, type ServerHandle } from '../src/gqt/http-drivers.js';
import { RestClient } from '../src/http/rest-client.js';
import { allRows } from '../src/service/api.js';
import { isBranchgraphError } from '../src/model/errors.js';
import { freshS3Url, s3Available, S3_SKIP_REASON } from './support/s3-env.js';

const MAX_ATTEMPTS = 25;

/** Retry only the typed retryable race; anything else is returned to the caller as is. */
async function retrying<T>(fn: () => Promise<T>): Promise<{ value?: T; attempts: number }> {
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    try {
      return { value: await fn(), attempts: attempt };
    } catch (e) {
      if (!isBranchgraphError(e, 'publish_contention')) throw e;
      await new Promise((r) => setTimeout(r, Math.random() * 40 * attempt));
    }
  }
  throw new Error(`still contended after ${MAX_ATTEMPTS} attempts`);
}

const suite = s3Available() ? describe : describe.skip;

suite(`concurrency on real S3${s3Available() ? '' : ` — skipped: ${S3_SKIP_REASON}`}`, () => {
  it('two replicas, eight merging clients and two writers agree with the model', async () => {
    const url = freshS3Url('replicas');
    const servers: ServerHandle[] = [];
    try {
      // Both replicas compact in the background too, racing each other and every writer.
      // Tiny manifest parts: the replicas race over multi-part manifests, not one inline object.
      const compacting = { COMPACTION_BACKGROUND: 'true', COMPACTION_DELAY_MS: '20', MANIFEST_PART_BYTES: '128' };
      servers.push(await processServer(url, { args: ['--shard', 'replica-0'], env: compacting })());
      servers.push(await processServer(url, { args: ['--shard', 'replica-1'], env: compacting })());
      const clients = servers.map((s) => new RestClient(s.url));
      const c = (i: number) => clients[i % 2] as RestClient;
      await c(0).applySchema({ branch: 'main', schema: 'node P { id: string @key\n v: int\n w: int? }' });
      await c(0).write({
        branch: 'main',
        ops: Array.from({ length: 16 }, (_, i) => ({ op: 'insert' as const, table: 'P', values: { id: `k${i}`, v: 0 } })),
      });
      for (let i = 0; i < 8; i++) {
        await c(i).createBranch({ name: `client${i}` });
        const ops = [
          { op: 'update' as const, table: 'P', values: { id: `k${i}`, v: i + 1 } },
          { op: 'insert' as const, table: 'P', values: { id: `new${i}`, v: i } },
        ];
        // Clients 0 and 1 also change the same property of k15 to different values.
        if (i < 2) ops.push({ op: 'update' as const, table: 'P', values: { id: 'k15', v: 100 + i } });
        await c(i).write({ branch: `client${i}`, ops });
      }

      const writers = [0, 1].map(async (w) => {
        for (let j = 0; j < 6; j++) {
          await retrying(() => c(w).write({ branch: 'main', ops: [{ op: 'insert', table: 'P', values: { id: `w${w}-${j}`, v: j } }] }));
        }
      });
      const ingesters = [0, 1].map(async (r) => {
        for (let j = 0; j < 6; j++) {
          const lines = [0, 1, 2].map((n) => JSON.stringify({ table: 'P', values: { id: `i${r}-${j}-${n}`, v: j } })).join('\n');
          const res = (await retrying(() => c(r).ingest({ branch: 'main', ndjson: lines }))).value;
          expect(res?.shard).toBe(`replica-${r}`);
          // Catch-up races the merges and writes folding the same generations; it may only fail retryably.
          if (j % 2 === 1) await retrying(() => c(r + 1).catchUp({ branch: 'main' }));
        }
      });
      const merges = Array.from({ length: 8 }, (_, i) => retrying(() => c(i + 1).mergeBranch({ source: `client${i}` })));
      const [results] = await Promise.all([Promise.all(merges), Promise.all(writers), Promise.all(ingesters)]);
      // Fold what is left; catch-up competing with nothing now must finish.
      const final = (await retrying(() => c(0).catchUp({ branch: 'main' }))).value;
      expect(final?.pendingAfter).toBe(0);
      expect((await c(1).walStatus({ branch: 'main' })).pendingGenerations).toBe(0);

      const outcomes = results.map((r) => r.value);
      console.log(
        `merge attempts: ${results.map((r) => r.attempts).join(' ')}; merge store-level re-plans: ${outcomes.map((o) => o?.metrics.attempts).join(' ')}`,
      );
      // A merge that lands before anything else moved main is a fast-forward, and which one that is
      // depends on the race; the rows checked against the model below say whether anything was lost.
      for (const [i, o] of outcomes.entries()) {
        if (i >= 2)
          expect(o, `client ${i}`).toMatchObject({ status: 'success', outcome: expect.stringMatching(/^(merged|fast_forward)$/) });
      }
      // Exactly one of the two conflicting clients landed; the other got the exact conflict.
      const landed = [0, 1].filter((i) => outcomes[i]?.status === 'success');
      expect(landed).toHaveLength(1);
      const loser = outcomes[1 - (landed[0] as number)];
      expect(loser?.status).toBe('conflicts');
      if (loser?.status === 'conflicts') {
        expect(loser.report.items.map((x) => [x.kind, x.table, x.key, x.property])).toEqual([['DivergentUpdate', 'P', 'k15', 'v']]);
      }

      // The model: seeds, every landed client's changes, every writer's rows.
      const expected: Record<string, number> = {};
      for (let i = 0; i < 16; i++) expected[`k${i}`] = 0;
      for (let i = 0; i < 8; i++) {
        if (outcomes[i]?.status !== 'success') continue;
        expected[`k${i}`] = i + 1;
        expected[`new${i}`] = i;
        if (i < 2) expected.k15 = 100 + i;
      }
      for (const w of [0, 1]) for (let j = 0; j < 6; j++) expected[`w${w}-${j}`] = j;
      for (const r of [0, 1]) for (let j = 0; j < 6; j++) for (const n of [0, 1, 2]) expected[`i${r}-${j}-${n}`] = j;
      for (const client of clients) {
        const rows = await allRows(client, 'P', { branch: 'main' });
        expect(Object.fromEntries(rows.map((r) => [r.key, r.row.v]))).toEqual(expected);
      }
      // Each merge is in the log exactly once (a fast-forward adds no commit of its own).
      const log = await c(0).log({ at: { branch: 'main' }, limit: 1000 });
      const merged = outcomes.filter((o) => o?.status === 'success' && o.outcome === 'merged').length;
      expect(merged).toBeGreaterThanOrEqual(6);
      expect(log.commits.filter((x) => x.kind === 'merge')).toHaveLength(merged);
    } finally {
      for (const s of servers) await s.stop();
    }
  }, 180_000);
});
