import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { canonicalJson } from '../../../model/canonical.js';
import type { Row } from '../../../model/values.js';
import { entityVersions, historyStart, type EntityWalk } from '../../../graph/entity-history.js';
import { decodeFrontier, encodeFrontier } from '../../../graph/frontier-cursor.js';
import type { Snapshot } from '../../../graph/snapshot.js';
import { defineOperation } from '../../operation.js';
import { entityKey, refOrMain, tableName } from '../../inputs.js';
import { commitDto, type CommitDto } from '../../dtos.js';
import type { BranchgraphService } from '../../service.js';
import type { RequestContext } from '../../request-context.js';
import { CommitZ } from '../../results/commit.js';

/** One version of an entity: the commit that made it, and what it did (inserted, updated with the properties it changed, deleted). */
export interface EntityVersionDto {
  commit: CommitDto;
  change: 'inserted' | 'updated' | 'deleted';
  before: Row | null;
  after: Row | null;
  changed: string[];
}

/** Commits one page examines at most: a page ends there even with fewer versions, and its cursor continues the walk. */
export const HISTORY_PAGE_BUDGET = 10_000;

/** The walk for one entity over committed states (graph/entity-history.ts). */
export function entityWalk(service: BranchgraphService, at: { table: string; key: string }, ctx: RequestContext): EntityWalk {
  const { heads, tables } = service.graph.ports;
  return { heads, tables, table: at.table, key: at.key, signal: ctx.signal };
}

/**
 * The versions of one entity reachable from a ref, newest first, a page at a time: each commit
 * that changed its row, following both sides of merges that brought a change (Git's history
 * simplification) or first parents only. A page's cost grows with the commits that touched the
 * entity, not with the length of the history or the size of the table.
 */
export const entityHistory = defineOperation({
  name: 'entityHistory',
  summary: 'The versions of one entity, newest first, each with its commit and change.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      table: tableName,
      key: entityKey,
      at: refOrMain,
      limit: z.number().int().min(1).max(1000).optional(),
      cursor: z.string().max(12_000).optional(),
      firstParent: z.boolean().optional(),
    })
    .strict(),
  async run(service, input, ctx): Promise<{ at: string; versions: EntityVersionDto[]; nextCursor: string | null }> {
    const { table, key, at, limit = 100, cursor, firstParent = false } = input;
    const head: Snapshot = await service.snapshot(at, ctx);
    // A cursor continues one walk: this entity from this ref's commit, on the same parents.
    const scope = canonicalJson({ history: [table, key], from: head.manifest.commit.id, firstParent });
    const walk = entityWalk(service, { table, key }, ctx);
    const from =
      cursor === undefined ? { head: await committed(service, head, ctx) } : { frontier: decodeFrontier('history', scope, cursor) };
    const page = await entityVersions({ walk, start: await historyStart(walk, from), limit, budget: HISTORY_PAGE_BUDGET, firstParent });
    return {
      at: head.manifest.commit.id,
      versions: page.versions.map((v) => ({ ...v, commit: commitDto(v.commit) })),
      nextCursor: encodeFrontier('history', scope, page.frontier),
    };
  },
  output: z.object({
    at: IdZ.describe('The commit the ref resolved to.'),
    versions: z.array(
      z.object({
        commit: CommitZ,
        change: z.enum(['inserted', 'updated', 'deleted']),
        before: z.record(z.string(), z.unknown()).nullable(),
        after: z.record(z.string(), z.unknown()).nullable(),
        changed: z.array(z.string()),
      }),
    ),
    nextCursor: z.string().nullable().describe('Where the next page starts; null when the history is done.'),
  }),
  http: { method: 'GET', path: '/tables/{table}/rows/{key}/history' },
  graphql: [{ type: 'Query', field: 'history' }],
  mcp: [
    {
      tool: 'history',
      description:
        'The versions of one entity, newest first: each commit that changed it, with the row before and after and the properties that changed. Paged with `cursor`.',
      idempotent: true,
    },
  ],
});

/** The commit a snapshot reads (a branch head's pending WAL rows are not history yet). */
export async function committed(service: BranchgraphService, snap: Snapshot, ctx: RequestContext): Promise<Snapshot> {
  return service.graph.ports.heads.snapshotAt(snap.ref, { signal: ctx.signal });
}
