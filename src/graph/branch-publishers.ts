/**
 * Branch publishers: which server publishes a branch's merges for the
 * other servers of the graph (service/merge-forwarding.ts).
 *
 * Merges into one branch from one process publish in batches
 * (publication-lanes.ts); merges into it from several processes race for
 * each version at the store instead, and a batch that loses plans again. So
 * a server that merges into a branch records itself as the branch's
 * publisher, `publishers/<branch>.json`: its writer (id and incarnation,
 * writer-lease.ts) and the URL that reaches its REST API. Another server
 * forwards its merges into the branch there, and they join that process's
 * lanes.
 *
 * The record is a hint, never a lock: every publication is still a
 * create-only write, so two servers that both believe they publish a
 * branch (a record read before it changed) are as safe as two servers
 * racing today; they only race. A branch's first claim is create-only, so
 * of two servers claiming it at once one wins and the other forwards; a
 * claim over a process that is gone overwrites the record.
 */
import { z } from 'zod';
import { isBranchgraphError } from '../model/errors.js';
import type { ObjectStore } from '../store/object-store.js';
import { decodeJson, encodeJson } from '../store/stored-json.js';
import { keys } from './keys.js';

const PublisherZ = z.object({
  format: z.literal(1),
  branch: z.string(),
  writer: z.object({ id: z.string(), incarnation: z.string() }),
  url: z.string().url(),
});

/** A branch's publisher as its record names it. */
export type BranchPublisher = Omit<z.infer<typeof PublisherZ>, 'format'>;

export class BranchPublishers {
  constructor(private readonly store: ObjectStore) {}

  /** The branch's recorded publisher; none when there is no record, or one this version cannot read. */
  async read(branch: string, signal?: AbortSignal): Promise<BranchPublisher | undefined> {
    const key = keys.branchPublisher(branch);
    try {
      const { format: _f, ...p } = decodeJson(PublisherZ, await this.store.get(key, { signal }), key);
      return p.branch === branch ? p : undefined;
    } catch (e) {
      if (isBranchgraphError(e, 'object_not_found') || isBranchgraphError(e, 'corrupt_object')) return undefined;
      throw e;
    }
  }

  /**
   * Record `p` as the branch's publisher: only if the branch has no record (create-only, so of two
   * servers claiming a branch at once exactly one does), or over the record there (`over`, when it
   * names a process that is gone). False when another claim got there first.
   */
  async claim(p: BranchPublisher, o: { over: boolean; signal?: AbortSignal | undefined }): Promise<boolean> {
    const key = keys.branchPublisher(p.branch);
    const bytes = encodeJson({ format: 1, ...p });
    if (o.over) {
      await this.store.putOverwrite(key, bytes, { signal: o.signal });
      return true;
    }
    try {
      await this.store.putIfAbsent(key, bytes, { signal: o.signal });
      return true;
    } catch (e) {
      if (isBranchgraphError(e, 'object_exists')) return false;
      throw e;
    }
  }
}
