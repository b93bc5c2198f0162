/**
 * What a write batch, a load and a WAL ingest did.
 */
import { z } from 'zod';
import { CommitZ } from './commit.js';

/** What a write batch did: its commit (null when it changed nothing) and counts per kind of change. */
export const WriteResultZ = z
  .object({
    commit: CommitZ.nullable(),
    inserted: z.number().int(),
    updated: z.number().int(),
    deleted: z.number().int(),
    cascaded: z.number().int().describe('Edges deleted with their endpoint node.'),
  })
  .meta({ id: 'WriteResult' });

/** What an ingest made durable: its sealed generations, each acknowledged when its object was written. */
export const IngestResultZ = z
  .object({
    branch: z.string(),
    shard: z.string(),
    operations: z.number().int(),
    generations: z.array(
      z.object({
        seq: z.number().int(),
        rows: z.number().int(),
        sealedAt: z.string(),
      }),
    ),
    inserted: z.number().int(),
    updated: z.number().int(),
    deleted: z.number().int(),
    cascaded: z.number().int(),
  })
  .meta({ id: 'IngestResult' });
