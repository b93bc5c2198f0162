import { z } from 'zod';

/**
 * Names one migration may drop: as many as a schema of MAX_SCHEMA_BYTES can declare (a type takes at
 * least 25 bytes), so any schema can be replaced in one change.
 */
const MAX_MIGRATION_DROPS = 50_000;
import { defineOperation } from '../../operation.js';
import { branchName, text, bypassProtection } from '../../inputs.js';
import { protectionPass } from '../../protection-pass.js';
import type { SchemaMigration } from '../../../model/schema-change.js';
import { publishedCommit, type SchemaApplyDto } from '../../dtos.js';
import { CommitZ } from '../../results/commit.js';

/** Schema text applied as one commit, with an optional migration (defaults for new required properties, dropped properties). */
export const applySchema = defineOperation({
  name: 'applySchema',
  summary: 'Apply schema text to a branch as one commit (admin).',
  role: 'admin',
  access: ({ branch }) => ({ writes: [branch] }),
  input: z
    .object({
      branch: branchName,
      schema: text(1 << 20),
      migration: z
        .object({
          drop: z.array(z.string().max(400)).max(MAX_MIGRATION_DROPS).optional(),
          defaults: z.record(z.string(), z.unknown()).optional(),
        })
        .strict()
        .meta({ title: 'SchemaMigration' })
        .optional(),
      message: text(2000).optional(),
      author: text(200).optional(),
      bypassProtection,
    })
    .strict(),
  async run(service, input, ctx): Promise<SchemaApplyDto> {
    const r = await service.graph.applySchema(input.branch, input.schema, {
      signal: ctx.signal,
      actor: ctx.actor,
      author: input.author,
      message: input.message ?? 'apply schema',
      migration: input.migration as SchemaMigration | undefined,
      protection: protectionPass(ctx, input.bypassProtection),
    });
    return { commit: publishedCommit(r), tables: r.result.tables };
  },
  output: z.object({
    commit: CommitZ.nullable(),
    tables: z.record(z.string(), z.enum(['create', 'keep', 'check', 'rewrite', 'drop'])),
  }),
  http: { method: 'POST', path: '/branches/{id}/schema', params: { id: 'branch' } },
  graphql: [{ type: 'Mutation', field: 'applySchema', input: 'SchemaApplyInput' }],
});
