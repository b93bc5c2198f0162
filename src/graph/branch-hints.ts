/**
 * Head hints (see repository.ts) are written best-effort beside a
 * publication: for other processes' next cold read, never for the change
 * that wrote them. This keeps the writes in flight, shared by every store
 * view of one graph, so closing the graph can wait for them.
 */
import { refOf, type Manifest } from './manifest.js';
import type { BranchRecord, Repository } from './repository.js';

export class BranchHints {
  private readonly inFlight = new Set<Promise<void>>();

  /** Start a hint for `rec` at `head` through `repo` (the caller's store view) and leave it to finish. */
  write(repo: Repository, rec: BranchRecord, head: Manifest): void {
    const w = repo.writeBranchHint(rec, refOf(head), head.schemaDoc === undefined ? head.schema : undefined);
    this.inFlight.add(w);
    void w.finally(() => this.inFlight.delete(w));
  }

  /** Wait until every hint started has landed or failed. */
  async settle(): Promise<void> {
    await Promise.allSettled([...this.inFlight]);
  }
}
