import type { ObjectStore, StoreOp } from './object-store.js';
import { StoreWrapper, type CallContext } from './store-wrapper.js';

/**
 * Reports every call's latency and outcome to `observe` (the metrics'
 * store-call histogram), so the store layer knows nothing of metrics.
 */
export class ObservedStore extends StoreWrapper {
  constructor(
    inner: ObjectStore,
    private readonly observe: (op: StoreOp, seconds: number, ok: boolean) => void,
  ) {
    super(inner);
  }

  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    let ok = false;
    try {
      const result = await call();
      ok = true;
      return result;
    } finally {
      this.observe(ctx.op, (performance.now() - started) / 1000, ok);
    }
  }
}
