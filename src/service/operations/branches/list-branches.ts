import { z } from 'zod';
import { decodePageCursor, encodePageCursor } from '../../../model/page-cursor.js';
import { defineOperation } from '../../operation.js';
import { LIMITS } from '../../limits.js';
import type { BranchPageDto } from '../../dtos.js';
import { BranchZ } from '../../results/branch.js';

/** Branches listed by default on one page. */
export const DEFAULT_BRANCH_PAGE = 100;

/** A branch in a page's range whose record or head cannot be read. */
const DamagedBranchZ = z.object({ name: z.string(), key: z.string(), error: z.string() }).meta({ title: 'DamagedBranch' });

const DAMAGED =
  "Branches in this page's range whose record or head cannot be read. They are left out of the page's branches; an admin may delete them.";

const output = z.object({
  branches: z.array(BranchZ),
  nextCursor: z.string().nullable().describe('Where the next page starts; null on the last page.'),
  damaged: z.array(DamagedBranchZ).describe(DAMAGED),
});

/** The page as GraphQL gives it: the branches are its items. */
const GraphqlBranchPageZ = z
  .object({ items: output.shape.branches, damaged: output.shape.damaged, nextCursor: output.shape.nextCursor })
  .meta({ title: 'BranchPage' });

/**
 * One page of live branches by name (default 100, at most 1,000), and those in its range whose
 * record or head cannot be read (listed, never fatal to the listing). A page costs its own
 * branches, whatever the graph holds; `nextCursor` continues after its last name.
 */
export const listBranches = defineOperation({
  name: 'listBranches',
  summary: 'One page of branches by name with their heads; follow nextCursor for the next.',
  role: 'read',
  input: z
    .object({
      limit: z.number().int().min(1).max(LIMITS.maxPage).optional(),
      cursor: z.string().max(4096).nullish(),
    })
    .strict(),
  async run(service, input, ctx): Promise<BranchPageDto> {
    const { limit = DEFAULT_BRANCH_PAGE, cursor } = input;
    const after = cursor == null ? undefined : decodePageCursor('branches', '', cursor);
    const { branches, damaged, next } = await service.graph.listBranches({
      ...(after !== undefined ? { after } : {}),
      limit,
      signal: ctx.signal,
    });
    return {
      branches: await Promise.all(
        branches.map(async (b) => service.branchDto({ name: b.record.name, head: b.commit, rec: b.record }, ctx)),
      ),
      damaged,
      nextCursor: next === undefined ? null : encodePageCursor('branches', '', next),
    };
  },
  output,
  http: { method: 'GET', path: '/branches' },
  graphql: [
    {
      type: 'Query',
      field: 'branches',
      result: (p) => ({ items: p.branches, damaged: p.damaged, nextCursor: p.nextCursor }),
      output: GraphqlBranchPageZ,
      receive: (v) => {
        const { items, ...rest } = v as z.output<typeof GraphqlBranchPageZ>;
        return { ...rest, branches: items as BranchPageDto['branches'] };
      },
    },
  ],
  mcp: [
    {
      tool: 'branch_list',
      description: 'Branches by name with their head commits, a page at a time (`limit`, and `cursor` from `nextCursor`).',
      idempotent: true,
    },
  ],
});
