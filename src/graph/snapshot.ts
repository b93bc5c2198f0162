/**
 * What a read sees: a snapshot of one published manifest (with its
 * branch's pending WAL rows on top, when read from a branch), and the refs
 * that name one.
 */
import { findType, type Schema } from '../model/schema.js';
import type { TableVersion } from '../table/table-version.js';
import { viewTables, type PendingWal } from '../pending/pending-wal.js';
import { sameRef, type Manifest, type ManifestRef } from './manifest.js';
import type { RefPath } from '../model/ref-grammar.js';
import type { BranchRecord } from './branch-record.js';

export interface Snapshot {
  ref: ManifestRef;
  manifest: Manifest;
  schema: Schema;
  /** What readers see: the manifest's tables with pending WAL generations on top. */
  tables: Record<string, TableVersion>;
  /** Pending WAL generations (none for a commit snapshot: commits hold only folded rows). */
  pending: PendingWal;
  /** The branch the snapshot was resolved from, when it was. */
  branch?: BranchRecord;
  /** The graph clock when the snapshot was read: a publication planned on it must land soon after (see MAX_PUBLICATION_MS). */
  readAt?: number;
}

/** The tables a snapshot shows: the manifest's with the pending runs on top, those its schema still has. */
export function shownTables(manifest: Manifest, schema: Schema, pending: PendingWal): Record<string, TableVersion> {
  return Object.fromEntries(Object.entries(viewTables(manifest, pending)).filter(([t]) => findType(schema, t) !== undefined));
}

/** The same head: the same manifest, under the same branch record (protection and lineage as they were). */
export function sameHead(stored: Snapshot, known: Snapshot): boolean {
  return (
    sameRef(stored.ref, known.ref) &&
    stored.branch?.seq === known.branch?.seq &&
    stored.branch?.lineage === known.branch?.lineage &&
    stored.pending.generations.length === 0
  );
}

/**
 * What a read names: a branch (its head, pending WAL rows included), a commit, a tag (the commit
 * it names), or a path of the ref grammar (model/ref-grammar.ts: `main~2`, `main@{time}`, a
 * commit-id prefix), which names a commit.
 */
export type Ref = PlainRef | { path: RefPath };

/** A ref as an object (REST bodies give them so): a branch, a commit or a tag. */
export type PlainRef = { branch: string } | { commit: string } | { tag: string };

/**
 * How a snapshot treats its branch's pending WAL generations: `view`
 * overlays them, `listed` only lists them (in order, rows not decoded: for
 * catch-up, which decodes each batch as it folds it; such a snapshot is not
 * read through), `none` ignores them.
 */
export type PendingMode = 'view' | 'listed' | 'none';
