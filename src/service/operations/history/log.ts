import { z } from 'zod';
import { IdZ } from '../../results/scalars.js';
import { canonicalJson } from '../../../model/canonical.js';
import { BranchgraphError } from '../../../model/errors.js';
import { entityLogPage, logPage, type LogPage } from '../../../graph/commit-log.js';
import { decodeFrontier, encodeFrontier } from '../../../graph/frontier-cursor.js';
import { defineOperation } from '../../operation.js';
import { commitKinds, entityKey, refOrMain, tableName, text, timeInput } from '../../inputs.js';
import { commitDto, type CommitDto } from '../../dtos.js';
import { CommitZ } from '../../results/commit.js';

/** Commits one page examines at most: a sparse filter answers a short page and its cursor rather than walking on. */
export const LOG_PAGE_BUDGET = 10_000;

/**
 * The commit log at a ref, newest first, a page at a time with no depth limit, filtered by table,
 * entity (table and key), author, kinds and time, optionally on first parents only. `at` is the
 * commit the ref resolved to.
 */
export const log = defineOperation({
  name: 'log',
  summary: 'Commits at a ref, newest first, filtered and paged.',
  role: 'read',
  access: ({ at }) => ({ reads: [at] }),
  input: z
    .object({
      at: refOrMain,
      limit: z.number().int().min(1).max(1000).optional(),
      cursor: z.string().max(12_000).optional(),
      table: tableName.optional(),
      key: entityKey.optional(),
      author: text(200).optional(),
      kind: commitKinds.optional(),
      since: timeInput.optional(),
      until: timeInput.optional(),
      firstParent: z.boolean().optional(),
    })
    .strict(),
  async run(service, input, ctx): Promise<{ at: string; commits: CommitDto[]; nextCursor: string | null }> {
    const { at, limit = 50, cursor, key, kind, ...rest } = input;
    if (key !== undefined && rest.table === undefined)
      throw new BranchgraphError('invalid_input', 'key filters one table: give table too', {
        issues: [{ path: 'key', message: 'needs table' }],
      });
    const head = await service.snapshot(at, ctx);
    const filter = { ...rest, kinds: kind };
    // A cursor continues one walk: this filter from this ref's commit.
    const scope = canonicalJson({ log: head.manifest.commit.id, key: key ?? null, filter });
    const frontier = cursor === undefined ? undefined : decodeFrontier('log', scope, cursor);
    const { manifests, heads, tables } = service.graph.ports;
    const common = { filter, limit, budget: LOG_PAGE_BUDGET };
    let page: LogPage;
    if (key !== undefined && rest.table !== undefined) {
      const walk = { heads, tables, table: rest.table, key, signal: ctx.signal };
      page = await entityLogPage({ ...common, walk, start: frontier === undefined ? { head } : { frontier } });
    } else {
      const start =
        frontier === undefined ? [head.manifest] : await Promise.all(frontier.map((r) => manifests.readManifest(r, ctx.signal)));
      page = await logPage({ ...common, manifests, start, signal: ctx.signal });
    }
    return { at: head.manifest.commit.id, commits: page.commits.map(commitDto), nextCursor: encodeFrontier('log', scope, page.frontier) };
  },
  output: z.object({
    at: IdZ.describe('The commit the ref resolved to.'),
    commits: z.array(CommitZ),
    nextCursor: z.string().nullable().describe('Where the next page starts; null when the log is done.'),
  }),
  http: { method: 'GET', path: '/commits' },
  graphql: [
    { type: 'Query', field: 'log', pick: 'commits' },
    { type: 'Query', field: 'commits' },
  ],
  mcp: [
    {
      tool: 'log',
      description:
        'Commits at a ref (main by default), newest first, a page at a time: who, when, what kind, and the message. Filter by table, table and key (one entity), author, kind or time.',
      idempotent: true,
    },
  ],
});
