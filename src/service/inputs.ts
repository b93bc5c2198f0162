/**
 * Input contracts shared by every transport. REST bodies and GraphQL
 * arguments are both checked here, so a bad input gets the same
 * `invalid_input` error, with field paths, whichever way it came in.
 */
import { z } from 'zod';
import { IdZ } from './results/scalars.js';
import { parseInput } from './parse-input.js';
import { LIMITS } from './limits.js';
import { parseRefText, parseTime } from '../model/ref-grammar.js';
import type { CommitKind } from '../graph/commit-log.js';
import type { Ref } from '../graph/snapshot.js';
import { RESOLUTION_CHOICES, RESOLUTION_STRATEGIES } from '../merge/resolutions.js';

export { RESOLUTION_CHOICES, RESOLUTION_STRATEGIES } from '../merge/resolutions.js';
export type { ConflictResolution, MergeResolutions, ResolutionChoice, ResolutionStrategy } from '../merge/resolutions.js';

export const branchName = z.string().min(1).max(200);
export const commitId = IdZ.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'a 26-character commit id');
export const text = (max: number) => z.string().max(max);
/** A table name as every route takes it. */
export const tableName = z.string().min(1).max(200);
/** An entity key: a node's key, or an edge's as JSON. */
export const entityKey = z.string().min(1).max(4096);

/** Bytes as they arrive (a file, a socket), for a body that is read as it streams. */
export type ByteStream = AsyncIterable<Uint8Array>;
/** A text body: the text, or its bytes as they arrive. */
export type TextBody = string | ByteStream;

const isByteStream = (v: unknown): v is ByteStream => typeof v === 'object' && v !== null && Symbol.asyncIterator in v;

/**
 * A text body (NDJSON, CSV): text on every transport, or, from a caller in this process (the
 * embedded API, the CLI on a local store) or a streaming route, its bytes as they arrive, so a
 * large file is never held whole. Contracts describe it as the text it is.
 */
export const textBody = (what: string) =>
  z.custom<TextBody>((v) => typeof v === 'string' || isByteStream(v), `${what} text or a byte stream`).meta({ type: 'string' } as never);

/** A binary body (Parquet): its bytes, or the bytes as they arrive. */
export const bytesBody = (what: string) =>
  z.custom<Uint8Array | ByteStream>((v) => v instanceof Uint8Array || isByteStream(v), `${what} bytes or a byte stream`);

export const RefInputZ = z
  .object({ branch: branchName.optional(), commit: commitId.optional(), tag: branchName.optional() })
  .strict()
  .refine((r) => [r.branch, r.commit, r.tag].filter((x) => x !== undefined).length === 1, 'give exactly one of branch, commit or tag');

/**
 * A ref as any transport spells it: text (`main`, `commit:<id>`, `tag:<name>`, and the paths of the
 * ref grammar, `main~2`, `main@{2026-12-01T12:00:00Z}`, `commit:01M8W0RP`, as REST query
 * parameters, GraphQL arguments and the CLI give it) or an object (`{ "branch": "main" }`, as REST
 * bodies give it). Either way the operation receives the object.
 */
export const RefZ = z
  .union([
    z
      .string()
      .max(4200)
      .transform((s, ctx): Ref => {
        const r = refOfText(s);
        if (typeof r === 'string') {
          ctx.addIssue({ code: 'custom', message: r });
          return z.NEVER;
        }
        return r;
      }),
    RefInputZ.transform((r) => r as Ref),
  ])
  .meta({
    id: 'Ref',
    description:
      'A ref as text (`main`, `commit:<id>`, `tag:<name>`, with `~N`, `^N` or `@{<time>}`), or an object with exactly one of branch, commit or tag.',
  });

/** `s` as a ref (the grammar of model/ref-grammar.ts), or what is wrong with it. */
function refOfText(s: string): Ref | string {
  const path = parseRefText(s);
  if ('error' in path) return path.error;
  const b = path.base;
  const name = 'branch' in b ? b.branch : 'tag' in b ? b.tag : 'remote' in b ? b.remoteBranch : undefined;
  if (name !== undefined && !branchName.safeParse(name).success) return 'names are 1 to 200 characters';
  // A plain branch, commit or tag stays what it always was; anything more is a path to a commit.
  if (path.steps.length === 0 && path.asOf === undefined && !('commitPrefix' in b) && !('remote' in b)) return b;
  return { path };
}

/** Who a branch is for: a token's identity, an agent, a team. */
export const ownerName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/, "1-64 letters, digits, '.', '_', '@' or '-'")
  .describe("Who the branch is for (an agent's or a team's name); the caller's identity by default.");
/** A branch label: `key` or `key=value`, lowercase, for listings to filter by. */
export const labelText = z.string().regex(/^[a-z0-9][a-z0-9._:/=-]{0,62}$/, "1-63 of a-z 0-9 . _ : / = -, as 'task' or 'task=1234'");

/** An RFC 3339 time (`Z` or an offset), as milliseconds since the epoch. */
export const timeInput = z
  .string()
  .max(64)
  .transform((t, ctx): number => {
    const ms = parseTime(t);
    if (ms !== undefined) return ms;
    ctx.addIssue({ code: 'custom', message: 'an RFC 3339 time such as 2026-12-01T12:00:00Z' });
    return z.NEVER;
  });

/** Commit kinds as a filter names them: the commit's own kinds, and the words people use for some. */
const KIND_NAMES: Record<string, CommitKind[]> = {
  init: ['init'],
  write: ['write'],
  schema: ['schema'],
  merge: ['merge', 'fast_forward'],
  fast_forward: ['fast_forward'],
  catchup: ['catchup'],
  ingest: ['catchup'],
  compact: ['compact'],
  compaction: ['compact'],
  cherry_pick: ['cherry_pick'],
  'cherry-pick': ['cherry_pick'],
  revert: ['revert'],
};

/** Commit kinds, comma-separated (`merge,revert`); `merge` includes fast-forwards. */
export const commitKinds = z
  .string()
  .max(200)
  .transform((t, ctx): CommitKind[] => {
    const names = t.split(',').map((n) => n.trim());
    const unknown = names.filter((n) => !Object.hasOwn(KIND_NAMES, n));
    if (unknown.length === 0) return [...new Set(names.flatMap((n) => KIND_NAMES[n] as CommitKind[]))];
    ctx.addIssue({ code: 'custom', message: `unknown kind ${unknown.join(', ')}: use ${Object.keys(KIND_NAMES).join(', ')}` });
    return z.NEVER;
  });

/** A ref that defaults to main's head when absent. */
export const refOrMain = RefZ.optional().transform((r): Ref => r ?? { branch: 'main' });

/** A hosted graph's name: it is a key prefix and a URL segment. */
export const GRAPH_NAME_RE = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const CreateGraphZ = z
  .object({ name: z.string().regex(GRAPH_NAME_RE, 'graph names are 1-63 of a-z 0-9 _ - and start with a letter or digit') })
  .strict();

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
  .strict()
  .meta({ title: 'ConflictResolution' });

export const MergeResolutionsZ = z
  .object({
    strategy: z.enum(RESOLUTION_STRATEGIES).optional(),
    conflicts: z.array(ConflictResolutionZ).max(MAX_RESOLUTIONS).optional(),
  })
  .strict()
  .meta({ title: 'MergeResolutions' });

/** An admin's request to land a change on a protected branch past its rule (recorded on the commit). */
export const bypassProtection = z.boolean().optional();

/** What merges, cherry-picks and reverts all take: a dry run, the expected target head, the commit's text, conflict paging and resolutions. */
export const MERGE_COMMON = {
  dryRun: z.boolean().optional(),
  bypassProtection,
  expectedTargetHead: commitId.optional(),
  author: text(200).optional(),
  message: text(2000).optional(),
  conflictLimit: z.number().int().min(1).max(LIMITS.maxConflictPage).optional(),
  /** A report's nextCursor (model/page-cursor.ts checks it belongs to this merge). */
  conflictCursor: z.string().max(8200).optional(),
  resolutions: MergeResolutionsZ.optional(),
};

export const WriteOpZ = z
  .object({
    op: z.enum(['insert', 'update', 'upsert', 'delete']),
    table: z.string().min(1).max(200),
    // Checked as an object and passed through: a record schema copies every row, and a load
    // parses a million. The row's properties are checked against the table's schema when planned.
    values: z.custom<Record<string, unknown>>((v) => typeof v === 'object' && v !== null && !Array.isArray(v), {
      message: 'values must be an object of property values',
    }),
  })
  .strict()
  .meta({ title: 'WriteOp' });

/** One write operation as every transport takes it. */
export type WriteOpInput = z.infer<typeof WriteOpZ>;

export const DirectionZ = z.enum(['out', 'in', 'both']).meta({ title: 'Direction' });

/** Parse `value` or throw `invalid_input` listing every problem with its path. */
/** A ref's text (any form of the ref grammar, `main` when absent) as the operations take it. */
export function parseRef(at: string | undefined | null, dflt = 'main'): Ref {
  return parseInput(RefZ, at ?? dflt, 'at');
}
