import { publishedCommit, type WriteResultDto } from '../../dtos.js';
import type { ChangeResult } from '../../../graph/change.js';
import type { WriteSummary } from '../../../graph/write-batch.js';

/** What a write or load did, as clients see it. */
export function writeResult(r: ChangeResult<WriteSummary>): WriteResultDto {
  const s = r.result;
  return { commit: publishedCommit(r), inserted: s.inserted, updated: s.updated, deleted: s.deleted, cascaded: s.cascaded };
}
