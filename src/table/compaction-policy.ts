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

/**
 * Inline compaction, the bound that does not wait for background compaction:
 * a write that lands while the policy's due stretch has piled up to
 * INLINE_MIN_RUNS runs or more folds that stretch into one run itself,
 * beside its own run. Background compaction starts at F runs; one run more
 * means it is behind (a delay, a busy branch, writes from processes that
 * run none), and the write, which adds no round trip by folding, does it.
 * (At 2F the worst scan after writes still read 1.6× a fresh one on the
 * local directory; at F + 1, 1.24-1.35.) Only the newest runs that add up
 * to INLINE_MAX_ROWS rows are taken, so a write never rewrites more than
 * that; tiers above it are background compaction's. With no background
 * compaction at all, each level keeps fewer than F runs up to that size and
 * the due stretch fewer than F + 1: about (F + 1) + (F - 1) ×
 * log_F(INLINE_MAX_ROWS) runs, whatever the number of writes below
 * INLINE_MAX_ROWS × F.
 */
export const INLINE_MIN_RUNS = COMPACTION_FANOUT + 1;
export const INLINE_MAX_ROWS = 4096;

/** When a write compacts inline: a due stretch of at least `minRuns` runs, of which it takes at most `maxRows` rows. */
export interface InlineBound {
  minRuns: number;
  maxRows: number;
}

export const INLINE_BOUND: InlineBound = { minRuns: INLINE_MIN_RUNS, maxRows: INLINE_MAX_ROWS };

/** Where the stretch a write folds inline starts in `runRows` (oldest first), or undefined when none is due. */
export function inlineCompactionStart(runRows: readonly number[], bound: InlineBound = INLINE_BOUND): number | undefined {
  const due = compactionStart(runRows);
  if (due === undefined) return undefined;
  let start = runRows.length;
  let rows = 0;
  while (start > due && rows + (runRows[start - 1] as number) <= bound.maxRows) rows += runRows[--start] as number;
  return runRows.length - start >= bound.minRuns ? start : undefined;
}
