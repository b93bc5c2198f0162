/**
 * A cursor over each key's newest entry in a k-way merge of runs, in key
 * order, without decoding rows.
 *
 * It walks `mergeSpans`' batches of spans: a step within a batch moves a
 * position and returns nothing to wait for, and only a step past the batch
 * returns a promise (the next batch, which may read runs). A walk of n keys
 * so waits about n / 1,024 times, where an async generator yielding each key
 * cost a promise, a result object and a microtask per key. A caller decodes
 * the rows it needs with `data.rowAt(pos)` before it steps on.
 */
import type { RunData } from './run.js';
import { mergeSpans, type MergeArgs, type MergeSpan } from './merge-walk.js';

export class HeadCursor {
  /** The current entry's decoded run and position in it (while not `done`). */
  data!: RunData;
  pos = 0;
  done = false;
  private batch: MergeSpan[] = [];
  private span = 0;
  private end = 0;

  private constructor(private readonly spans: AsyncIterator<MergeSpan[]>) {}

  static async open(a: MergeArgs): Promise<HeadCursor> {
    const c = new HeadCursor(mergeSpans(a)[Symbol.asyncIterator]());
    await c.nextBatch();
    return c;
  }

  get key(): string {
    return this.data.keys[this.pos] as string;
  }

  /** To the next key's entry: undefined when that was synchronous, else a promise to await first. */
  step(): Promise<void> | undefined {
    if (++this.pos < this.end) return undefined;
    if (++this.span < this.batch.length) {
      this.enter();
      return undefined;
    }
    return this.nextBatch();
  }

  private enter(): void {
    const s = this.batch[this.span] as MergeSpan;
    this.data = s.data;
    this.pos = s.from;
    this.end = s.to;
  }

  private async nextBatch(): Promise<void> {
    for (;;) {
      const r = await this.spans.next();
      if (r.done === true) {
        this.done = true;
        return;
      }
      this.batch = r.value.filter((s) => s.to > s.from);
      this.span = 0;
      if (this.batch.length > 0) return this.enter();
    }
  }
}
