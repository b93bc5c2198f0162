/**
 * Checking a timed merge's rows, outside its timing. A merge that dropped
 * one side's rows, or took the wrong side of a property, would otherwise
 * pass every matrix that only asks whether it merged.
 *
 * The reference is deliberately naive and independent of the engine's
 * merge: every key either side changed since the merge base, in memory,
 * property by property: a side that left a property as the base had it
 * takes the other side's value; where both changed it, the strategy's side
 * wins (source-wins for the `resolved` arm). A deletion wins over an
 * unchanged row; against a change, the source's side wins as above. The merged commit must hold exactly that for every
 * changed key, and the base's rows for a sample of keys neither touched.
 */
import { canonicalJson } from '../src/model/canonical.js';
import type { Graph } from '../src/graph/graph.js';
import { diffSnapshots, getRow, scanRows } from '../src/graph/reads.js';
import type { Row } from '../src/model/values.js';

type Side = Map<string, Row | null>;

async function changesSince(g: Graph, base: string, side: string): Promise<Map<string, Side>> {
  const [from, to] = await Promise.all([g.ports.heads.commitSnapshot(base), g.ports.heads.commitSnapshot(side)]);
  const out = new Map<string, Side>();
  for (const t of await diffSnapshots({ runs: g.ports.runFiles, from, to })) {
    const m: Side = new Map();
    for (const r of t.inserted) m.set(r.key, r.row);
    for (const r of t.updated) m.set(r.key, r.after);
    for (const r of t.deleted) m.set(r.key, null);
    out.set(t.table, m);
  }
  return out;
}

const same = (a: unknown, b: unknown): boolean => canonicalJson((a ?? null) as never) === canonicalJson((b ?? null) as never);

/** The row the reference expects for one key: base, and each side's row where that side changed it. */
function expectedRow(base: Row | null, s: Row | null | undefined, t: Row | null | undefined): Row | null {
  if (s === undefined) return t === undefined ? base : t;
  if (t === undefined) return s;
  // A deletion against a change: a conflict only a strategy lands, and the arms that land one take the source.
  if (s === null || t === null) return s;
  const out: Row = {};
  for (const p of new Set([...Object.keys(base ?? {}), ...Object.keys(s), ...Object.keys(t)])) {
    const [b, sv, tv] = [base?.[p] ?? null, s[p] ?? null, t[p] ?? null];
    out[p] = same(sv, b) ? tv : sv;
  }
  return out;
}

/** Throws naming the first key whose merged row differs from the reference; returns how many keys it checked. */
export async function verifyMergedRows(g: Graph, c: { base: string; source: string; target: string; merged: string }): Promise<number> {
  const [src, tgt] = await Promise.all([changesSince(g, c.base, c.source), changesSince(g, c.base, c.target)]);
  const [base, merged] = await Promise.all([g.ports.heads.commitSnapshot(c.base), g.ports.heads.commitSnapshot(c.merged)]);
  const read = (snap: typeof base, table: string, key: string) => getRow({ tables: g.ports.tables, snap, table, key });
  let checked = 0;
  for (const table of new Set([...src.keys(), ...tgt.keys()])) {
    const s = src.get(table) ?? new Map();
    const t = tgt.get(table) ?? new Map();
    for (const key of new Set([...s.keys(), ...t.keys()])) {
      const want = expectedRow(await read(base, table, key), s.get(key), t.get(key));
      const got = await read(merged, table, key);
      if (!same(got, want))
        throw new Error(
          `merged ${table} ${key} is ${canonicalJson((got ?? null) as never)}, expected ${canonicalJson((want ?? null) as never)}`,
        );
      checked++;
    }
    // Keys neither side touched read as the base had them.
    for (const r of (await scanRows({ tables: g.ports.tables, snap: base, table, limit: 100 })).items) {
      if (s.has(r.key) || t.has(r.key)) continue;
      if (!same(await read(merged, table, r.key), r.row))
        throw new Error(`merged ${table} ${r.key} changed though neither side changed it`);
      checked++;
    }
  }
  if (checked === 0) throw new Error('the merge changed nothing to check');
  return checked;
}
