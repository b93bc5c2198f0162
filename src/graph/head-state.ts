/**
 * A branch head's content state: what a reader of the branch sees, named
 * apart from how it is stored or when its rows entered history.
 *
 * A head is a commit plus the branch's pending WAL rows (acknowledged,
 * read from the WAL until a catch-up folds them). Three things move a
 * head without changing what it reads: a compaction re-lays the commit
 * (manifest.ts `layout`, same commit id), and a catch-up folds rows that
 * were already read into a commit that `continues` the one before. So the
 * state is the content commit (the nearest commit that is neither) and,
 * per WAL shard, the highest generation read (folded or pending). A
 * catch-up advances the watermarks exactly to what was pending, so the
 * state before and after it is the same; any write, merge or new pending
 * generation changes it.
 *
 * Reviews pin this state (model/merge-request.ts), so maintenance never
 * makes an approval stale, and a row ingested after an approval always
 * does.
 */
import { canonicalJson, contentHash } from '../model/canonical.js';
import { watermarksFor } from '../pending/pending-wal.js';
import type { Manifest } from './manifest.js';
import type { Snapshot } from './snapshot.js';

/** The commit whose content `m` holds apart from folded WAL rows: its own, or for a catch-up the one it continues. */
export function contentCommitOf(m: Manifest): string {
  return m.commit.kind === 'catchup' ? (m.commit.continues ?? m.commit.id) : m.commit.id;
}

/** The head's content state, hashed: equal exactly when the branch reads the same through the same history. */
export function headState(s: Snapshot): string {
  const marks = { ...watermarksFor(s.manifest, s.branch?.lineage ?? s.manifest.lineage), ...s.pending.seen };
  // A shard registered but never read from (watermark 0) reads like no shard.
  const seen = Object.fromEntries(Object.entries(marks).filter(([, n]) => n > 0));
  return contentHash(canonicalJson({ commit: contentCommitOf(s.manifest), seen }));
}
