import { z } from 'zod';
import { defineOperation } from '../../operation.js';
import { branchName, textBody, WriteOpZ, type TextBody } from '../../inputs.js';
import { LIMITS } from '../../limits.js';
import { ndjsonStream } from '../../../graph/ndjson.js';
import type { WriteOp } from '../../../graph/write-batch.js';
import type { IngestReport } from '../../../wal/wal-writer.js';
import type { IngestResultDto } from '../../dtos.js';
import { IngestResultZ } from '../../results/write.js';

/** NDJSON text, or its bytes as they arrive (a file, a socket). */
export type NdjsonBody = TextBody;

/**
 * Append operations to this process's WAL shard: an NDJSON body parsed as it arrives and never
 * buffered whole (REST, the CLI), or a list of operations (GraphQL). Every generation is
 * acknowledged when its PUT returns; those sealed before a failure part-way are pending too.
 */
export const ingest = defineOperation({
  name: 'ingest',
  summary: 'Append operations to the WAL, streamed; acknowledged rows are durable and visible at once.',
  role: 'write',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      ndjson: textBody('NDJSON').optional(),
      ops: z.array(WriteOpZ).min(1).max(LIMITS.maxBatchOps).optional(),
    })
    .strict()
    .refine((i) => (i.ndjson === undefined) !== (i.ops === undefined), 'give either ndjson or ops'),
  async run(service, { branch, ndjson, ops }, ctx): Promise<IngestResultDto> {
    const body = typeof ndjson === 'string' ? bytesOf(ndjson) : ndjson;
    const stream = body === undefined ? (ops as WriteOp[]) : ndjsonStream(body, { maxBytes: service.opts.maxIngestBytes });
    let r: IngestReport;
    try {
      r = await service.writer.ingest(branch, stream as Iterable<WriteOp> | AsyncIterable<WriteOp>, {
        signal: ctx.signal,
        actor: ctx.actor,
      });
    } catch (e) {
      const acknowledged = (e as { details?: { acknowledged?: { generations?: number } } }).details?.acknowledged?.generations ?? 0;
      service.catchUps.sealed(branch, acknowledged);
      service.metrics.recordIngest(branch, acknowledged);
      throw e;
    }
    service.catchUps.sealed(branch, r.generations.length);
    service.metrics.recordIngest(branch, r.generations.length);
    const generations = r.generations.map((g) => ({ seq: g.seq, rows: g.rows, sealedAt: new Date(g.stamp).toISOString() }));
    return { branch, shard: r.shard, operations: r.operations, generations, ...r.summary };
  },
  output: IngestResultZ,
  http: {
    method: 'POST',
    path: '/branches/{id}/ingest',
    params: { id: 'branch' },
    body: 'stream',
    media: { 'application/x-ndjson': 'ndjson' },
    omit: ['ops'],
  },
  graphql: [{ type: 'Mutation', field: 'ingest', omit: ['ndjson'] }],
});

async function* bytesOf(text: string): AsyncIterable<Uint8Array> {
  yield new TextEncoder().encode(text);
}
