import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { defineOperation } from '../../operation.js';
import { RefZ } from '../../inputs.js';
import { canonicalJson } from '../../../model/canonical.js';
import { diffSnapshots } from '../../../graph/reads.js';
import { MAX_DIFF_PAGE, pageDiff } from '../../../graph/diff-page.js';
import { mergeBaseSnapshot } from '../../../merge/merge-base-snapshot.js';
import type { DiffResultDto } from '../../dtos.js';
import { TableDiffZ } from '../../results/row.js';

/**
 * A diff with counts and paging. `two-dot` is what changed from `from` to `to`; `three-dot` is
 * what changed on `to` since it and `from` diverged (the diff from their merge base to `to`),
 * which is what merging `to` into `from` would bring. Without a limit, every change.
 */
export const diff = defineOperation({
  name: 'diff',
  summary: 'What changed between two refs (two-dot or three-dot), with counts, a page at a time.',
  role: 'read',
  access: ({ from, to }) => ({ reads: [from, to] }),
  input: z
    .object({
      from: RefZ,
      to: RefZ,
      mode: z.enum(['two-dot', 'three-dot']).optional(),
      limit: z.number().int().min(1).max(MAX_DIFF_PAGE).optional(),
      cursor: z.string().max(12_000).optional(),
    })
    .strict(),
  async run(service, { from, to, mode = 'two-dot', limit, cursor }, ctx): Promise<DiffResultDto> {
    const [a, b] = await Promise.all([service.snapshot(from, ctx), service.snapshot(to, ctx)]);
    const ports = service.graph.ports;
    const base = mode === 'three-dot' ? await mergeBaseSnapshot(ports, { a, b }, ctx.signal) : a;
    // A cursor pages through one diff: these two commits, this mode (graph/diff-page.ts).
    const scope = canonicalJson({ mode, from: a.manifest.commit.id, to: b.manifest.commit.id });
    const changes = await diffSnapshots({ runs: ports.runFiles, from: base, to: b, signal: ctx.signal });
    const page = pageDiff(changes, { ...(limit !== undefined ? { limit } : {}), ...(cursor !== undefined ? { cursor } : {}), scope });
    return {
      mode,
      from: a.manifest.commit.id,
      to: b.manifest.commit.id,
      base: mode === 'three-dot' ? base.manifest.commit.id : null,
      ...page,
    };
  },
  output: z.object({
    mode: z.enum(['two-dot', 'three-dot']),
    from: IdZ.describe('The commit `from` resolved to.'),
    to: IdZ.describe('The commit `to` resolved to.'),
    base: IdZ.nullable().describe('three-dot: the merge base the changes start from.'),
    tables: z.array(TableDiffZ),
    summary: z.array(
      z.object({
        table: z.string(),
        inserted: z.number().int(),
        updated: z.number().int(),
        deleted: z.number().int(),
      }),
    ),
    nextCursor: z.string().nullable(),
  }),
  http: { method: 'GET', path: '/diff' },
  graphql: [
    { type: 'Query', field: 'changes' },
    // The first diff field: every change of a two-dot diff, whole.
    { type: 'Query', field: 'diff', pick: 'tables', omit: ['mode', 'limit', 'cursor'] },
  ],
  mcp: [
    {
      tool: 'diff',
      description:
        'What changed between two refs, a page at a time. Three-dot by default: what `to` changed since it and `from` diverged, which is what merging `to` into `from` brings. `mode: two-dot` compares the two states directly. Returns per-table inserted, updated (with the changed properties) and deleted rows, counts per table, and `nextCursor`.',
      defaults: { mode: 'three-dot' },
      idempotent: true,
    },
  ],
});
