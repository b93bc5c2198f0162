import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, bytesBody, tableName, textBody, type ByteStream } from '../../inputs.js';
import { writeResult } from './write-result.js';
import type { WriteResultDto } from '../../dtos.js';
import { WriteResultZ } from '../../results/write.js';
import type { LoadSource } from '../../../graph/load-source.js';

/**
 * A bulk load as one all-or-nothing commit, followed as a long operation (parse, validate,
 * write): NDJSON operations, or one table's rows as CSV or Parquet. REST streams the body as it
 * arrives, its Content-Type saying which, with `table` and `op` in the query string; a caller in
 * this process may give it as a byte stream too. A CSV or NDJSON load into an empty table then reads it as it
 * arrives, in memory bounded whatever its size (docs/import.md); a load read whole is bounded by
 * the server's body limit when it comes over the network.
 */
export const load = defineOperation({
  name: 'load',
  summary: 'Bulk load NDJSON operations, or CSV or Parquet rows of one table, as one all-or-nothing commit.',
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      ndjson: textBody('NDJSON').optional().describe('NDJSON operations, one per line: {"table","values","op"?} (op defaults to upsert).'),
      csv: textBody('CSV').optional().describe('CSV rows of `table`, under a header line naming its properties.'),
      parquet: bytesBody('Parquet').optional(),
      table: tableName.optional().describe('The table CSV or Parquet rows go to.'),
      op: z
        .enum(['insert', 'upsert'])
        .meta({ title: 'LoadOp' })
        .optional()
        .describe('How CSV or Parquet rows are written: upsert (the default) or insert (an existing key is refused).'),
    })
    .strict()
    .refine((i) => [i.ndjson, i.csv, i.parquet].filter((b) => b !== undefined).length === 1, 'give one of ndjson, csv or parquet'),
  async run(service, input, ctx): Promise<WriteResultDto> {
    const { branch } = input;
    const source: LoadSource =
      input.ndjson !== undefined
        ? { format: 'ndjson', body: input.ndjson, table: input.table, op: input.op }
        : input.csv !== undefined
          ? { format: 'csv', body: input.csv, table: input.table, op: input.op }
          : { format: 'parquet', body: input.parquet as Uint8Array | ByteStream, table: input.table, op: input.op };
    const r = await service.tracked({ kind: 'load', branch, source: null, log: ctx.log }, ctx, (progress) =>
      service.graph.load(branch, source, {
        ...{ signal: ctx.signal, actor: ctx.actor, message: 'bulk load', progress },
        // Held whole, a body from the network is bounded as any request body is; one streamed through is not held.
        maxHeldBytes: ctx.transport === 'http' ? service.opts.maxBodyBytes : undefined,
      }),
    );
    if (r.status === 'published') service.compactor.touched(branch);
    return writeResult(r);
  },
  output: WriteResultZ,
  http: {
    method: 'POST',
    path: '/branches/{id}/load',
    params: { id: 'branch' },
    body: 'stream',
    media: { 'application/x-ndjson': 'ndjson', 'text/csv': 'csv', 'application/vnd.apache.parquet': 'parquet' },
  },
  graphql: [{ type: 'Mutation', field: 'load', omit: ['parquet'] }],
});
