/**
 * Dependent round trips: how many store calls a piece of work made one
 * after another. Calls that overlap count once; a call that starts only
 * after another ended adds one. Pure: it reads the calls' start and end
 * times, as a counting store records them.
 */
/**
 * The longest chain of spans, each starting no earlier than the one before it ended: how many
 * round trips one after another the calls took, whatever ran beside them. Where every call costs
 * the same latency, the elapsed time is this many of it.
 */
export function longestChain(spans: readonly (readonly [number, number])[]): number {
  // Ties broken so that a span of no length comes before one it may precede (sorts are stable).
  const byStart = [...spans].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const chain = new Map<readonly [number, number], number>();
  const byEnd = [...byStart].sort((a, b) => a[1] - b[1]);
  let best = 0;
  let ended = 0;
  let longest = 0;
  for (const span of byStart) {
    // Every span ending by this one's start started before it, so its chain is known.
    while (ended < byEnd.length && (byEnd[ended] as readonly [number, number])[1] <= span[0]) {
      const known = chain.get(byEnd[ended] as readonly [number, number]);
      // A span of no length that starts with this one is not walked yet: it is taken up after it.
      if (known === undefined) break;
      best = Math.max(best, known);
      ended++;
    }
    chain.set(span, best + 1);
    longest = Math.max(longest, best + 1);
  }
  return longest;
}
