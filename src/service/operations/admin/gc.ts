import { z } from 'zod';
import { Int64Z } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import type { GcReportDto } from '../../dtos.js';

const output = z.object({
  dryRun: z.boolean().describe('true when asked, and whenever a branch record cannot be read (then nothing is deleted)'),
  damagedBranches: z.array(z.string()),
  graceSeconds: z.number().int().min(900),
  reachableManifests: z.number().int(),
  scanned: z.number().int(),
  deleted: z
    .object({
      manifests: z.number().int(),
      runs: z.number().int(),
      commits: z.number().int(),
      hints: z.number().int(),
      parts: z.number().int().describe('Manifest part tree nodes no retained manifest names.'),
      wal: z.number().int(),
      idempotency: z.number().int().describe('Idempotency records past their lifetime (kept at least 24 hours).'),
      deadLetters: z.number().int().describe('Webhook dead letters older than 30 days.'),
      search: z.number().int().describe('Search segments (derived objects) of runs no retained manifest names.'),
    })
    .describe('Objects deleted (or that would be), by kind.'),
  bytesFreed: Int64Z,
  keys: z.array(z.string()),
});

/** The report as GraphQL gives it: each kind's deletions as a field of its own, and no key list. */
const GraphqlGcReportZ = output
  .omit({ deleted: true, keys: true })
  .extend({
    deletedManifests: output.shape.deleted.shape.manifests,
    deletedRuns: output.shape.deleted.shape.runs,
    deletedCommits: output.shape.deleted.shape.commits,
    deletedHints: output.shape.deleted.shape.hints,
    deletedParts: output.shape.deleted.shape.parts,
    deletedWalGenerations: output.shape.deleted.shape.wal,
    deletedIdempotencyRecords: output.shape.deleted.shape.idempotency,
    deletedDeadLetters: output.shape.deleted.shape.deadLetters,
    deletedSearchSegments: output.shape.deleted.shape.search,
  })
  .meta({ title: 'GcReport' });

/** Delete what no live manifest references and is older than the grace (at least 15 minutes, by the store's clock); a dry run only reports. */
export const gc = defineOperation({
  name: 'gc',
  summary: 'Delete objects no live manifest references, older than the grace period (admin).',
  role: 'admin',
  access: () => ({ graph: 'write' }),
  input: z
    .object({
      graceSeconds: z
        .number()
        .int()
        .min(0)
        .max(10 * 365 * 24 * 3600)
        .optional(),
      dryRun: z.boolean().optional(),
    })
    .strict(),
  async run(service, input, ctx): Promise<GcReportDto> {
    const graceMs = input.graceSeconds === undefined ? undefined : input.graceSeconds * 1000;
    const r = await service.graph.gc({ graceMs, dryRun: input.dryRun ?? false, signal: ctx.signal });
    const { graceMs: grace, ...rest } = r;
    return { ...rest, graceSeconds: grace / 1000, keys: r.keys.slice(0, 1000) };
  },
  output,
  http: { method: 'POST', path: '/gc' },
  graphql: [
    {
      type: 'Mutation',
      field: 'gc',
      result: (r) => ({
        ...r,
        deletedManifests: r.deleted.manifests,
        deletedRuns: r.deleted.runs,
        deletedCommits: r.deleted.commits,
        deletedHints: r.deleted.hints,
        deletedParts: r.deleted.parts,
        deletedWalGenerations: r.deleted.wal,
        deletedIdempotencyRecords: r.deleted.idempotency,
        deletedDeadLetters: r.deleted.deadLetters,
        deletedSearchSegments: r.deleted.search,
      }),
      output: GraphqlGcReportZ,
      // GraphQL carries the counts, not the list of keys.
      receive: (v) => {
        const r = v as z.output<typeof GraphqlGcReportZ>;
        const deleted = {
          manifests: r.deletedManifests,
          runs: r.deletedRuns,
          commits: r.deletedCommits,
          hints: r.deletedHints,
          parts: r.deletedParts,
          wal: r.deletedWalGenerations,
          idempotency: r.deletedIdempotencyRecords,
          search: r.deletedSearchSegments,
          deadLetters: r.deletedDeadLetters,
        };
        const { dryRun, damagedBranches, graceSeconds, reachableManifests, scanned, bytesFreed } = r;
        return { dryRun, damagedBranches, graceSeconds, reachableManifests, scanned, bytesFreed, deleted, keys: [] };
      },
    },
  ],
});
