/**
 * Manifests: whole-graph snapshots, one per branch version.
 *
 * A manifest names the schema, every table's version (its runs with stats),
 * the WAL watermarks, and the commit it publishes, and its ancestry (see
 * ancestry.ts): for each lineage in its history, the highest version it
 * contains, so merge bases are found without walking history. Tables and
 * ancestry are part trees (see format 2 below): a commit writes what it
 * changed, never the whole graph's metadata.
 *
 * Stored objects are read through zod; anything else is `corrupt_object`.
 */
import { CONFLICT_KINDS } from '../model/conflict.js';
import { z } from 'zod';
import type { PartNode } from '../model/part-tree.js';
import type { Ancestry } from './ancestry.js';

export const MANIFEST_FORMAT = 3;

/** A publication named in a run's origin or an entry's `replacedAt` (graph/run-origin.ts). */
const ORIGIN = /^[^:]+:[1-9][0-9]{0,14}$/;

export const RunRefZ = z.object({
  key: z.string(),
  rows: z.number().int().min(0),
  tombstones: z.number().int().min(0),
  bytes: z.number().int().min(0),
  minKey: z.string(),
  maxKey: z.string(),
  keysCut: z.boolean().optional(),
  checksum: z.string().regex(/^[0-9a-f]{32}$/),
  segmented: z.boolean().optional(),
  compacted: z.boolean().optional(),
  keptUnique: z.array(z.string()).optional(),
  dropped: z.boolean().optional(),
  origin: z.string().regex(ORIGIN).optional(),
});

export const ManifestRefZ = z.object({ lineage: z.string(), version: z.number().int().min(1) });
export type ManifestRef = z.infer<typeof ManifestRefZ>;

/** The kinds of commit, as `Commit.kind` names them. */
export const COMMIT_KINDS = ['init', 'write', 'schema', 'merge', 'fast_forward', 'catchup', 'compact', 'cherry_pick', 'revert'] as const;

/** A merge's conflict resolutions: its strategy, how many it applied, and the first of them (merge/resolutions.ts). */
export const ResolvedZ = z.object({
  strategy: z.enum(['source-wins', 'target-wins']).nullable(),
  total: z.number().int().min(1),
  /** The set of every conflict decided (identity and choice), hashed order-free: what an approval covers. */
  digest: z.string().optional(),
  items: z.array(
    z.object({
      table: z.string(),
      key: z.string(),
      property: z.string().nullable(),
      kind: z.enum(CONFLICT_KINDS),
      take: z.enum(['source', 'target', 'base', 'value']),
      by: z.enum(['choice', 'strategy']),
    }),
  ),
});

export const CommitZ = z.object({
  id: z.string(),
  /** First parent: the previous version of this lineage (or the fork point). Second: the merged source. */
  parents: z.array(ManifestRefZ),
  parentIds: z.array(z.string()),
  branch: z.string(),
  /** Who made the commit: the authenticated identity (or the server's actor when open). */
  actor: z.string(),
  /** Who the client said it was for, when that differs from the actor. */
  author: z.string().optional(),
  message: z.string(),
  time: z.string(),
  kind: z.enum(COMMIT_KINDS),
  /** The writes a group commit published together, in order, each with who it was for and its message. */
  group: z.array(z.object({ author: z.string(), message: z.string() })).optional(),
  /** The merge request this merge landed (service/merge-requests.ts). */
  request: z.string().optional(),
  /**
   * A catch-up: the commit whose content it continues. Folding acknowledged WAL rows changes
   * nothing a reader of the branch sees (they were read from the WAL before), so a branch's
   * content state (graph/head-state.ts) is named by this commit and the rows folded since.
   */
  continues: z.string().optional(),
  /** An admin landed this on a protected branch past its rule. */
  bypass: z.literal(true).optional(),
  /** A merge made under an Idempotency-Key: the key's hash and the request's fingerprint (graph/idempotency.ts). */
  idempotency: z.object({ keyHash: z.string(), fingerprint: z.string() }).optional(),
  resolved: ResolvedZ.optional(),
});
export type Commit = z.infer<typeof CommitZ>;

const PART_ID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

/** The stored body of a part tree node (model/part-tree.ts), with values read through `value`. */
export function partBodyZ<T extends z.ZodTypeAny>(value: T) {
  return z.object({
    d: z.number().int().min(0).max(32),
    e: z.record(z.string(), value).optional(),
    c: z.record(z.string().regex(/^[0-9a-f]$/), z.string().regex(PART_ID_RE)).optional(),
  });
}

/** A part tree body that may be a delta leaf (model/part-tree.ts `deltaLeaves`), naming its base in `b`. */
export function deltaPartBodyZ<T extends z.ZodTypeAny>(value: T) {
  return partBodyZ(value).extend({ b: z.string().regex(PART_ID_RE).optional() });
}

/**
 * A table's runs, and its secondary indexes once built (table/secondary-index.ts):
 * they describe the first `covers` runs (all when absent), whose keys `of`
 * fingerprints; each set is an index's runs. `replacedAt` is the last
 * publication whose runs did not extend a parent's (graph/run-origin.ts).
 */
export const TableEntryZ = z.object({
  runs: z.array(RunRefZ),
  replacedAt: z.string().regex(ORIGIN).optional(),
  indexes: z
    .object({
      of: z.string(),
      covers: z.number().int().min(0).optional(),
      sets: z.record(z.string(), z.object({ runs: z.array(RunRefZ) })),
    })
    .optional(),
});
export type TableEntry = z.infer<typeof TableEntryZ>;

/** Every run a manifest's tables name: their runs and their indexes' runs. */
export function* namedRuns(tables: Record<string, TableEntry>): Generator<z.infer<typeof RunRefZ>> {
  for (const entry of Object.values(tables)) {
    yield* entry.runs;
    for (const set of Object.values(entry.indexes?.sets ?? {})) yield* set.runs;
  }
}

/**
 * Where a stored entry's first `count` runs are: the run-list part `part`
 * (`parts/<part>.json`, graph/run-list-parts.ts), whose last run is `last`.
 * The entry's own `runs` follow them.
 */
const RunBaseZ = z.object({ part: z.string().regex(/^[0-9A-Za-z]+$/), count: z.number().int().min(1), last: z.string() });

/** A table entry as format 3 stores it: a long run list names a shared part for all but its newest runs. */
export const StoredTableEntryZ = TableEntryZ.extend({ runBase: RunBaseZ.optional() });
export type StoredTableEntry = z.infer<typeof StoredTableEntryZ>;
const VersionZ = z.number().int().min(1);

const manifestFields = {
  lineage: z.string(),
  version: z.number().int().min(1),
  /** Content hash of the schema object. */
  schema: z.string(),
  /**
   * The schema itself when it is small (MAX_INLINE_SCHEMA_BYTES), so one
   * read of a manifest is enough to interpret it (a cold head lookup saves
   * a round trip); a larger schema is only named by `schema`, so a commit's
   * cost does not grow with the schema. Checked against `schema` when read;
   * without it, the schema object is read (once per hash per process).
   * Validated only when the schema is not known yet: most manifests share
   * one schema, and parsing it again per manifest costs what it saves.
   */
  schemaDoc: z.unknown().optional(),
  /** Per WAL shard: the highest generation folded into the tables. */
  wal: z.record(z.string(), z.number().int().min(0)),
  /**
   * Per WAL shard, the generations this publication folded (`seq:digest`).
   * Not carried to later versions: it lets a writer that raced a fold tell
   * whether the fold read *its* object at a sequence number (see wal-writer.ts).
   */
  walFolded: z.record(z.string(), z.array(z.string())).optional(),
  commit: CommitZ,
  /** 1 + the highest parent generation; orders candidates in criss-cross histories. */
  generation: z.number().int().min(1),
  /**
   * Present when this version re-lays the tables of a commit published earlier and changes no
   * row (a compaction): `commit` is that commit, unchanged, `of` the version that published it,
   * and `id` names this layout. A head thus names its commit apart from its layout: maintenance
   * moves a branch's version, never its history.
   */
  layout: z.object({ of: ManifestRefZ, id: z.string() }).optional(),
};

/** Format 1: every table's runs and the whole ancestry vector inline. Still read; never written. */
export const ManifestV1Z = z.object({
  format: z.literal(1),
  ...manifestFields,
  tables: z.record(z.string(), TableEntryZ),
  ancestry: z.record(z.string(), VersionZ),
});

/**
 * Format 2: the tables and the ancestry are part trees whose roots ride in
 * the manifest (a small graph's manifest is still one object); their other
 * nodes are `parts/` objects shared with every manifest that did not change
 * them. The ancestry leaves out the manifest's own lineage, so a write
 * leaves it untouched.
 */
export const ManifestV2Z = z.object({
  format: z.literal(2),
  ...manifestFields,
  tables: partBodyZ(TableEntryZ),
  ancestry: partBodyZ(VersionZ),
});

/**
 * Format 3: format 2 whose table entries may keep all but the newest runs
 * of a long run list in a shared run-list part (`runBase`), so a one-row
 * write does not copy the whole list. A format 2 reader would drop
 * `runBase` and see only the newest runs, so the format number changes.
 */
export const ManifestV3Z = z.object({
  format: z.literal(MANIFEST_FORMAT),
  ...manifestFields,
  tables: partBodyZ(StoredTableEntryZ),
  ancestry: partBodyZ(VersionZ),
});

/** The versions one publication published together: `first` (whose object holds them all) to `last`. */
export const BatchZ = z.object({ first: z.number().int().min(1), last: z.number().int().min(2) }).refine((b) => b.last > b.first, {
  message: 'a batch has at least two versions',
});

/** The most versions one publication publishes together (publication-lanes.ts). */
export const MAX_BATCH_VERSIONS = 32;

const ManifestV4BodyZ = z.object({
  format: z.literal(4),
  ...manifestFields,
  tables: partBodyZ(StoredTableEntryZ),
  ancestry: partBodyZ(VersionZ),
  batch: BatchZ,
});

/**
 * Format 4: a version published in a batch (publication-lanes.ts). It is format 3 plus `batch`, the
 * versions published with it. The batch's first version is the one object whose create-only write
 * published the batch, so it also carries the later versions (`later`, in order). Each later version
 * is written at its own key once the batch has landed, and until then it is read from the first
 * version's object (manifest-store.ts). A format 3 reader would take the batch's first version for
 * the lineage's head, so the format number changes.
 */
export const ManifestV4Z = ManifestV4BodyZ.extend({
  later: z
    .array(ManifestV4BodyZ)
    .max(MAX_BATCH_VERSIONS - 1)
    .optional(),
});

export const StoredManifestZ = z.discriminatedUnion('format', [ManifestV1Z, ManifestV2Z, ManifestV3Z, ManifestV4Z]);

/** One stored version, as a format reads it (a batch's later versions on their own). */
export type StoredVersion =
  | z.infer<typeof ManifestV1Z>
  | z.infer<typeof ManifestV2Z>
  | z.infer<typeof ManifestV3Z>
  | z.infer<typeof ManifestV4BodyZ>;

/** A manifest as the engine uses it: stored parts loaded, tables by name, ancestry as a tree. */
export interface Manifest {
  lineage: string;
  version: number;
  schema: string;
  schemaDoc?: unknown;
  tables: Record<string, TableEntry>;
  /** The same tables as a part tree, as stored (or to be stored); unchanged tables share its nodes. */
  tableTree: PartNode<TableEntry>;
  wal: Record<string, number>;
  walFolded?: Record<string, string[]>;
  commit: Commit;
  ancestry: Ancestry;
  generation: number;
  layout?: { of: ManifestRef; id: string };
  /** Set when this version was published in a batch with others (format 4). */
  batch?: { first: number; last: number };
}

export function refOf(m: Manifest): ManifestRef {
  return { lineage: m.lineage, version: m.version };
}

/** The version that published `m`'s commit: `m` itself, or for a re-laid version the one it re-lays. */
export function commitRefOf(m: Manifest): ManifestRef {
  return m.layout?.of ?? refOf(m);
}

export function sameRef(a: ManifestRef, b: ManifestRef): boolean {
  return a.lineage === b.lineage && a.version === b.version;
}
