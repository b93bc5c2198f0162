import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import { refOrMain, tableName } from '../../inputs.js';
import { liveRows } from '../../../graph/reads.js';
import {
  checkExportSize,
  EXPORT_EXTENSIONS,
  EXPORT_FORMATS,
  EXPORT_MEDIA_TYPES,
  exportTable as encodeTable,
  type ExportFormat,
} from '../../../graph/table-export.js';

/**
 * A table export: the commit it was read at, and its bytes as they are produced. Over HTTP the
 * bytes are the body (in the format's media type) and the commit is the `X-Branchgraph-Commit`
 * header, so the result's schema is the body's: binary.
 */
export const TableExportZ = z.object({
  commit: IdZ,
  body: z.custom<AsyncIterable<Uint8Array>>((v) => v !== null && typeof v === 'object' && Symbol.asyncIterator in v),
});
export type TableExport = z.infer<typeof TableExportZ>;

/**
 * A table at a ref, as a file for analytical tools (graph/table-export.ts). A branch with rows
 * pending in the WAL has them folded into a commit first (as a merge does before it takes a
 * branch's rows): the commit the export names then holds exactly the rows exported, so exporting
 * at it again, or another table, reads the same state. The snapshot is resolved, and the table
 * found, before the first byte, so a bad ref or table is an error rather than a broken stream.
 */
export const exportTable = defineOperation({
  name: 'exportTable',
  summary: 'A table at a ref as NDJSON, Arrow or Parquet, streamed.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      table: tableName,
      at: refOrMain,
      format: z
        .enum(EXPORT_FORMATS)
        .optional()
        .transform((f): ExportFormat => f ?? 'ndjson'),
    })
    .strict(),
  output: TableExportZ,
  async run(service, { table, at, format }, ctx): Promise<TableExport> {
    const head = await service.snapshot(at, ctx);
    const message = `fold pending WAL generations for an export of ${table}`;
    const snap =
      'branch' in at ? await service.graph.foldExactly({ branch: at.branch, head, message, signal: ctx.signal, actor: ctx.actor }) : head;
    const tables = service.graph.ports.tables;
    const { type, version } = tables.table(snap, table, ctx.signal);
    checkExportSize(
      format,
      version.runs.reduce((n, r) => n + r.rows, 0),
    );
    const commit = snap.manifest.commit.id;
    return { commit, body: encodeTable({ type, commit, rows: liveRows({ tables, snap, table, signal: ctx.signal }) }, format) };
  },
  http: {
    method: 'GET',
    path: '/tables/{table}/export',
    stream: {
      send: (out, input) => ({
        body: out.body,
        headers: {
          'content-type': EXPORT_MEDIA_TYPES[input.format as ExportFormat],
          'content-disposition': `attachment; filename="${String(input.table)}.${EXPORT_EXTENSIONS[input.format as ExportFormat]}"`,
          'x-branchgraph-commit': out.commit,
        },
      }),
      receive: (res) => ({ commit: res.headers.get('x-branchgraph-commit') ?? '', body: res.body as unknown as AsyncIterable<Uint8Array> }),
    },
  },
});
