/**
 * A hosted graph's store, checked against the graph's registry entry after
 * every publication.
 *
 * A process that has a hosted graph open keeps serving it from caches, and
 * another process may delete the graph (and create a new one of the same
 * name) at any moment. Every key of a graph lives under its incarnation's
 * prefix, so a late write from a process that missed the deletion lands
 * where no live graph reads. And every publication (a create-only write
 * under `PUBLICATION_PREFIXES`, or a tag deletion) is followed by one read
 * of the registry entry before it is acknowledged: if the entry is gone or
 * names another incarnation, the call fails with `not_found` instead. The
 * read comes after the write, so a publication the deleter could have
 * missed is never acknowledged, and one that was acknowledged happened
 * before the deletion (which then removes it with the rest).
 */
import { PUBLICATION_PREFIXES } from '../graph/keys.js';
import { StoreWrapper, type CallContext } from '../store/store-wrapper.js';
import type { ObjectStore } from '../store/object-store.js';

const isPublication = (key: string): boolean => PUBLICATION_PREFIXES.some((p) => key.startsWith(p));

export class LiveGraphStore extends StoreWrapper {
  constructor(
    inner: ObjectStore,
    /** Throws `not_found` when the graph this store belongs to no longer exists. */
    private readonly assertLive: (signal?: AbortSignal) => Promise<void>,
  ) {
    super(inner);
  }

  protected async around<T>(ctx: CallContext, call: () => Promise<T>): Promise<T> {
    const result = await call();
    if ((ctx.op === 'putIfAbsent' || ctx.op === 'deleteMany') && isPublication(ctx.key)) await this.assertLive(ctx.signal);
    return result;
  }
}
