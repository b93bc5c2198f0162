import { z } from 'zod';
import { Int64Z } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import { refOrMain } from '../../inputs.js';
import { keyProps } from '../../../model/schema.js';
import { versionStats } from '../../../table/table-version.js';

const TableInfoZ = z.object({
  name: z.string(),
  kind: z.enum(['node', 'edge']),
  from: z.string().nullable().describe("An edge table's source node table; null for a node table."),
  to: z.string().nullable().describe("An edge table's target node table; null for a node table."),
  key: z.array(z.string()).describe('The key properties, in key order.'),
  properties: z.number().int().describe("Properties, the key ones included (an edge's from and to are its ends, not properties)."),
  runs: z.number().int().describe('Stored runs the table is read from.'),
  storedRows: z
    .number()
    .int()
    .describe('Row versions stored in those runs: live rows, plus versions newer runs shadow and deletions not yet compacted away.'),
  bytes: Int64Z.describe('Stored bytes of those runs.'),
});

/**
 * Every table at a ref, with its shape and what storing it costs, from the manifest alone: no
 * run is read, so the answer costs the same for ten rows or ten million. Rows pending in the WAL
 * are not counted until a catch-up folds them.
 */
export const listTables = defineOperation({
  name: 'listTables',
  summary: 'The tables at a ref: kind, key, properties, and stored runs, rows and bytes.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z.object({ at: refOrMain }).strict(),
  output: z.object({ commit: z.string(), tables: z.array(TableInfoZ) }),
  async run(service, { at }, ctx) {
    const snap = await service.snapshot(at, ctx);
    const tables = snap.schema.types.map((t) => {
      const stats = versionStats(snap.manifest.tables[t.name] ?? { runs: [] });
      return {
        name: t.name,
        kind: t.kind,
        from: t.kind === 'edge' ? t.from : null,
        to: t.kind === 'edge' ? t.to : null,
        key: keyProps(t),
        properties: t.props.length,
        runs: stats.runs,
        storedRows: stats.rows,
        bytes: stats.bytes,
      };
    });
    return { commit: snap.manifest.commit.id, tables };
  },
  http: { method: 'GET', path: '/tables' },
  graphql: [{ type: 'Query', field: 'tables' }],
  mcp: [
    {
      tool: 'tables',
      description:
        "Every table at a ref (main by default): node or edge, an edge's from and to node tables, its key, how many properties, and the stored row versions and bytes. Cheap at any size: it reads no rows.",
      idempotent: true,
    },
  ],
});
