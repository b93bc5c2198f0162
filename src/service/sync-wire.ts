/**
 * The server's side of a sync over HTTP (http/routes/sync-routes.ts; the
 * client is http/http-peer.ts): its heads, a pack of what a fetching
 * client lacks, and a pushed pack received.
 *
 * - Heads and packs read the whole graph, so they need a token that reads
 *   every branch. A pack is planned from the client's wants and haves
 *   alone (no question per manifest crosses the network) and streamed in
 *   the order the client writes it: content, then manifests.
 * - A push needs the write role and a scope that writes the branch. Its
 *   objects are held in memory up to the documented limits (LIMITS), then
 *   checked whole before any is written (graph/pack-check.ts): a refused
 *   push stores nothing. Then they are written in the safe order and the
 *   branch moved as any push moves one (graph/sync.ts `moveBranch`):
 *   protection, the expected head and fast-forward hold, and the move is a
 *   `branch_created` or `branch_reset` event with its hooks.
 */
import { checkPack } from '../graph/pack-check.js';
import { graphPeer, moveBranch, type BranchMove, type PeerBranch } from '../graph/sync.js';
import type { TagRecord } from '../graph/tags.js';
import type { TransferReport } from '../graph/transfer.js';
import { z } from 'zod';
import { ManifestRefZ } from '../graph/manifest.js';
import { parseInput } from './parse-input.js';
import { BranchgraphError } from '../model/errors.js';
import type { ObjectFrame } from '../model/object-frames.js';
import { checkAccess, requireWrite } from './access.js';
import { LIMITS } from './limits.js';
import { protectionPass } from './protection-pass.js';
import type { RequestContext } from './request-context.js';
import type { BranchgraphService } from './service.js';

const MAX_REFS = 10_000;
/** What a fetching client asks a pack for: the manifests it wants, and those it has. */
const PackAskZ = z.object({ wants: z.array(ManifestRefZ).max(MAX_REFS), haves: z.array(ManifestRefZ).max(MAX_REFS) }).strict();

export async function syncHeads(service: BranchgraphService, ctx: RequestContext): Promise<{ branches: PeerBranch[]; tags: TagRecord[] }> {
  await checkAccess(service, { graph: 'read' }, ctx);
  return graphPeer(service.graph).heads(ctx.signal);
}

/** Everything a client holding `haves` lacks of `wants`: how many objects, and their frames in write order. */
export async function pack(
  service: BranchgraphService,
  body: unknown,
  ctx: RequestContext,
): Promise<{ objects: number; frames: AsyncGenerator<ObjectFrame> }> {
  await checkAccess(service, { graph: 'read' }, ctx);
  const a = parseInput(PackAskZ, body, 'body');
  const { graph } = service;
  const plan = await graph.planTransfer({ wants: a.wants, haves: a.haves, holds: async () => false, signal: ctx.signal });
  return { objects: plan.content.length + plan.manifests.length, frames: graph.objectsInOrder(plan, ctx.signal) };
}

/** Receive a pushed pack and move the branch, or refuse it whole and store nothing. */
export async function receivePush(
  service: BranchgraphService,
  a: { frames: AsyncIterable<ObjectFrame>; move: Omit<BranchMove, 'actor'>; bypassProtection?: boolean },
  ctx: RequestContext,
): Promise<{ transfer: TransferReport }> {
  requireWrite(ctx, a.move.branch);
  const protection = protectionPass(ctx, a.bypassProtection);
  const objects = new Map<string, Uint8Array>();
  let bytes = 0;
  for await (const f of a.frames) {
    bytes += f.bytes.byteLength;
    if (bytes > LIMITS.maxPushBytes)
      throw new BranchgraphError('payload_too_large', `a push carries at most ${LIMITS.maxPushBytes} bytes of objects`, {
        details: { limit: LIMITS.maxPushBytes },
      });
    if (objects.has(f.key))
      throw new BranchgraphError('invalid_input', `refused push: ${f.key} twice`, { issues: [{ path: f.key, message: 'twice' }] });
    objects.set(f.key, f.bytes);
  }
  const { graph } = service;
  const checked = await checkPack(graph, { objects, to: a.move.to, signal: ctx.signal });
  const transfer = await checked.source.sendTransfer({ plan: checked.plan, destination: graph.store, signal: ctx.signal });
  await moveBranch(graph, { ...a.move, actor: ctx.actor ?? graph.actor }, { signal: ctx.signal, protection });
  service.catchUps.forget(a.move.branch);
  return { transfer };
}
