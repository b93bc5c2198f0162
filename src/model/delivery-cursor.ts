/**
 * A hook's delivery cursor: the highest event sequence number up to which
 * every event offered to the hook was settled (delivered or kept as a dead
 * letter). Events are offered in any order and settle in any order; the
 * cursor never passes one still outstanding. Pure: the dispatcher stores
 * the cursor (graph/hooks.ts) and, after a crash, offers again every event
 * past it, so a delivery is made at least once.
 */
export class DeliveryCursor {
  private readonly outstanding = new Set<number>();
  private highest: number;

  constructor(start: number) {
    this.highest = start;
  }

  offered(seq: number): void {
    this.outstanding.add(seq);
    this.highest = Math.max(this.highest, seq);
  }

  settled(seq: number): void {
    this.outstanding.delete(seq);
  }

  /** Every offered event at or below this has settled. */
  get position(): number {
    let low = this.highest;
    for (const seq of this.outstanding) low = Math.min(low, seq - 1);
    return low;
  }
}
