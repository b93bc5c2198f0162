/**
 * Cloning a graph from a remote (a directory, `s3://bucket/prefix`, or a
 * server) into a store (a directory or a bucket) for the command line and
 * embedded callers: the peer opened, graph/sync.ts `cloneFrom` run into
 * the destination's graph, both closed. The destination's `origin` remote
 * is the source, so `fetch origin` and `push origin` work at once.
 */
import { Graph } from '../graph/graph.js';
import { cloneFrom, type CloneReport } from '../graph/sync.js';
import type { TransferProgress } from '../graph/transfer.js';
import { BranchgraphError } from '../model/errors.js';
import { openStore } from '../store/open-store.js';
import { isServerUrl, normalizeRemoteUrl, openPeer, remoteToken, type HttpPeerFactory } from './sync-peers.js';

export type { CloneReport } from '../graph/sync.js';

/** Clone the graph at `source` into the empty store `destination` (a server source needs `http`, see attachHttpPeers). */
export async function cloneStores(a: {
  source: string;
  destination: string;
  actor: string;
  http?: HttpPeerFactory | undefined;
  token?: string | undefined;
  width?: number | undefined;
  signal?: AbortSignal;
  progress?: TransferProgress;
}): Promise<CloneReport> {
  if (isServerUrl(a.destination))
    throw new BranchgraphError(
      'invalid_input',
      `${a.destination}: a clone goes into a directory or a bucket; to fill a server, add it as a remote and push`,
      { issues: [{ path: 'destination', message: 'a server' }] },
    );
  const url = normalizeRemoteUrl(a.source);
  const opened = await openPeer({ url, actor: a.actor, http: a.http, token: remoteToken('origin', a.token) });
  try {
    const local = Graph.attach(await openStore(a.destination), { actor: a.actor });
    try {
      return await cloneFrom(local, {
        remote: 'origin',
        url,
        peer: opened.peer,
        actor: a.actor,
        width: a.width,
        signal: a.signal,
        progress: a.progress,
      });
    } finally {
      await local.close();
    }
  } finally {
    await opened.close();
  }
}
