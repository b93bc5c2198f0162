/**
 * A store that answers its calls in waves, to count a piece of work's
 * dependent round trips without a clock: calls are held until the engine
 * has gone quiet (nothing but held calls left to wait for), then all of
 * them are answered at once. Each release is one round trip; calls made
 * only after an answer are the next wave. Meant for small graphs on a
 * memory store, where everything between two store calls runs on the
 * event loop.
 */
import type { ObjectStore } from '../../src/store/object-store.js';
import { StoreWrapper, type CallContext } from '../../src/store/store-wrapper.js';

/** Turns of the event loop (timers and immediates both) with no new call before the engine counts as quiet. */
const QUIET_TURNS = 5;

const turn = (): Promise<void> => new Promise((r) => setTimeout(() => setImmediate(r), 0));

interface Held {
  ctx: CallContext;
  answer: () => void;
}

export class WaveStore extends StoreWrapper {
  private held: Held[] = [];
  /** Calls answered only in a wave that has nothing else to answer (see `waves`). */
  private last: ((ctx: CallContext) => boolean) | undefined;
  /** Whether calls are held; off, they pass straight through. */
  private holding = false;

  /** `quietTurns`: turns of the loop with no new call before the engine counts as quiet (fewer: faster, waves less exact). */
  constructor(
    inner: ObjectStore,
    private readonly quietTurns = QUIET_TURNS,
  ) {
    super(inner);
  }

  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    if (this.holding) await new Promise<void>((answer) => this.held.push({ ctx, answer }));
    return call();
  }

  /**
   * Run `work` with its calls answered in waves: its result, and how many waves it took. Calls
   * `last` picks are held while any other call waits (as a slow store's would be), so the work
   * goes as far as it can without them first.
   */
  async waves<T>(work: () => Promise<T>, opts: { last?: (ctx: CallContext) => boolean } = {}): Promise<{ value: T; waves: number }> {
    this.holding = true;
    this.last = opts.last;
    let settled: { value: T } | { error: unknown } | undefined;
    void work().then(
      (value) => (settled = { value }),
      (error: unknown) => (settled = { error }),
    );
    let waves = 0;
    try {
      while (settled === undefined) {
        let seen = -1;
        for (let quiet = 0; quiet < this.quietTurns; quiet = this.held.length === seen ? quiet + 1 : 0) {
          seen = this.held.length;
          await turn();
        }
        // Once the work is done, what it left running (best-effort writes) is not its round trip.
        if (settled !== undefined || this.held.length === 0) continue;
        waves++;
        this.release();
      }
    } finally {
      this.holding = false;
      this.last = undefined;
      this.release();
    }
    const done = settled as { value: T } | { error: unknown };
    if ('error' in done) throw done.error;
    return { value: done.value, waves };
  }

  private release(): void {
    const last = this.last;
    const now = last === undefined || this.held.every((h) => last(h.ctx)) ? this.held : this.held.filter((h) => !last(h.ctx));
    this.held = this.held.filter((h) => !now.includes(h));
    for (const h of now) h.answer();
  }
}
