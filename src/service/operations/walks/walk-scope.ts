/** What every walk operation shares: its scope at a ref, and its answer's nodes with their rows. */
import { z } from 'zod';
import type { RequestContext } from '../../request-context.js';
import type { BranchgraphService } from '../../service.js';
import { nodeId, nodeRows, type NodeRef, type WalkPath, type WalkScope } from '../../../graph/graph-walk.js';
import type { Ref } from '../../../graph/snapshot.js';
import { refOrMain, tableName } from '../../inputs.js';
import { DirectionZ, NodeRefZ } from '../../results/walk.js';

/** Which edge tables a walk may take (all of them when absent). */
export const ViaZ = z.array(tableName).min(1).max(100).optional().describe('Edge tables the walk may take (every edge table by default).');

/** The input fields of a walk between two nodes (a shortest path, every path). */
export const BETWEEN_ASK = {
  at: refOrMain,
  from: NodeRefZ,
  to: NodeRefZ,
  via: ViaZ,
  direction: DirectionZ.optional().describe('Along edges (out, the default), against them (in) or both.'),
};

/** Run `walk` at `at` under the request's meter, counting the nodes and edges it answers as rows read. */
export async function walkAt<T>(
  service: BranchgraphService,
  ctx: RequestContext,
  a: {
    at: Ref;
    via?: readonly string[] | undefined;
    direction: WalkScope['direction'];
    walk: (scope: WalkScope) => Promise<{ value: T; rows: number }>;
  },
): Promise<T> {
  return service.readAt(a.at, ctx, ({ tables, snap }) => a.walk({ tables, snap, via: a.via, direction: a.direction, signal: ctx.signal }));
}

/** Nodes as answers give them: with their rows, read in one batch per table. */
export async function withRows<N extends NodeRef>(
  scope: WalkScope,
  nodes: readonly N[],
): Promise<(N & { row: Record<string, unknown> })[]> {
  const rows = await nodeRows(scope, nodes);
  return nodes.map((n) => ({ ...n, row: rows.get(nodeId(n)) ?? {} }));
}

/** Paths as answers give them: their nodes with rows. */
export async function pathsWithRows(scope: WalkScope, paths: readonly WalkPath[]) {
  const rows = await nodeRows(
    scope,
    paths.flatMap((p) => p.nodes),
  );
  return paths.map((p) => ({ nodes: p.nodes.map((n) => ({ ...n, row: rows.get(nodeId(n)) ?? {} })), edges: p.edges }));
}
