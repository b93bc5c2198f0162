/**
 * Which runs of a table to compact, so the number of runs stays logarithmic
 * in the number of writes while each row is rewritten only a logarithmic
 * number of times (size-tiered compaction).
 *
 * A run's level is floor(log_F(rows)), F the fanout. Runs are compacted as
 * a suffix (the newest runs, so the result keeps its place in the order and
 * reads the same): whenever the newest runs at or below the newest run's
 * level number F or more, they become one run a level up. Repeating that
 * until it no longer applies leaves fewer than F runs per level, so at most
 * about F × log_F(rows) runs; the repetitions are folded into one merge of
 * the longest suffix they reach. Pure: decided from run sizes alone.
 */
export const COMPACTION_FANOUT = 4;

const levelOf = (rows: number, fanout: number): number => Math.floor(Math.log(Math.max(1, rows)) / Math.log(fanout));

/** The index where the suffix to compact starts, or undefined when none is due. */
export function compactionStart(runRows: readonly number[], fanout = COMPACTION_FANOUT): number | undefined {
  const rows = [...runRows];
  let start: number | undefined;
  for (;;) {
    const newest = rows.length - 1;
    if (newest < 0) return start;
    const level = levelOf(rows[newest] as number, fanout);
    let i = newest;
    while (i > 0 && levelOf(rows[i - 1] as number, fanout) <= level) i--;
    if (rows.length - i < fanout) return start;
    // Everything from i merges into one run; the next round sees that run in their place.
    const merged = rows.splice(i).reduce((a, b) => a + b, 0);
    rows.push(merged);
    start = i;
  }
}
