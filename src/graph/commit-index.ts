/**
 * The commit index: for each commit id, the manifest (lineage and version)
 * that holds it, written create-only beside the commit's publication, so a
 * commit is found by id in one read whatever branch it was made on.
 */
import { z } from 'zod';
import { BranchgraphError, isBranchgraphError } from '../model/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { keys } from './keys.js';
import type { ManifestRef } from './manifest.js';

const CommitIndexZ = z.object({ lineage: z.string(), version: z.number().int().min(1) });

export class CommitIndex {
  constructor(private readonly store: ObjectStore) {}

  async write(commitId: string, ref: ManifestRef, signal?: AbortSignal): Promise<void> {
    await this.store.putIfAbsent(keys.commit(commitId), encodeJson(ref), { signal });
  }

  /** The manifest holding commit `commitId`; `not_found` when no commit has that id. */
  async ref(commitId: string, signal?: AbortSignal): Promise<ManifestRef> {
    if (!/^[0-9A-HJKMNP-TV-Z]{26}$/.test(commitId)) {
      throw new BranchgraphError('invalid_input', `${JSON.stringify(commitId)} is not a commit id`, {
        issues: [{ path: 'commit', message: 'expected a 26-character ULID' }],
      });
    }
    try {
      return decodeJson(CommitIndexZ, await this.store.get(keys.commit(commitId), { signal }), keys.commit(commitId));
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found'))
        throw new BranchgraphError('not_found', `commit ${commitId} does not exist`, { details: { commit: commitId } });
      throw e;
    }
  }
}
