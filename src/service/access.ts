/**
 * Scoped tokens, enforced: the one place where what a call touches meets
 * what its token may touch (model/token-scope.ts).
 *
 * Three doors, and every path goes through one of them:
 * - before an operation runs, `checkAccess` holds its declared access (the
 *   branches it reads and writes, or the whole graph) to the scope, so a
 *   refused call has done nothing;
 * - every snapshot a request resolves passes `checkSnapshot` (service.ts
 *   `snapshot`): a ref based on a branch needs that branch readable; a
 *   commit id or a tag needs a readable branch whose history holds that
 *   commit, so an id learnt elsewhere reads nothing the token could not
 *   reach through its own branches;
 * - listings and feeds keep what the scope reads (`visibleBranch`), rather
 *   than refusing whole.
 *
 * A refusal is `forbidden` and names the branch and the scope; it is made
 * before any row is read. A call with no scope (the bootstrap tokens, the
 * embedded API) passes every door at the cost of one comparison.
 */
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import { mayReachGraph, mayRead, mayWrite, readsEverything, scopeWords, writesEverything, type TokenScope } from '../model/token-scope.js';
import type { Ref, Snapshot } from '../graph/snapshot.js';
import { couldBeCommitPrefix } from '../model/ref-grammar.js';
import { mapLimit } from '../model/map-limit.js';
import type { RequestContext } from './request-context.js';
import type { Graph } from '../graph/graph.js';

/** What the doors read through: the service's own snapshot door, and the graph's branches. */
export interface AccessPorts {
  snapshot(ref: Ref, ctx: RequestContext): Promise<Snapshot>;
  readonly graph: Pick<Graph, 'branchRecords' | 'branchHead' | 'requests'>;
}

/**
 * What a call touches, as its operation declares it from its input: the refs it reads, the
 * branches it writes, and whether it reaches across branches (`graph`: tags, webhooks, GC), which
 * only a token unrestricted in that way may do. `filtered`: the operation keeps only what the
 * scope reads from its answer, or checks what it finds as it finds it (a merge request's branches).
 */
export type Access =
  | {
      reads?: readonly Ref[];
      writes?: readonly string[];
      graph?: 'read' | 'write';
      request?: RequestAccess;
      /** Only a token with no scope at all (tokens themselves: a scoped token never mints a wider one). */
      unscoped?: boolean;
    }
  | 'filtered';

/**
 * What a call does to a merge request, judged on its branches: reading it needs both readable;
 * its author's changes (revising, resolutions) need the source writable; a reviewer's (approving,
 * merging) the target; closing, either; merging that deletes the source, both.
 */
export interface RequestAccess {
  id: string;
  as: 'reader' | 'author' | 'reviewer' | 'either' | 'both';
}

/** Hold a call's declared access to the caller's scope, before it runs. */
export async function checkAccess(service: AccessPorts, access: Access, ctx: RequestContext): Promise<void> {
  const scope = ctx.scope;
  if (scope === undefined || access === 'filtered') return;
  if (access.graph !== undefined) requireEverything(scope, access.graph);
  if (access.unscoped === true && Object.keys(scope).length > 0)
    throw new BranchgraphError('forbidden', `only a token without a scope may do this (this one's: ${scopeWords(scope).join('; ')})`, {
      details: { need: 'unscoped', scope: scopeWords(scope) },
    });
  for (const name of access.writes ?? []) requireWrite(ctx, name);
  if (access.request !== undefined) {
    const doc = await service.graph.requests.get(access.request.id, ctx.signal);
    requireRequest(ctx, { source: doc.source, target: doc.target, as: access.request.as });
  }
  // A branch is judged by its name; a commit or tag by what resolving it finds (checkSnapshot).
  for (const ref of access.reads ?? []) {
    const name = branchOf(ref);
    if (name !== undefined) requireRead(ctx, name);
    else await service.snapshot(ref, ctx);
  }
}

/** Refuse unless the caller may read the branch `name`. */
export function requireRead(ctx: RequestContext, name: string): void {
  if (!mayRead(ctx.scope, name)) throw refused(ctx.scope as TokenScope, { branch: name, need: 'read' });
}

/** Refuse unless the caller may write the branch `name`. */
export function requireWrite(ctx: RequestContext, name: string): void {
  if (!mayWrite(ctx.scope, name)) throw refused(ctx.scope as TokenScope, { branch: name, need: 'write' });
}

/** Refuse unless a token of this scope may reach the graph `name`. */
export function requireGraph(scope: TokenScope | undefined, name: string): void {
  if (mayReachGraph(scope, name)) return;
  throw new BranchgraphError(
    'forbidden',
    `this token may not reach graph ${name} (its scope: ${scopeWords(scope as TokenScope).join('; ')})`,
    {
      details: { graph: name, need: 'read', scope: scopeWords(scope as TokenScope) },
    },
  );
}

/** Refuse unless the caller may act on a request between these branches in this way (`RequestAccess`). */
export function requireRequest(ctx: RequestContext, r: { source: string; target: string; as: RequestAccess['as'] }): void {
  requireRead(ctx, r.source);
  requireRead(ctx, r.target);
  if (r.as === 'author' || r.as === 'both') requireWrite(ctx, r.source);
  if (r.as === 'reviewer' || r.as === 'both') requireWrite(ctx, r.target);
  if (r.as === 'either' && !mayWrite(ctx.scope, r.source)) requireWrite(ctx, r.target);
}

/** May the caller see a request between these branches in a listing? */
export function visibleRequest(ctx: RequestContext, r: { source: string; target: string }): boolean {
  return mayRead(ctx.scope, r.source) && mayRead(ctx.scope, r.target);
}

/** May the caller see this event in the feed: one about a branch it reads, or, reading everything, any? */
export function visibleEvent(ctx: RequestContext, e: { branch?: string | undefined }): boolean {
  return e.branch === undefined ? readsEverything(ctx.scope) : mayRead(ctx.scope, e.branch);
}

/** May the caller see the branch `name` in a listing or a feed? */
export function visibleBranch(ctx: RequestContext, name: string): boolean {
  return mayRead(ctx.scope, name);
}

/** Does the caller read every branch (so graph-wide answers need no filtering)? */
export function seesEverything(ctx: RequestContext): boolean {
  return readsEverything(ctx.scope);
}

function requireEverything(scope: TokenScope, need: 'read' | 'write'): void {
  const ok = need === 'read' ? readsEverything(scope) : readsEverything(scope) && writesEverything(scope);
  if (!ok)
    throw new BranchgraphError(
      'forbidden',
      `this reaches every branch, and the token's scope is limited (${scopeWords(scope).join('; ')})`,
      {
        details: { need: 'unscoped', scope: scopeWords(scope) },
      },
    );
}

/**
 * Judge a ref by its branch's name before it is resolved, so a refusal never says whether an
 * unreadable branch exists. A name that could also be a commit-id prefix is left to
 * `checkSnapshot`, which judges what it resolved to.
 */
export function checkRefName(ctx: RequestContext, ref: Ref): void {
  if (ctx.scope === undefined) return;
  const name = branchOf(ref);
  if (name !== undefined && !couldBeCommitPrefix(name)) requireRead(ctx, name);
}

/**
 * Refuse a snapshot the caller may not read. A branch, or a path from one, was judged by name
 * (`checkRefName`); a commit, a tag, or a name that may have been read as a commit-id prefix needs
 * a readable live branch whose history holds the commit.
 */
export async function checkSnapshot(service: AccessPorts, a: { ref: Ref; snap: Snapshot; ctx: RequestContext }): Promise<void> {
  const { ctx, snap } = a;
  const scope = ctx.scope;
  if (scope === undefined || readsEverything(scope)) return;
  const name = branchOf(a.ref);
  if (name !== undefined && !couldBeCommitPrefix(name)) return;
  if (name !== undefined && snap.branch?.name === name) return requireRead(ctx, name);
  if (await reachableFromReadable(service, snap, ctx)) return;
  throw refused(scope, { need: 'read', commit: snap.manifest.commit.id });
}

/** Is `snap`'s commit in the history of some live branch the caller may read? */
async function reachableFromReadable(service: AccessPorts, snap: Snapshot, ctx: RequestContext): Promise<boolean> {
  return (await readableHistories(service, ctx))(snap);
}

/**
 * Whether a commit is in the history of a live branch the caller may read: each such branch's head
 * is read once (a listing of tags asks for many commits), then every answer is in memory.
 */
export async function readableHistories(service: AccessPorts, ctx: RequestContext): Promise<(snap: Snapshot) => boolean> {
  if (readsEverything(ctx.scope)) return () => true;
  const readable = await service.graph.branchRecords((rec) => visibleBranch(ctx, rec.name), ctx.signal);
  const read = await mapLimit(readable, 8, (rec) =>
    service.graph.branchHead(rec.name, ctx.signal, { withoutPending: true }).catch((e: unknown) => {
      // A branch deleted meanwhile, or whose head cannot be read, holds nothing this answer can use.
      if (isBranchgraphError(e, 'not_found') || isBranchgraphError(e, 'corrupt_object')) return undefined;
      throw e;
    }),
  );
  const heads = read.filter((h): h is Snapshot => h !== undefined);
  return (snap) => heads.some((h) => h.manifest.commit.id === snap.manifest.commit.id || h.manifest.ancestry.contains(snap.ref));
}

/** The branch a ref is based on: a branch, or a path from one (`main~2`, `main@{time}`). */
function branchOf(ref: Ref): string | undefined {
  if ('branch' in ref) return ref.branch;
  if ('path' in ref && 'branch' in ref.path.base) return ref.path.base.branch;
  return undefined;
}

function refused(scope: TokenScope, what: { branch?: string; commit?: string; need: 'read' | 'write' }): BranchgraphError<'forbidden'> {
  const subject = what.branch !== undefined ? `branch ${what.branch}` : `commit ${what.commit}, which no branch it may read holds,`;
  return new BranchgraphError('forbidden', `this token may not ${what.need} ${subject} (its scope: ${scopeWords(scope).join('; ')})`, {
    details: { ...(what.branch !== undefined ? { branch: what.branch } : {}), need: what.need, scope: scopeWords(scope) },
  });
}
