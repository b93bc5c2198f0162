/**
 * Head hints (see branch-records.ts) are written best-effort beside a
 * publication: for other processes' next cold read, never for the change
 * that wrote them. This keeps the writes in flight, shared by every store
 * view of one graph, so closing the graph can wait for them.
 *
 * One branch's hints are written one at a time, newest last. A hint is an
 * overwrite, so two in flight at once may land in either order: a branch
 * created and written at once could be left hinting at its creation, and
 * every cold reader would then pay a round trip per version it is behind.
 * While one is in flight only the newest hint waiting after it is kept;
 * those in between would be overwritten anyway.
 */
import type { Manifest } from './manifest.js';
import type { BranchRecord } from './branch-record.js';
import type { Repository } from './repository.js';
import { nextTurn } from '../model/turns.js';

interface HintWrite {
  repo: Repository;
  rec: BranchRecord;
  head: Manifest;
}

export class BranchHints {
  private readonly inFlight = new Set<Promise<void>>();
  /** Per branch name, the hint waiting for the one in flight to land (undefined: none waiting). */
  private readonly queued = new Map<string, HintWrite | undefined>();

  /** Start a hint for `rec` at `head` through `repo` (the caller's store view) and leave it to finish. */
  write(repo: Repository, rec: BranchRecord, head: Manifest): void {
    const name = rec.name;
    if (this.queued.has(name)) {
      this.queued.set(name, { repo, rec, head });
      return;
    }
    this.queued.set(name, undefined);
    const run = async (h: HintWrite): Promise<void> => {
      try {
        // From the next turn of the loop, as an event's mark (event-log.ts `confirm`): the change's
        // caller goes first. A newer hint given meanwhile overtakes this one before it starts.
        await nextTurn();
        for (let next: HintWrite | undefined = this.queued.get(name) ?? h; next !== undefined; next = this.queued.get(name)) {
          this.queued.set(name, undefined);
          await next.repo.records.writeHint(next.rec, next.head);
        }
      } finally {
        this.queued.delete(name);
      }
    };
    // Best effort: a hint that cannot be written is no hint, never an unhandled rejection.
    const w = run({ repo, rec, head }).catch(() => undefined);
    this.inFlight.add(w);
    void w.finally(() => this.inFlight.delete(w));
  }

  /** Wait until every hint started has landed or failed. */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }
}
