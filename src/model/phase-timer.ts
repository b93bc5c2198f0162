/**
 * Disjoint phase timers: exactly one phase is current at a time, so the
 * phases add up to the elapsed time and never double count.
 */
export const MERGE_PHASES = ['resolve', 'base', 'prepare', 'validate', 'publish', 'cleanup'] as const;
export type MergePhase = (typeof MERGE_PHASES)[number];

/** Told of each phase as it starts, and of the stop (undefined): a tracer opens a span per phase. */
export type PhaseObserver<P extends string> = (phase: P | undefined) => void;

export class PhaseTimer<P extends string> {
  private current: P | undefined;
  private since = 0;
  readonly totals: Record<string, number> = {};

  constructor(
    phases: readonly P[],
    private readonly observe?: PhaseObserver<P>,
  ) {
    for (const p of phases) this.totals[p] = 0;
  }

  enter(phase: P): void {
    this.observe?.(phase);
    const now = performance.now();
    if (this.current !== undefined) this.totals[this.current] = (this.totals[this.current] ?? 0) + (now - this.since);
    this.current = phase;
    this.since = now;
  }

  stop(): Record<P, number> {
    this.observe?.(undefined);
    const now = performance.now();
    if (this.current !== undefined) this.totals[this.current] = (this.totals[this.current] ?? 0) + (now - this.since);
    this.current = undefined;
    return Object.fromEntries(Object.entries(this.totals).map(([k, v]) => [k, Math.round(v * 100) / 100])) as Record<P, number>;
  }
}
