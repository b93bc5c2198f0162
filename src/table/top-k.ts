/**
 * The best k of a stream under a total order, kept in a bounded binary heap
 * whose root is the worst kept: each offer costs O(log k), and what is not
 * among the best k so far is dropped at once. A search ranks thousands of
 * candidates and answers ten; sorting them all cost more than scoring them.
 * Pure: no I/O.
 */
export class TopK<T> {
  private readonly heap: T[] = [];

  /** `before(a, b)`: a ranks ahead of b. */
  constructor(
    private readonly k: number,
    private readonly before: (a: T, b: T) => boolean,
  ) {}

  /** Whether `x` would be kept: fewer than k are held, or it ranks ahead of the worst held. */
  wants(x: T): boolean {
    return this.heap.length < this.k || this.before(x, this.heap[0] as T);
  }

  /** The worst kept once k are kept (what a candidate must beat), else undefined. */
  bar(): T | undefined {
    return this.heap.length < this.k ? undefined : this.heap[0];
  }

  offer(x: T): void {
    if (this.k <= 0) return;
    const h = this.heap;
    if (h.length < this.k) {
      h.push(x);
      this.up(h.length - 1);
    } else if (this.before(x, h[0] as T)) {
      h[0] = x;
      this.down(0);
    }
  }

  /** What is kept, best first. */
  sorted(): T[] {
    return [...this.heap].sort((a, b) => (this.before(a, b) ? -1 : this.before(b, a) ? 1 : 0));
  }

  // The root is the worst: a parent never ranks ahead of its children.
  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(h[p] as T, h[i] as T)) return;
      [h[p], h[i]] = [h[i] as T, h[p] as T];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let worst = i;
      if (l < h.length && this.before(h[worst] as T, h[l] as T)) worst = l;
      if (r < h.length && this.before(h[worst] as T, h[r] as T)) worst = r;
      if (worst === i) return;
      [h[worst], h[i]] = [h[i] as T, h[worst] as T];
      i = worst;
    }
  }
}
