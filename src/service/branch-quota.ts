/**
 * A token's quota of live branches (`maxBranches`): a creation by such a
 * token counts the live branches it owns first, and is refused with
 * `quota_exceeded` when it owns as many as it may. Such a token owns what it
 * creates: it cannot name another owner, and so cannot step around its own
 * count. Creations by one owner in one process are counted one after
 * another, so a burst of them stops exactly at the quota; creations racing
 * on two replicas may both pass, one branch over it.
 */
import { BranchgraphError } from '../model/errors.js';
import { scopeWords, type TokenScope } from '../model/token-scope.js';
import type { Graph } from '../graph/graph.js';
import type { RequestContext } from './request-context.js';

/** Creations in this process, by owner, each waiting for the one before it to have counted and created. */
const claims = new Map<string, Promise<unknown>>();

/**
 * Run `create` once the caller's quota allows one more branch owned by `owner`; with no quota on
 * the caller's token, just run it.
 */
export async function withinBranchQuota<T>(
  graph: Pick<Graph, 'branchRecords'>,
  a: { owner: string | undefined; ctx: RequestContext },
  create: () => Promise<T>,
): Promise<T> {
  const { ctx } = a;
  const limit = ctx.scope?.maxBranches;
  if (limit === undefined) return create();
  const me = ctx.actor ?? '';
  if (a.owner !== me)
    throw new BranchgraphError(
      'forbidden',
      `a token with a branch quota (its scope: ${scopeWords(ctx.scope as TokenScope).join('; ')}) owns the branches it creates: leave owner out, or give ${me}`,
      { issues: [{ path: 'owner', message: `must be ${me}` }], details: { need: 'write', scope: scopeWords(ctx.scope as TokenScope) } },
    );
  const before = claims.get(me) ?? Promise.resolve();
  const turn = before
    .catch(() => undefined)
    .then(async () => {
      const owned = (await graph.branchRecords((rec) => rec.owner === me, ctx.signal)).length;
      if (owned >= limit)
        throw new BranchgraphError('quota_exceeded', `${me} owns ${owned} live branches, and its token allows ${limit}`, {
          details: { limit, owned, owner: me },
        });
      return create();
    });
  claims.set(me, turn);
  void turn
    .finally(() => {
      if (claims.get(me) === turn) claims.delete(me);
    })
    .catch(() => undefined);
  return turn;
}
