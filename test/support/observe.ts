/**
 * What a user can observe of a graph: every live branch with its head commit
 * and the full contents of every table. Crash and simulation tests compare
 * these exactly. Observing also checks every head's secondary indexes
 * against its tables.
 */
import { Graph } from '../../src/graph/graph.js';
import { allRows } from '../../src/graph/reads.js';
import { indexProblems } from '../../src/graph/index-maintenance.js';
import { canonicalJson } from '../../src/model/canonical.js';
import type { ObjectStore } from '../../src/store/object-store.js';

export interface Observed {
  heads: Record<string, string>;
  contents: Record<string, Record<string, Record<string, unknown>>>;
}

export async function observe(store: ObjectStore): Promise<Observed> {
  const g = await Graph.open(store);
  const heads: Record<string, string> = {};
  const contents: Observed['contents'] = {};
  for (const b of (await g.listBranches()).branches) {
    heads[b.record.name] = b.commit.id;
    const snap = await g.branchHead(b.record.name);
    // A published head's secondary indexes always describe its tables exactly.
    const wrong = await indexProblems(g.ports.runFiles, snap);
    if (wrong.length > 0) throw new Error(`branch ${b.record.name}: ${wrong.join('; ')}`);
    const tables: Record<string, Record<string, unknown>> = {};
    for (const t of snap.schema.types) {
      tables[t.name] = Object.fromEntries((await allRows({ tables: g.ports.tables, snap, table: t.name })).map((r) => [r.key, r.row]));
    }
    tables.__schema = snap.manifest.schema as never;
    contents[b.record.name] = tables;
  }
  return { heads, contents };
}

export const sameContents = (a: Observed, b: Observed): boolean => canonicalJson(a.contents) === canonicalJson(b.contents);
