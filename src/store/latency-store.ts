import { abortableSleep } from './abortable-sleep.js';
import type { ObjectStore } from './object-store.js';
import { StoreWrapper, type CallContext } from './store-wrapper.js';

/**
 * Adds a fixed delay before every call, to model a remote store's round trip
 * in benchmarks (the reference figures use 17 ms). The delay honours the
 * call's abort signal, as a real request in flight would.
 */
export class LatencyStore extends StoreWrapper {
  constructor(
    inner: ObjectStore,
    readonly delayMs: number,
  ) {
    super(inner);
  }

  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    if (this.delayMs > 0) await abortableSleep(this.delayMs, ctx.signal);
    return call();
  }
}
