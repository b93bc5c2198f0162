import { z } from 'zod';
import { decodePageCursor, encodePageCursor } from '../../../model/page-cursor.js';
import { defineOperation } from '../../operation.js';
import { visibleBranch } from '../../access.js';
import { labelText, ownerName } from '../../inputs.js';
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
 * branches, whatever the graph holds; `nextCursor` continues after its last name. `prefix` lists
 * only that part of the names; `owner` and `label` filter as the page is read, so a page of a
 * selective filter may end short (graph/branch-records.ts bounds how far one page looks) and
 * still have a `nextCursor`: follow it until it is null.
 */
export const listBranches = defineOperation({
  name: 'listBranches',
  summary: 'One page of branches by name with their heads; follow nextCursor for the next.',
  role: 'read',
  access: () => 'filtered',
  input: z
    .object({
      limit: z.number().int().min(1).max(LIMITS.maxPage).optional(),
      cursor: z.string().max(4096).nullish(),
      owner: ownerName.optional().describe('Only branches this owner owns.'),
      label: labelText.optional().describe('Only branches with this label.'),
      prefix: z.string().min(1).max(200).optional().describe('Only branches whose name starts so (`agent/alice/`).'),
    })
    .strict(),
  async run(service, input, ctx): Promise<BranchPageDto> {
    const { limit = DEFAULT_BRANCH_PAGE, cursor, owner, label, prefix } = input;
    // The cursor is bound to the filters: a page of one listing never continues another.
    const filters = JSON.stringify([owner ?? null, label ?? null, prefix ?? null]);
    const after = cursor == null ? undefined : decodePageCursor('branches', filters, cursor);
    const { branches, damaged, next } = await service.graph.listBranches({
      ...(after !== undefined ? { after } : {}),
      ...(prefix !== undefined ? { prefix } : {}),
      limit,
      // A scoped token lists the branches it may read; the others are not there for it.
      keep: (rec) =>
        visibleBranch(ctx, rec.name) &&
        (owner === undefined || rec.owner === owner) &&
        (label === undefined || (rec.labels ?? []).includes(label)),
      signal: ctx.signal,
    });
    return {
      branches: await Promise.all(
        branches.map(async (b) => service.branchDto({ name: b.record.name, head: b.commit, rec: b.record }, ctx)),
      ),
      damaged: damaged.filter((d) => visibleBranch(ctx, d.name)),
      nextCursor: next === undefined ? null : encodePageCursor('branches', filters, next),
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
      description:
        'Branches by name with their head commits, expiry, owner and labels, a page at a time (`limit`, and `cursor` from `nextCursor`). Filter by `prefix`, `owner` or `label` to find your own; a filtered page may be short, so follow `nextCursor` until it is null.',
      idempotent: true,
    },
  ],
});
