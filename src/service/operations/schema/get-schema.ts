import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import { refOrMain } from '../../inputs.js';
import { formatSchema } from '../../../model/schema-parser.js';
import type { Schema } from '../../../model/schema.js';

export const getSchema = defineOperation({
  name: 'getSchema',
  summary: 'The schema at a ref, as text and as IR, with the commit it was read at.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z.object({ at: refOrMain }).strict(),
  async run(service, { at }, ctx): Promise<{ commit: string; text: string; schema: Schema }> {
    const snap = await service.snapshot(at, ctx);
    return { commit: snap.manifest.commit.id, text: formatSchema(snap.schema), schema: snap.schema };
  },
  output: z.object({
    commit: IdZ,
    text: z.string(),
    schema: z.record(z.string(), z.unknown()).describe("The schema's IR."),
  }),
  http: { method: 'GET', path: '/schema' },
  // MCP's `schema` tool answers this with the tables' counts and the branch's SDL (mcp/mcp-tools.ts).
  graphql: [{ type: 'Query', field: 'schema' }],
});
