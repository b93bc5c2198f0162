import { Graph } from '../../src/graph/graph.js';
import type { WriteOp } from '../../src/graph/write-batch.js';
import { MemoryStore } from '../../src/store/memory-store.js';
import type { ObjectStore } from '../../src/store/object-store.js';

export const PEOPLE_SCHEMA = `
node Person {
  id: string @key
  name: string
  email: string? @unique
  age: int? @range(0, 150)
  role: enum(admin, member)?
}
node Company {
  id: string @key
  name: string
}
edge Knows: Person -> Person @cardinality(0, 3) {
  since: date?
}
edge WorksAt: Person -> Company
`;

export async function peopleGraph(store: ObjectStore = new MemoryStore()): Promise<Graph> {
  const g = await Graph.open(store, { actor: 'test' });
  await g.applySchema('main', PEOPLE_SCHEMA);
  return g;
}

/** A memory store holding a graph with `schema` applied and `ops` written on main. */
export async function seededStore(schema: string, ops: WriteOp[]): Promise<MemoryStore> {
  const store = new MemoryStore();
  const g = await Graph.open(store);
  await g.applySchema('main', schema);
  if (ops.length > 0) await mustWrite(g, 'main', ops);
  return store;
}

export const person = (id: string, extra: Record<string, unknown> = {}): WriteOp => ({
  op: 'insert',
  table: 'Person',
  values: { id, name: id.toUpperCase(), ...extra },
});

export const knows = (from: string, to: string, extra: Record<string, unknown> = {}): WriteOp => ({
  op: 'insert',
  table: 'Knows',
  values: { from, to, ...extra },
});

/** A write that must publish; returns its commit id. */
export async function mustWrite(g: Graph, branch: string, ops: WriteOp[]): Promise<string> {
  const r = await g.write(branch, ops);
  if (r.status === 'unchanged') throw new Error('expected the write to change something');
  return r.commit.id;
}

import { allRows } from '../../src/graph/reads.js';
import { mergeBranches, mergeSpec, type MergeAsk, type MergeResult, type MergeSuccess } from '../../src/merge/merge.js';

/** A table's rows on a branch, as { key: row }. */
export async function rowsOf(g: Graph, branch: string, table: string): Promise<Record<string, Record<string, unknown>>> {
  const rows = await allRows({ tables: g.ports.tables, snap: await g.branchHead(branch), table });
  return Object.fromEntries(rows.map((r) => [r.key, r.row]));
}

export async function merge(g: Graph, source: string, opts: Partial<MergeAsk> = {}): Promise<MergeResult> {
  return mergeBranches(g.ports, mergeSpec({ source, ...opts }));
}

export async function mergeOk(g: Graph, source: string, opts: Partial<MergeAsk> = {}): Promise<MergeSuccess> {
  const r = await merge(g, source, opts);
  if (r.status !== 'success') throw new Error(`expected a clean merge, got ${JSON.stringify(r.report.items.slice(0, 3))}`);
  return r;
}
