/**
 * The sync routes a client's fetch and push speak (http/http-peer.ts is
 * that client; service/sync-wire.ts does the work):
 *
 * - `GET /sync/heads`: every branch's committed head and every tag;
 * - `POST /sync/pack` `{wants, haves}`: the objects a client holding the
 *   haves lacks of the wants, as object frames (model/object-frames.ts) in
 *   write order; `x-branchgraph-objects` says how many;
 * - `POST /sync/push?branch=&to=[&from=][&force=true][&bypassProtection=true]`:
 *   the pushed objects as frames, each within `LIMITS.maxPushObjectBytes`
 *   and all within `LIMITS.maxPushBytes`, held against the server's body
 *   budget while they are checked; then the branch moved. Answers the
 *   transfer, or an error and nothing stored.
 */
import type { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import { decodeFrames, encodeFrame, type ObjectFrame } from '../../model/object-frames.js';
import { requireRole } from '../../service/auth.js';
import { branchName, commitId } from '../../service/inputs.js';
import { LIMITS } from '../../service/limits.js';
import { parseInput } from '../../service/parse-input.js';
import type { BranchgraphService } from '../../service/service.js';
import { pack, receivePush, syncHeads } from '../../service/sync-wire.js';
import { ctxOf, jsonBody, jsonReply, type Env } from '../http-context.js';

const PushAskZ = z
  .object({
    branch: branchName,
    to: commitId,
    from: commitId.optional(),
    force: z.enum(['true', 'false']).optional(),
    bypassProtection: z.enum(['true', 'false']).optional(),
  })
  .strict();

export function syncRoutes(app: Hono<Env>, service: BranchgraphService): void {
  app.get('/sync/heads', async (c) => {
    requireRole(c.get('role'), 'read');
    return jsonReply(c, await syncHeads(service, ctxOf(c)));
  });
  app.post('/sync/pack', async (c) => {
    requireRole(c.get('role'), 'read');
    const { objects, frames } = await pack(service, await jsonBody(c), ctxOf(c));
    c.header('content-type', 'application/octet-stream');
    c.header('x-branchgraph-objects', String(objects));
    return stream(c, async (out) => {
      for await (const f of frames) for (const part of encodeFrame(f)) await out.write(part);
    });
  });
  app.post('/sync/push', async (c) => {
    requireRole(c.get('role'), 'write');
    const q = parseInput(PushAskZ, c.req.query(), 'query');
    const budget = c.get('bodyBudget');
    let held = 0;
    const body = (c.req.raw.body ?? emptyBody()) as unknown as AsyncIterable<Uint8Array>;
    // Each frame is held against the server's body budget until the push is answered.
    async function* budgeted(): AsyncGenerator<ObjectFrame> {
      for await (const f of decodeFrames(body, { maxObjectBytes: LIMITS.maxPushObjectBytes })) {
        budget.take(f.bytes.byteLength);
        held += f.bytes.byteLength;
        yield f;
      }
    }
    try {
      const move = { branch: q.branch, to: q.to, from: q.from, force: q.force === 'true' };
      return jsonReply(
        c,
        await receivePush(service, { frames: budgeted(), move, bypassProtection: q.bypassProtection === 'true' }, ctxOf(c)),
      );
    } finally {
      budget.give(held);
    }
  });
}

async function* emptyBody(): AsyncGenerator<Uint8Array> {}
