/**
 * Walks over a snapshot's edges: the neighbourhood of a node, the shortest
 * path between two nodes, and every simple path between them up to a
 * length.
 *
 * Every walk goes a level at a time. A level's frontier is read in one
 * batch per edge table and direction, never one call per node: out-edges by
 * key prefix (an edge's key starts with its source), in-edges through the
 * incoming-edge index, then the edge rows in one lookup. What a walk may
 * read is bounded before each level runs: the frontier and the edges it
 * reads count against the walk's budget, and a walk that would pass it
 * stops with `payload_too_large` (or, for a neighbourhood, stops at its node
 * limit and says it was truncated) rather than reading on.
 *
 * Order is deterministic: a frontier is expanded in (table, key) order and
 * each node's edges in key order, so a shortest path is the first one in
 * that order, and paths are listed by length, then by their edges' (table,
 * key) sequence.
 */
import { BranchgraphError } from '../model/errors.js';
import type { EdgeType, Schema } from '../model/schema.js';
import { edgeKeyPrefix, type Row } from '../model/values.js';
import { compareKey } from '../table/run.js';
import { lookupRows } from '../table/table-lookup.js';
import { prefixRowsMany } from '../table/table-prefix.js';
import { encodeNodeKey, IN_SPEC } from '../table/secondary-index.js';
import type { TableReader } from './ports.js';
import type { Snapshot } from './snapshot.js';

/** The longest walk: six hops, as far as any graph query here goes. */
export const MAX_HOPS = 6;
/** Edges one walk may read, over all its levels. */
export const MAX_WALK_EDGES = 200_000;
/** Partial paths one path search may hold at a level. */
export const MAX_PARTIAL_PATHS = 100_000;

export type Direction = 'out' | 'in' | 'both';

export interface NodeRef {
  table: string;
  key: string;
}

export interface WalkEdge {
  table: string;
  key: string;
  from: string;
  to: string;
  row: Row;
}

/** What a walk reads at: the snapshot, its tables, and which edges it may take. */
export interface WalkScope {
  tables: TableReader;
  snap: Snapshot;
  /** Edge tables the walk may take (every edge table when absent). */
  via?: readonly string[] | undefined;
  direction: Direction;
  signal?: AbortSignal | undefined;
}

/** One step from a node: the edge taken and the node it reaches. */
interface Step {
  edge: WalkEdge;
  next: NodeRef;
}

/** A node's identity across tables: its table and key. */
export const nodeId = (n: NodeRef): string => `${n.table}\u0000${n.key}`;
const byNode = (a: NodeRef, b: NodeRef): number => compareKey(a.table, b.table) || compareKey(a.key, b.key);

const bad = (path: string, message: string): BranchgraphError =>
  new BranchgraphError('invalid_input', `${path}: ${message}`, { issues: [{ path, message }] });

/** The edge tables of `via`, checked against the schema. */
function edgeTables(schema: Schema, via: readonly string[] | undefined): EdgeType[] {
  const edges = schema.types.filter((t): t is EdgeType => t.kind === 'edge');
  if (via === undefined) return edges;
  return via.map((name, i) => {
    const e = edges.find((t) => t.name === name);
    if (e === undefined) throw bad(`via[${i}]`, `${name} is not an edge table`);
    return e;
  });
}

/** Check a walk's start (or end): a node table's existing entity. */
export async function checkNode(scope: WalkScope, n: NodeRef, path: string): Promise<void> {
  const view = scope.tables.table(scope.snap, n.table, scope.signal);
  if (view.type.kind !== 'node') throw bad(`${path}.table`, `${n.table} is not a node table`);
  if ((await lookupRows(view.version, [n.key], view.load)).size === 0)
    throw new BranchgraphError('not_found', `${n.table} ${n.key} does not exist`, { details: { table: n.table, key: n.key } });
}

/** Reads a walk's levels within its edge budget. */
export class Walker {
  private readonly edges: EdgeType[];
  private edgesRead = 0;

  constructor(private readonly scope: WalkScope) {
    this.edges = edgeTables(scope.snap.schema, scope.via);
  }

  /** Every step from every node of `frontier`, per node in (table, key) order, each node's steps in edge order. */
  async expand(frontier: readonly NodeRef[]): Promise<Map<string, Step[]>> {
    const out = new Map<string, Step[]>(frontier.map((n) => [nodeId(n), []]));
    const { direction } = this.scope;
    const reads: Promise<{ at: string; step: Step }[]>[] = [];
    for (const e of this.edges) {
      if (direction !== 'in') reads.push(this.side(e, 'out', frontier));
      if (direction !== 'out') reads.push(this.side(e, 'in', frontier));
    }
    for (const { at, step } of (await Promise.all(reads)).flat()) out.get(at)?.push(step);
    for (const steps of out.values())
      steps.sort((a, b) => compareKey(a.edge.table, b.edge.table) || compareKey(a.edge.key, b.edge.key) || byNode(a.next, b.next));
    return out;
  }

  /** The steps along (out) or against (in) one edge table from the frontier's nodes of its table, each with the node it leaves. */
  private async side(e: EdgeType, dir: 'out' | 'in', frontier: readonly NodeRef[]): Promise<{ at: string; step: Step }[]> {
    const here = dir === 'out' ? e.from : e.to;
    const keys = frontier.filter((n) => n.table === here).map((n) => n.key);
    if (keys.length === 0) return [];
    const view = this.scope.tables.table(this.scope.snap, e.name, this.scope.signal);
    let rows: { key: string; row: Row }[];
    if (dir === 'out') {
      const found = await prefixRowsMany({ v: view.version, load: view.load, prefixes: keys.map(edgeKeyPrefix) });
      rows = [...found.values()].flat().map((r) => ({ key: r.key, row: r.props as Row }));
    } else {
      const held = await view.indexes.holders(IN_SPEC, keys.map(encodeNodeKey));
      const found = await lookupRows(view.version, [...held.values()].flat(), view.load);
      rows = [...found.values()].map((r) => ({ key: r.key, row: r.props as Row }));
    }
    this.edgesRead += rows.length;
    if (this.edgesRead > MAX_WALK_EDGES)
      throw new BranchgraphError('payload_too_large', `the walk reads more than ${MAX_WALK_EDGES} edges: give fewer hops or narrow via`);
    return rows.map((r) => {
      const from = r.row.from as string;
      const to = r.row.to as string;
      const edge = { table: e.name, key: r.key, from, to, row: r.row };
      const next = dir === 'out' ? { table: e.to, key: to } : { table: e.from, key: from };
      return { at: nodeId({ table: here, key: dir === 'out' ? from : to }), step: { edge, next } };
    });
  }
}

function checkHops(hops: number, path: string): void {
  if (!Number.isInteger(hops) || hops < 1 || hops > MAX_HOPS) throw bad(path, `an integer from 1 to ${MAX_HOPS}`);
}

/** The nodes within `hops` of `from` (each at its least depth), and the edges the walk took, at most `first` nodes. */
export async function neighborhood(
  scope: WalkScope,
  ask: { from: NodeRef; hops: number; first: number },
): Promise<{ nodes: (NodeRef & { depth: number })[]; edges: WalkEdge[]; truncated: boolean }> {
  checkHops(ask.hops, 'hops');
  await checkNode(scope, ask.from, 'from');
  const walker = new Walker(scope);
  const seen = new Map<string, NodeRef & { depth: number }>([[nodeId(ask.from), { ...ask.from, depth: 0 }]]);
  const edges = new Map<string, WalkEdge>();
  let frontier: NodeRef[] = [ask.from];
  let truncated = false;
  for (let depth = 1; depth <= ask.hops && frontier.length > 0 && !truncated; depth++) {
    const steps = await walker.expand(frontier);
    const next: NodeRef[] = [];
    for (const n of frontier)
      for (const s of steps.get(nodeId(n)) ?? []) {
        const reached = seen.has(nodeId(s.next));
        if (!reached && seen.size >= ask.first) {
          truncated = true;
          continue;
        }
        edges.set(`${s.edge.table}\u0000${s.edge.key}`, s.edge);
        if (reached) continue;
        seen.set(nodeId(s.next), { ...s.next, depth });
        next.push(s.next);
      }
    frontier = next.sort(byNode);
  }
  return { nodes: [...seen.values()], edges: [...edges.values()], truncated };
}

/** A path: its nodes from start to end, and the edge of each hop. */
export interface WalkPath {
  nodes: NodeRef[];
  edges: WalkEdge[];
}

/** The shortest path from `from` to `to` within `maxHops` (the first in walk order), or null. */
export async function shortestPath(scope: WalkScope, ask: { from: NodeRef; to: NodeRef; maxHops: number }): Promise<WalkPath | null> {
  checkHops(ask.maxHops, 'maxHops');
  await Promise.all([checkNode(scope, ask.from, 'from'), checkNode(scope, ask.to, 'to')]);
  if (nodeId(ask.from) === nodeId(ask.to)) return { nodes: [ask.from], edges: [] };
  const walker = new Walker(scope);
  const parent = new Map<string, { prev: NodeRef; edge: WalkEdge } | null>([[nodeId(ask.from), null]]);
  let frontier: NodeRef[] = [ask.from];
  for (let depth = 1; depth <= ask.maxHops && frontier.length > 0; depth++) {
    const steps = await walker.expand(frontier);
    const next: NodeRef[] = [];
    for (const n of frontier)
      for (const s of steps.get(nodeId(n)) ?? []) {
        if (parent.has(nodeId(s.next))) continue;
        parent.set(nodeId(s.next), { prev: n, edge: s.edge });
        if (nodeId(s.next) === nodeId(ask.to)) return pathTo(ask.to, parent);
        next.push(s.next);
      }
    frontier = next.sort(byNode);
  }
  return null;
}

function pathTo(end: NodeRef, parent: Map<string, { prev: NodeRef; edge: WalkEdge } | null>): WalkPath {
  const nodes: NodeRef[] = [end];
  const edges: WalkEdge[] = [];
  for (let p = parent.get(nodeId(end)); p !== null && p !== undefined; p = parent.get(nodeId(p.prev))) {
    nodes.unshift(p.prev);
    edges.unshift(p.edge);
  }
  return { nodes, edges };
}

/**
 * Every simple path (no node twice) from `from` to `to` of at most `maxHops` edges, shortest
 * first, at most `first` of them, and whether there are more.
 */
export async function allPaths(
  scope: WalkScope,
  ask: { from: NodeRef; to: NodeRef; maxHops: number; first: number },
): Promise<{ paths: WalkPath[]; hasMore: boolean }> {
  checkHops(ask.maxHops, 'maxHops');
  await Promise.all([checkNode(scope, ask.from, 'from'), checkNode(scope, ask.to, 'to')]);
  if (nodeId(ask.from) === nodeId(ask.to)) return { paths: [{ nodes: [ask.from], edges: [] }], hasMore: false };
  const walker = new Walker(scope);
  const found: WalkPath[] = [];
  let partial: WalkPath[] = [{ nodes: [ask.from], edges: [] }];
  for (let depth = 1; depth <= ask.maxHops && partial.length > 0 && found.length <= ask.first; depth++) {
    const ends = new Map(partial.map((p) => [nodeId(p.nodes.at(-1) as NodeRef), p.nodes.at(-1) as NodeRef]));
    const steps = await walker.expand([...ends.values()].sort(byNode));
    const next: WalkPath[] = [];
    for (const p of partial) {
      const on = new Set(p.nodes.map(nodeId));
      for (const s of steps.get(nodeId(p.nodes.at(-1) as NodeRef)) ?? []) {
        if (on.has(nodeId(s.next))) continue;
        const q = { nodes: [...p.nodes, s.next], edges: [...p.edges, s.edge] };
        if (nodeId(s.next) === nodeId(ask.to)) found.push(q);
        else if (depth < ask.maxHops) next.push(q);
      }
    }
    if (next.length > MAX_PARTIAL_PATHS)
      throw new BranchgraphError(
        'payload_too_large',
        `more than ${MAX_PARTIAL_PATHS} partial paths at ${depth} hops: give fewer hops or narrow via`,
      );
    partial = next;
  }
  const order = (a: WalkPath, b: WalkPath): number => {
    if (a.edges.length !== b.edges.length) return a.edges.length - b.edges.length;
    for (let i = 0; i < a.edges.length; i++) {
      const x = a.edges[i] as WalkEdge;
      const y = b.edges[i] as WalkEdge;
      const c = compareKey(x.table, y.table) || compareKey(x.key, y.key) || byNode(a.nodes[i + 1] as NodeRef, b.nodes[i + 1] as NodeRef);
      if (c !== 0) return c;
    }
    return 0;
  };
  found.sort(order);
  return { paths: found.slice(0, ask.first), hasMore: found.length > ask.first };
}

/** The rows of `nodes`, looked up in one batch per table. */
export async function nodeRows(scope: WalkScope, nodes: readonly NodeRef[]): Promise<Map<string, Row>> {
  const byTable = new Map<string, string[]>();
  for (const n of nodes) {
    const keys = byTable.get(n.table);
    if (keys === undefined) byTable.set(n.table, [n.key]);
    else keys.push(n.key);
  }
  const out = new Map<string, Row>();
  await Promise.all(
    [...byTable].map(async ([table, keys]) => {
      const view = scope.tables.table(scope.snap, table, scope.signal);
      for (const [k, r] of await lookupRows(view.version, keys, view.load)) out.set(nodeId({ table, key: k }), r.props as Row);
    }),
  );
  return out;
}
