/**
 * Opening the other end of a sync from a remote's URL: a directory (a path
 * or `file://`) or `s3://bucket/prefix` is opened here, as that store's
 * graph; `http(s)://host[:port][/graphs/NAME]` is a server, reached through
 * the HTTP peer the edge gives a service (`attachHttpPeers`), since the
 * service itself speaks no HTTP.
 *
 * A server's token is never stored with the remote: it comes from the
 * caller, or from the environment, `BRANCHGRAPH_REMOTE_TOKEN_<NAME>` (the
 * remote's name in capitals, other characters as `_`) or else
 * `BRANCHGRAPH_REMOTE_TOKEN`.
 */
import path from 'node:path';
import { Graph } from '../graph/graph.js';
import { graphPeer, type SyncPeer } from '../graph/sync.js';

export type { SyncPeer } from '../graph/sync.js';
export type { TransferReport } from '../graph/transfer.js';
/** What a peer reports of itself: its branches' committed heads and its tags. */
export type PeerHeads = Awaited<ReturnType<SyncPeer['heads']>>;
import { BranchgraphError } from '../model/errors.js';
import { openStore, parseStoreUrl } from '../store/open-store.js';

export interface OpenedPeer {
  peer: SyncPeer;
  close(): Promise<void>;
}

/** Makes the peer for a server's URL (http/http-peer.ts). */
export type HttpPeerFactory = (a: { url: string; token?: string | undefined }) => SyncPeer;

export function isServerUrl(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

/** A remote's URL as it is kept: a server's or a bucket's as given, a directory made absolute; a store URL that cannot be opened is refused now. */
export function normalizeRemoteUrl(url: string): string {
  if (isServerUrl(url)) return url.replace(/\/+$/, '');
  const spec = parseStoreUrl(url);
  return spec.kind === 'fs' ? path.resolve(spec.root) : url;
}

/** The token for a remote server, from the caller or the environment. */
export function remoteToken(
  remote: string | undefined,
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (given !== undefined) return given;
  const own = remote === undefined ? undefined : env[`BRANCHGRAPH_REMOTE_TOKEN_${remote.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`];
  return own ?? env.BRANCHGRAPH_REMOTE_TOKEN;
}

export async function openPeer(a: {
  url: string;
  actor: string;
  http: HttpPeerFactory | undefined;
  token?: string | undefined;
}): Promise<OpenedPeer> {
  if (isServerUrl(a.url)) {
    if (a.http === undefined)
      throw new BranchgraphError('internal', 'this process reaches no servers; attachHttpPeers(service) gives it the way');
    return { peer: a.http({ url: a.url, token: a.token }), close: async () => {} };
  }
  const graph = Graph.attach(await openStore(a.url), { actor: a.actor });
  return { peer: graphPeer(graph), close: () => graph.close() };
}
