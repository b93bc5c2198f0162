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
import type { PeerHeads, SyncPeer, TransferReport } from '../service/sync-peers.js';
import { decodeFrames, encodeFrame } from '../model/object-frames.js';
import type { BranchgraphService } from '../service/service.js';
import { LIMITS } from '../service/limits.js';
import { RestClient } from './rest-client.js';

/** Give `service` the way to reach server remotes (`http(s)://…`) for fetch and push, unless it has one. */
export function attachHttpPeers(service: BranchgraphService): void {
  service.httpPeers ??= httpPeer;
}

/** A server at `url` as the other end of a sync, with `token` as its bearer token. */
export function httpPeer(a: { url: string; token?: string | undefined }): SyncPeer {
  const client = new RestClient(a.url.replace(/\/+$/, ''), a.token);
  const json = { 'content-type': 'application/json' };
  return {
    async heads(signal) {
      const res = await client.raw('GET /sync/heads', '/sync/heads', { method: 'GET', ...(signal !== undefined ? { signal } : {}) });
      return (await res.json()) as PeerHeads;
    },
    async sendTo(s) {
      const { signal } = s;
      const res = await client.raw('POST /sync/pack', '/sync/pack', {
        method: 'POST',
        headers: json,
        body: JSON.stringify({ wants: s.wants, haves: s.haves }),
        ...(signal !== undefined ? { signal } : {}),
      });
      const body = res.body as unknown as AsyncIterable<Uint8Array>;
      return s.destination.receiveObjects({
        objects: decodeFrames(body, { maxObjectBytes: LIMITS.maxPushObjectBytes }),
        total: Number(res.headers.get('x-branchgraph-objects') ?? 0),
        width: s.width,
        signal,
        progress: s.progress,
      });
    },
    async receive(r) {
      const { plan, move, source, signal } = r;
      const total = plan.content.length + plan.manifests.length;
      let sent = 0;
      async function* frames(): AsyncGenerator<Uint8Array> {
        for await (const o of source.objectsInOrder(plan, signal)) {
          r.progress?.({ objects: ++sent, bytes: 0, total });
          yield* encodeFrame(o);
        }
      }
      const q = new URLSearchParams({
        branch: move.branch,
        to: move.to,
        ...(move.from !== undefined ? { from: move.from } : {}),
        ...(move.force ? { force: 'true' } : {}),
      });
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
