/**
 * A server as the other end of a sync (graph/sync.ts `SyncPeer`), over
 * its sync routes (routes/sync-routes.ts), with the same bearer token and
 * error envelope as every other route:
 *
 * - heads: `GET /sync/heads`, one round trip;
 * - fetch: `POST /sync/pack` with the wants and haves, answered by a
 *   stream of object frames (model/object-frames.ts) in write order, each
 *   checked and written here as it arrives, at most `width` at a time
 *   within a level, a level's writes done before the next level's start;
 * - push: `POST /sync/push` with the branch move in the query and the
 *   objects as frames in the body, streamed from the store as they are
 *   read: the server checks the whole pack, writes it and moves the branch.
 *
 * A push is two round trips (heads, then the pack) whatever its size; a
 * fetch is two.
 */
import type { PeerBranch, SyncPeer } from '../graph/sync.js';
import type { TagRecord } from '../graph/tags.js';
import { objectsInOrder, putOnce, type TransferReport } from '../graph/transfer.js';
import { checkObject } from '../graph/object-check.js';
import { decodeFrames, encodeFrame } from '../model/object-frames.js';
import type { BranchgraphService } from '../service/service.js';
import { LIMITS } from '../service/limits.js';
import { RestClient } from './rest-client.js';

/** Give `service` the way to reach server remotes, unless it has one. */
export function attachHttpPeers(service: BranchgraphService): void {
  service.httpPeers ??= httpPeer;
}

export function httpPeer(a: { url: string; token?: string | undefined }): SyncPeer {
  const client = new RestClient(a.url.replace(/\/+$/, ''), a.token);
  const json = { 'content-type': 'application/json' };
  return {
    async heads(signal) {
      const res = await client.raw('GET /sync/heads', '/sync/heads', { method: 'GET', ...(signal !== undefined ? { signal } : {}) });
      return (await res.json()) as { branches: PeerBranch[]; tags: TagRecord[] };
    },
    async sendTo(s) {
      const { destination, signal } = s;
      const res = await client.raw('POST /sync/pack', '/sync/pack', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ wants: s.wants, haves: s.haves }),
        ...(signal !== undefined ? { signal } : {}),
      });
      const report: TransferReport = { objects: 0, bytes: 0, present: 0, manifests: 0 };
      const total = Number(res.headers.get('x-branchgraph-objects') ?? 0);
      const width = Math.max(1, s.width ?? 8);
      const running = new Set<Promise<void>>();
      let failure: unknown;
      let level = 0;
      const settle = async (): Promise<void> => {
        await Promise.all(running);
        if (failure !== undefined) throw failure;
      };
      const body = res.body as unknown as AsyncIterable<Uint8Array>;
      for await (const f of decodeFrames(body, { maxObjectBytes: LIMITS.maxPushObjectBytes })) {
        // A level's writes land before the next level's start: a manifest never precedes what it names.
        if (f.level !== level) {
          await settle();
          level = f.level;
        }
        if (f.key.startsWith('manifests/')) report.manifests++;
        checkObject(f.key, f.bytes);
        const p = putOnce({ destination: destination.store, key: f.key, bytes: f.bytes, signal }).then(
          (wrote) => {
            if (wrote) {
              report.objects++;
              report.bytes += f.bytes.byteLength;
            } else report.present++;
            s.progress?.({ objects: report.objects + report.present, bytes: report.bytes, total });
          },
          (e: unknown) => {
            failure ??= e;
          },
        );
        running.add(p);
        void p.finally(() => running.delete(p));
        if (running.size >= width) await Promise.race(running);
        if (failure !== undefined) break;
      }
      await settle();
      return report;
    },
    async receive(r) {
      const { plan, move, source, signal } = r;
      const total = plan.content.length + plan.manifests.length;
      let sent = 0;
      async function* frames(): AsyncGenerator<Uint8Array> {
        for await (const o of objectsInOrder(source.store, plan, signal)) {
          r.progress?.({ objects: ++sent, bytes: 0, total });
          yield* encodeFrame(o);
        }
      }
      const q = new URLSearchParams({ branch: move.branch, to: move.to, ...(move.from !== undefined ? { from: move.from } : {}), ...(move.force ? { force: 'true' } : {}) });
      const res = await client.raw('POST /sync/push', `/sync/push?${q}`, {
        method: 'POST',
        headers: { 'content-type': 'application/octet-stream' },
        // Fetch streams an async iterable body (with duplex 'half'); the DOM types do not say so.
        body: frames() as unknown as BodyInit,
        duplex: 'half',
        ...(signal !== undefined ? { signal } : {}),
      });
      return ((await res.json()) as { transfer: TransferReport }).transfer;
    },
    // Asking per manifest would cost a round trip each: the haves say what the server holds.
    holds: async () => false,
  };
}

