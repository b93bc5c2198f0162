/**
 * Running a sync against one of the graph's remotes, for the operations:
 * the remote's record read, its peer opened (sync-peers.ts) and closed
 * whatever happens, the work tracked as a long operation whose progress
 * counts objects, and the engine's reports as clients see them.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { FetchReport, PushReport, SyncPeer } from '../graph/sync.js';
import type { RemoteRecord } from '../graph/remotes.js';
import type { TransferProgress } from '../graph/transfer.js';
import type { LongOperationKind } from './long-operations.js';
import type { RequestContext } from './request-context.js';
import type { BranchgraphService } from './service.js';
import { openPeer, remoteToken } from './sync-peers.js';

export async function withRemote<T>(
  service: BranchgraphService,
  a: { remote: string; kind: LongOperationKind; branch: string; token?: string | undefined; ctx: RequestContext },
  work: (peer: SyncPeer, progress: TransferProgress, rec: RemoteRecord) => Promise<T>,
): Promise<T> {
  const { ctx } = a;
  const rec = await service.graph.remotes.get(a.remote, ctx.signal);
  return service.tracked({ kind: a.kind, branch: a.branch, source: rec.url, log: ctx.log }, ctx, async (progress) => {
    const opened = await openPeer({
      url: rec.url,
      actor: service.graph.actor,
      http: service.httpPeers,
      token: remoteToken(a.remote, a.token),
    });
    let started = false;
    const counted: TransferProgress = (p) => {
      if (!started) progress.restart(p.total, 'objects');
      started = true;
      progress.advance(1);
    };
    try {
      return await work(opened.peer, counted, rec);
    } catch (e) {
      // The remote server did not answer: the caller's request was sound, and this server is well.
      if (isBranchgraphError(e, 'server_unreachable'))
        throw new BranchgraphError('remote_unreachable', `remote ${a.remote} (${rec.url}) cannot be reached: ${e.message}`, {
          details: { remote: a.remote, url: rec.url },
          cause: e,
        });
      throw e;
    } finally {
      await opened.close();
    }
  });
}

export function fetchDto(r: FetchReport) {
  return { ...r, updated: r.updated.map((u) => ({ branch: u.branch, from: u.from ?? null, to: u.to })) };
}

export function pushDto(r: PushReport) {
  return { ...r, from: r.from ?? null };
}
