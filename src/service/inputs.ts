/**
 * Input contracts shared by every transport. REST bodies and GraphQL
 * arguments are both checked here, so a bad input gets the same
 * `invalid_input` error, with field paths, whichever way it came in.
 */
import { z } from 'zod';
import { GRAPH_NAME_RE } from './graph-host.js';
import { BranchgraphError } from '../model/errors.js';
import { findInputProblem } from '../model/text.js';
import type { Ref } from '../graph/graph.js';
import { MAX_PAGE } from '../graph/reads.js';
import { MAX_DIFF_PAGE } from '../graph/diff-page.js';
import { MAX_BATCH_OPS } from '../graph/write-batch.js';
import { MAX_CONFLICTS_PER_PAGE } from '../merge/merge.js';
import { RESOLUTION_CHOICES, RESOLUTION_STRATEGIES } from '../merge/resolutions.js';

export { RESOLUTION_CHOICES, RESOLUTION_STRATEGIES } from '../merge/resolutions.js';
export type { ConflictResolution, MergeResolutions, ResolutionChoice, ResolutionStrategy } from '../merge/resolutions.js';

/** The bounds every transport enforces on input: body and batch sizes, page sizes, GraphQL nesting, cost and aliases. */
export const LIMITS = {
  maxBodyBytes: 16 * 1024 * 1024,
  /** One number for every path, embedded included; the body limit bounds what a transport buffers. */
  maxBatchOps: MAX_BATCH_OPS,
  maxConflictPage: MAX_CONFLICTS_PER_PAGE,
  maxPage: MAX_PAGE,
  maxGraphqlDepth: 12,
  /** Fields times page sizes one GraphQL document may ask for (see graphql/limits.ts). */
  maxGraphqlCost: 20_000,
  /** Brackets of any kind in a GraphQL document; input literals count too. */
  maxGraphqlNesting: 64,
  maxGraphqlAliases: 50,
};

const branchName = z.string().min(1).max(200);
const commitId = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a 26-character commit id');
const text = (max: number) => z.string().max(max);

export const RefInputZ = z
  .object({ branch: branchName.optional(), commit: commitId.optional(), tag: branchName.optional() })
  .strict()
  .refine((r) => [r.branch, r.commit, r.tag].filter((x) => x !== undefined).length === 1, 'give exactly one of branch, commit or tag');

export const CreateBranchZ = z.object({ name: branchName, from: RefInputZ.optional() }).strict();

export const CreateTagZ = z.object({ name: branchName, from: RefInputZ.optional(), message: text(2000).optional() }).strict();

export const CreateGraphZ = z.object({ name: z.string().regex(GRAPH_NAME_RE, 'graph names are 1-63 of a-z 0-9 _ - and start with a letter or digit') }).strict();

/** Most conflict choices one merge request may carry (a strategy covers any number). */
export const MAX_RESOLUTIONS = 10_000;

const sideValue = z.unknown().optional();
export const ConflictResolutionZ = z
  .object({
    table: z.string().min(1).max(200),
    key: z.string().min(1).max(4096),
    property: z.string().min(1).max(200).nullable().optional(),
    take: z.enum(RESOLUTION_CHOICES),
    value: z.unknown().optional(),
    expected: z.object({ base: sideValue, source: sideValue, target: sideValue }).strict().optional(),
  })
  .strict();

export const MergeResolutionsZ = z
  .object({
    strategy: z.enum(RESOLUTION_STRATEGIES).optional(),
    conflicts: z.array(ConflictResolutionZ).max(MAX_RESOLUTIONS).optional(),
  })
  .strict();

export const DiffInputZ = z
  .object({
    mode: z.enum(['two-dot', 'three-dot']).optional(),
    limit: z.number().int().min(1).max(MAX_DIFF_PAGE).optional(),
    cursor: z.string().max(12_000).optional(),
  })
  .strict();
/** Which diff (two-dot: from → to; three-dot: on `to` since the merge base) and which page of it. */
export type DiffInput = z.infer<typeof DiffInputZ>;

/** What merges, cherry-picks and reverts all take: a dry run, the expected target head, the commit's text, conflict paging and resolutions. */
const mergeCommon = {
  dryRun: z.boolean().optional(),
  expectedTargetHead: commitId.optional(),
  author: text(200).optional(),
  message: text(2000).optional(),
  conflictLimit: z.number().int().min(1).max(LIMITS.maxConflictPage).optional(),
  /** A report's nextCursor (model/page-cursor.ts checks it belongs to this merge). */
  conflictCursor: z.string().max(8200).optional(),
  resolutions: MergeResolutionsZ.optional(),
};

export const MergeInputZ = z
  .object({
    ...mergeCommon,
    into: branchName.optional(),
    expectedSourceHead: commitId.optional(),
    deleteBranch: z.boolean().optional(),
    width: z.union([z.literal(1), z.literal(2), z.literal(4)]).optional(),
    /** REST sends it as the Idempotency-Key header. */
    idempotencyKey: z
      .string()
      .regex(/^[\x21-\x7e]{1,200}$/, '1-200 printable ASCII characters, no spaces')
      .optional(),
  })
  .strict();
/** Cherry-pick or revert one commit onto a branch: the commit, and what a merge takes besides (no source branch, no width). */
export const ApplyCommitZ = z.object({ ...mergeCommon, commit: commitId }).strict();
export type ApplyCommitInput = z.infer<typeof ApplyCommitZ>;

/** A merge request as transports accept it: target, dry run, expected heads, width, conflict paging, message and author. */
export type MergeInput = z.infer<typeof MergeInputZ>;

export const WriteOpZ = z
  .object({
    op: z.enum(['insert', 'update', 'upsert', 'delete']),
    table: z.string().min(1).max(200),
    values: z.record(z.string(), z.unknown()),
  })
  .strict();

export const WriteInputZ = z
  .object({
    ops: z.array(WriteOpZ).min(1).max(LIMITS.maxBatchOps),
    message: text(2000).optional(),
    author: text(200).optional(),
    expectedHead: commitId.optional(),
  })
  .strict();
/** A write batch: up to 100,000 operations applied as one commit, or none. */
export type WriteInput = z.infer<typeof WriteInputZ>;

export const SchemaApplyZ = z
  .object({
    schema: text(1 << 20),
    migration: z
      .object({ drop: z.array(z.string().max(400)).max(1000).optional(), defaults: z.record(z.string(), z.unknown()).optional() })
      .strict()
      .optional(),
    message: text(2000).optional(),
    author: text(200).optional(),
  })
  .strict();
/** Schema text to apply, with an optional migration (defaults for new required properties, dropped properties) and message. */
export type SchemaApplyInput = z.infer<typeof SchemaApplyZ>;

/** One write operation as every transport takes it. */
export type WriteOpInput = z.infer<typeof WriteOpZ>;

export const IngestInputZ = z.object({ ops: z.array(WriteOpZ).min(1).max(LIMITS.maxBatchOps) }).strict();

export const CatchUpInputZ = z
  .object({
    maxGenerations: z.number().int().min(0).max(1_000_000).optional(),
    maxBytes: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    pipeline: z.boolean().optional(),
  })
  .strict();
/** A catch-up request: the batch cap and whether to pipeline. */
export type CatchUpInput = z.infer<typeof CatchUpInputZ>;

export const CompactInputZ = z
  .object({
    tables: z.array(z.string().min(1).max(200)).max(10_000).optional(),
    mode: z.enum(['tiered', 'full']).optional(),
  })
  .strict();
/** A compaction request: which tables (default all) and `tiered` (what is due, the default) or `full` (one run per table). */
export type CompactInput = z.infer<typeof CompactInputZ>;

export const GcInputZ = z
  .object({
    graceSeconds: z
      .number()
      .int()
      .min(0)
      .max(10 * 365 * 24 * 3600)
      .optional(),
    dryRun: z.boolean().optional(),
  })
  .strict();

/** A page of branches: at most `limit` (default 100), after a `nextCursor`. */
export const BranchPageInputZ = z
  .object({
    limit: z.number().int().min(1).max(LIMITS.maxPage).optional(),
    cursor: z.string().max(4096).optional(),
  })
  .strict();

export const ScanInputZ = z
  .object({
    where: z.record(z.string(), z.unknown()).optional(),
    limit: z.number().int().min(1).max(LIMITS.maxPage).optional(),
    cursor: z.string().max(4096).optional(),
  })
  .strict();

export const DirectionZ = z.enum(['out', 'in', 'both']);

/** Parse `value` or throw `invalid_input` listing every problem with its path. */
export function parseInput<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const bad = findInputProblem(value, where);
  if (bad !== undefined) throw new BranchgraphError('invalid_input', `invalid ${where}: ${bad.path}: ${bad.message}`, { issues: [bad] });
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  const issues = r.error.issues.map((i) => ({
    path: where + i.path.map((seg) => (typeof seg === 'number' ? `[${seg}]` : `.${String(seg)}`)).join(''),
    message: i.message,
  }));
  throw new BranchgraphError('invalid_input', `invalid ${where}: ${issues[0]?.path}: ${issues[0]?.message}`, { issues });
}

/** A ref string: a branch name, or `commit:<id>`. */
export function parseRef(at: string | undefined | null, dflt = 'main'): Ref {
  const s = at ?? dflt;
  if (s.startsWith('commit:')) return { commit: parseInput(commitId, s.slice('commit:'.length), 'at') };
  if (s.startsWith('tag:')) return { tag: parseInput(branchName, s.slice('tag:'.length), 'at') };
  return { branch: parseInput(branchName, s, 'at') };
}
