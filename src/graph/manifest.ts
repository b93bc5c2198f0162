/**
 * Manifests: whole-graph snapshots, one per branch version.
 *
 * A manifest names the schema, every table's version (its runs with stats),
 * the WAL watermarks, and the commit it publishes. Its `ancestry` vector maps
 * each lineage in its history to the highest version it contains; because a
 * lineage's versions form a chain, containing (L, v) implies containing every
 * (L, v' <= v). Merge bases and "is X an ancestor of Y" are then answered
 * from two vectors, without walking history.
 *
 * Stored objects are read through zod; anything else is `corrupt_object`.
 */
import { z } from 'zod';

export const MANIFEST_FORMAT = 1;

export const RunRefZ = z.object({
  key: z.string(),
  rows: z.number().int().min(0),
  tombstones: z.number().int().min(0),
  bytes: z.number().int().min(0),
  minKey: z.string(),
  maxKey: z.string(),
  checksum: z.string().regex(/^[0-9a-f]{32}$/),
  segmented: z.boolean().optional(),
  compacted: z.boolean().optional(),
});

export const ManifestRefZ = z.object({ lineage: z.string(), version: z.number().int().min(1) });
export type ManifestRef = z.infer<typeof ManifestRefZ>;

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
  kind: z.enum(['init', 'write', 'schema', 'merge', 'fast_forward', 'catchup', 'compact']),
  /** The writes a group commit published together, in order, each with who it was for and its message. */
  group: z.array(z.object({ author: z.string(), message: z.string() })).optional(),
});
export type Commit = z.infer<typeof CommitZ>;

export const ManifestZ = z.object({
  format: z.literal(MANIFEST_FORMAT),
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
  tables: z.record(z.string(), z.object({ runs: z.array(RunRefZ) })),
  /** Per WAL shard: the highest generation folded into the tables. */
  wal: z.record(z.string(), z.number().int().min(0)),
  /**
   * Per WAL shard, the generations this publication folded (`seq:digest`).
   * Not carried to later versions: it lets a writer that raced a fold tell
   * whether the fold read *its* object at a sequence number (see wal-writer.ts).
   */
  walFolded: z.record(z.string(), z.array(z.string())).optional(),
  commit: CommitZ,
  ancestry: z.record(z.string(), z.number().int().min(1)),
  /** 1 + the highest parent generation; orders candidates in criss-cross histories. */
  generation: z.number().int().min(1),
});
export type Manifest = z.infer<typeof ManifestZ>;

/** Does the snapshot with `ancestry` contain the manifest `ref`? */
export function contains(ancestry: Record<string, number>, ref: ManifestRef): boolean {
  return (ancestry[ref.lineage] ?? 0) >= ref.version;
}

export function mergeAncestry(...vectors: Record<string, number>[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of vectors) for (const [l, n] of Object.entries(v)) out[l] = Math.max(out[l] ?? 0, n);
  return out;
}

export function refOf(m: Manifest): ManifestRef {
  return { lineage: m.lineage, version: m.version };
}

export function sameRef(a: ManifestRef, b: ManifestRef): boolean {
  return a.lineage === b.lineage && a.version === b.version;
}
