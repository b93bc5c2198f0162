/**
 * This server's delivery cursors, one per hook (model/delivery-cursor.ts),
 * kept in the store (graph/hooks.ts) so a restarted server knows which of
 * its events each hook may still be owed.
 *
 * A hook's cursor is stored before its first delivery from this server
 * (so a crash right after that first offer is not taken for "nothing was
 * owed"), then written behind the deliveries, at most every SAVE_EVERY_MS
 * per hook and once more when the server stops. A crash loses at most the
 * last interval's progress, and those events are offered again: a
 * delivery is made at least once, and its id lets a receiver drop a
 * repeat.
 */
import { DeliveryCursor } from '../model/delivery-cursor.js';
import type { HookStore } from '../graph/hooks.js';

const SAVE_EVERY_MS = 500;

interface Kept {
  cursor: DeliveryCursor;
  saved: number;
  timer?: NodeJS.Timeout | undefined;
}

export class DeliveryCursors {
  private readonly kept = new Map<string, Promise<Kept>>();

  constructor(
    private readonly hooks: Pick<HookStore, 'cursor' | 'saveCursor'>,
    readonly shard: string,
  ) {}

  /** Where `hook`'s deliveries from this server stood when it last stopped; undefined before its first. */
  stored(hook: string, signal?: AbortSignal): Promise<number | undefined> {
    return this.hooks.cursor(hook, this.shard, signal);
  }

  /** `seq` is being delivered to `hook`. */
  async offered(hook: string, seq: number): Promise<void> {
    let kept = this.kept.get(hook);
    if (kept === undefined) {
      kept = this.load(hook, seq);
      this.kept.set(hook, kept);
      kept.catch(() => this.kept.delete(hook));
    }
    (await kept).cursor.offered(seq);
  }

  /** `seq` was delivered to `hook` or kept as a dead letter. */
  settled(hook: string, seq: number): void {
    void this.kept.get(hook)?.then((k) => {
      k.cursor.settled(seq);
      k.timer ??= setTimeout(() => {
        k.timer = undefined;
        void this.save(hook, k);
      }, SAVE_EVERY_MS).unref();
    });
  }

  /** Write every cursor that moved (the server is stopping). */
  async flush(): Promise<void> {
    await Promise.all(
      [...this.kept].map(async ([hook, p]) => {
        const k = await p.catch(() => undefined);
        if (k === undefined) return;
        clearTimeout(k.timer);
        k.timer = undefined;
        await this.save(hook, k);
      }),
    );
  }

  private async load(hook: string, first: number): Promise<Kept> {
    const stored = await this.hooks.cursor(hook, this.shard);
    if (stored !== undefined) return { cursor: new DeliveryCursor(stored), saved: stored };
    await this.hooks.saveCursor(hook, this.shard, first - 1);
    return { cursor: new DeliveryCursor(first - 1), saved: first - 1 };
  }

  private async save(hook: string, k: Kept): Promise<void> {
    const at = k.cursor.position;
    if (at <= k.saved) return;
    await this.hooks.saveCursor(hook, this.shard, at).then(
      () => {
        k.saved = Math.max(k.saved, at);
      },
      () => undefined,
    );
  }
}
